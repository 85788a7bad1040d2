// RUN/train.yaml and the keys a resumed run may change (see run_config.h).
#include "engram/train/run_config.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string_view>

#include "engram/core/error.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "engram/train/distributed.h"

namespace engram::train {

namespace fs = std::filesystem;

namespace {

bool resumable_key(const std::string& path) {
  for (std::string_view k : kResumableKeys)
    if (path == k || (path.size() > k.size() && path.compare(0, k.size(), k) == 0 && path[k.size()] == '.'))
      return true;
  return false;
}

std::string shown(const YAML::Node& n) {
  YAML::Emitter e;
  e << YAML::Flow << n;
  std::string s = e.c_str();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The first key under `path` whose value differs between `was` and `now` (maps compared key by
// key, other nodes by their YAML text), skipping resumable keys and keys only one side holds.
std::optional<std::string> first_difference(const YAML::Node& was, const YAML::Node& now, const std::string& path,
                                            std::string* before, std::string* after) {
  if (resumable_key(path)) return std::nullopt;
  if (was.IsMap() && now.IsMap()) {
    for (const auto& kv : now) {
      const std::string key = kv.first.as<std::string>();
      const YAML::Node old = was[key];
      if (!old) continue;
      if (auto d = first_difference(old, kv.second, path.empty() ? key : path + "." + key, before, after)) return d;
    }
    return std::nullopt;
  }
  if (YAML::Dump(was) == YAML::Dump(now)) return std::nullopt;
  *before = shown(was);
  *after = shown(now);
  return path;
}

}  // namespace

bool has_resumable_checkpoint(const fs::path& run_dir) {
  std::error_code ec;
  if (fs::is_directory(run_dir / "last", ec)) return true;
  for (const auto& a : fs::directory_iterator(run_dir, ec)) {
    if (!a.is_directory(ec) || a.path().filename() == "last") continue;
    if (fs::is_directory(a.path() / "last", ec)) return true;
    for (const auto& b : fs::directory_iterator(a.path(), ec))
      if (b.is_directory(ec) && fs::is_directory(b.path() / "last", ec)) return true;
  }
  return false;
}

void write_run_config(const fs::path& run_dir, const std::string& yaml) {
  const fs::path saved = run_dir / "train.yaml";
  if (fs::exists(saved) && has_resumable_checkpoint(run_dir)) {
    const YAML::Node was = io::load_yaml_file(saved.string());
    const YAML::Node now = YAML::Load(yaml);
    std::string before, after;
    if (auto key = first_difference(was, now, "", &before, &after))
      ENGRAM_CHECK(false,
                   "{}: resuming with {} {} (the run has {}); a resumed run keeps its settings except train.max_steps, "
                   "max_epochs, max_minutes, patience, checkpoint_every, keep_checkpoints, max_bad_steps and distributed: "
                   "start a new run directory to change it",
                   run_dir.string(), *key, after, before);
  }
  if (world().root()) io::write_file_atomic(saved, yaml);
}

}  // namespace engram::train
