// The family table. Add a family here with one line (and its folder, configs/ and docs/).
#include "engram/models/registry.h"

#include <array>

#include "engram/io/checkpoint.h"

namespace engram::models {

// Each family's entry, defined in models/<family>/family.cc.
const Family& seq2seq_family();
const Family& memn2n_family();
const Family& ntm_family();
const Family& pointer_family();
const Family& tree_family();
const Family& speech_family();
const Family& pointer_generator_family();

namespace {

namespace fs = std::filesystem;

const std::array<const Family*, 7>& table() {
  static const std::array<const Family*, 7> t = {&seq2seq_family(), &memn2n_family(), &ntm_family(), &tree_family(),
                                                 &pointer_family(), &speech_family(), &pointer_generator_family()};
  return t;
}

std::string known_names() {
  std::string known;
  for (const Family* f : table()) known += (known.empty() ? "" : ", ") + std::string(f->name);
  return known;
}

}  // namespace

std::span<const Family* const> families() { return table(); }

const Family& family(std::string_view name) {
  for (const Family* f : table())
    if (name == f->name) return *f;
  throw Error(fmt::format("unknown model family '{}' (known: {})", name, known_names()));
}

RunConfigFile read_run_config(const std::string& file_or_run_dir) {
  RunConfigFile r;
  r.source = file_or_run_dir;
  if (fs::is_directory(r.source)) {
    r.run_dir = r.source;
    r.source = (fs::path(r.source) / "train.yaml").string();
    ENGRAM_CHECK(fs::exists(r.source), "{}: a run directory to resume needs its train.yaml", file_or_run_dir);
  }
  r.node = io::load_yaml_file(r.source);
  ENGRAM_CHECK(r.node.IsMap() && r.node["model"] && r.node["model"].IsScalar(),
               "{}: a run config starts with 'model: <family>' (one of {}); configs written before the one "
               "config shape (model: {{...}} / trainer:) must be rewritten: see docs/families.md",
               r.source, known_names());
  r.family = &family(r.node["model"].as<std::string>());
  return r;
}

fs::path resolve_model_dir(const fs::path& dir) {
  for (const fs::path& p : {dir, dir / "best", dir / "last", dir / "model"})
    if (fs::exists(p / "config.yaml")) return p;
  // A checkpoint interrupted between its two renames is recovered by read_checkpoint_info.
  if (io::recover_checkpoint(dir)) return dir;
  throw Error(fmt::format("{} is neither a model directory (config.yaml) nor a run directory with best/, last/ or "
                          "model/", dir.string()));
}

std::unique_ptr<LoadedModel> load_model(const fs::path& dir) {
  const fs::path d = resolve_model_dir(dir);
  const io::CheckpointInfo info = io::read_checkpoint_info(d);
  return family(info.model_name).load(d);
}

}  // namespace engram::models
