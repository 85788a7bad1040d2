// Checkpoint directories: atomic save (temp dir + fsync + renames), recovery, checked load.
#include "engram/io/checkpoint.h"

#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include "engram/core/read_file.h"
#include "engram/io/config.h"
#include "engram/io/safetensors.h"

namespace engram::io {
namespace fs = std::filesystem;
namespace {

constexpr const char* kConfigFile = "config.yaml";
constexpr const char* kModelFile = "model.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kTrainerFile = "trainer.json";

// "runs/x/" -> "runs/x"; errors on an empty path.
fs::path normalize(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  ENGRAM_CHECK(!p.empty() && p.filename() != "." && p.filename() != "..", "bad checkpoint directory '{}'",
               dir.string());
  return p;
}

fs::path parent_of(const fs::path& dir) { return dir.has_parent_path() ? dir.parent_path() : fs::path("."); }

void write_text_synced(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ENGRAM_CHECK(fd >= 0, "{}: cannot open for writing: {}", path.string(), std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t k = ::write(fd, text.data() + done, text.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      const int err = errno;
      ::close(fd);
      throw Error(fmt::format("{}: write failed: {}", path.string(), std::strerror(err)));
    }
    done += static_cast<size_t>(k);
  }
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  ENGRAM_CHECK(synced, "{}: fsync failed: {}", path.string(), std::strerror(err));
}

// Makes renames and new entries inside `dir` durable.
void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ENGRAM_CHECK(fd >= 0, "{}: cannot open directory: {}", dir.string(), std::strerror(errno));
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  ENGRAM_CHECK(synced, "{}: fsync of directory failed: {}", dir.string(), std::strerror(err));
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  ENGRAM_CHECK(!ec, "cannot rename {} to {}: {}", from.string(), to.string(), ec.message());
}

std::string config_text(const CheckpointData& data) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "format_version" << YAML::Value << kCheckpointFormatVersion;
  out << YAML::Key << "model" << YAML::Value << data.model_name;
  out << YAML::Key << "config" << YAML::Value;
  if (data.config.IsDefined() && !data.config.IsNull())
    out << data.config;
  else
    out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
  out << YAML::EndMap;
  ENGRAM_CHECK(out.good(), "cannot write the checkpoint config: {}", out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

// Scalars as metadata strings: shortest text that reads back to the same double.
std::string scalar_text(double v) { return fmt::format("{}", v); }

double parse_scalar(const fs::path& file, const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  ENGRAM_CHECK(!text.empty() && end == text.c_str() + text.size(), "{}: metadata '{}' is not a number: '{}'",
               file.string(), key, text);
  return v;
}

// Checks that `file` holds exactly the expected tensors (names and shapes); returns each
// expected tensor's entry, in the order of `expected`.
template <class Named>
std::vector<const SafetensorsReader::Entry*> match_tensors(const SafetensorsReader& file, const std::vector<Named>& expected,
                                                           const char* owner) {
  const std::string f = file.path().string();
  std::vector<const SafetensorsReader::Entry*> entries;
  std::set<std::string> names;
  for (const Named& x : expected) {
    const SafetensorsReader::Entry* e = file.find(x.name);
    ENGRAM_CHECK(e != nullptr, "{}: missing tensor '{}' ({} expects shape {})", f, x.name, owner, x.shape);
    ENGRAM_CHECK(e->shape == x.shape, "{}: tensor '{}' has shape {} but {} expects {}", f, x.name, e->shape, owner,
                 x.shape);
    entries.push_back(e);
    names.insert(x.name);
  }
  for (const auto& e : file.tensors())
    ENGRAM_CHECK(names.count(e.name), "{}: unexpected tensor '{}' (shape {}) that {} does not have", f, e.name, e.shape,
                 owner);
  return entries;
}

struct ParamRef {
  std::string name;
  core::Shape shape;
  float* data;
};

std::vector<TensorView> param_views(const nn::ParamStore& store) {
  std::vector<TensorView> views;
  for (nn::ParamId id = 0; id < store.count(); ++id)
    views.push_back({store.name(id), store.shape(id), store.values() + store.offset(id)});
  return views;
}

std::vector<ParamRef> param_refs_of(nn::ParamStore& params) {
  std::vector<ParamRef> refs;
  for (nn::ParamId id = 0; id < params.count(); ++id) refs.push_back({params.name(id), params.shape(id), params.value(id).data});
  return refs;
}

// One tensor read into staging storage, so that a refused checkpoint changes nothing. The storage
// is not zero-filled first: the read sets every element.
struct Staged {
  std::unique_ptr<float[]> data;
  int64_t n = 0;
  void copy_to(float* out) const { std::copy_n(data.get(), n, out); }
};

// A tensor's n values read into scratch, every one checked finite (an error names the tensor).
Staged read_checked(SafetensorsReader& file, const SafetensorsReader::Entry& e, int64_t n, const std::string& name) {
  Staged scratch{std::make_unique_for_overwrite<float[]>(static_cast<size_t>(n)), n};
  file.read(e, scratch.data.get());
  const float* x = scratch.data.get();
  bool finite = true;  // |x| <= FLT_MAX is false for inf and NaN; a loop without an early exit vectorises
  for (int64_t k = 0; k < n; ++k) finite &= std::fabs(x[k]) <= std::numeric_limits<float>::max();
  if (!finite) {
    const int64_t k = std::find_if(x, x + n, [](float v) { return !std::isfinite(v); }) - x;
    throw Error(fmt::format("{}: tensor '{}' holds a non-finite value ({} at element {})", file.path().string(), name,
                            x[k], k));
  }
  return scratch;
}

}  // namespace

// ---- save

void save_checkpoint(const fs::path& target, const CheckpointData& data, const CheckpointSaveOptions& options) {
  const fs::path dir = normalize(target);
  ENGRAM_CHECK(data.params != nullptr, "save_checkpoint {}: no parameters given", dir.string());
  ENGRAM_CHECK(!data.config.IsDefined() || data.config.IsNull() || data.config.IsMap(),
               "save_checkpoint {}: the config must be a YAML map", dir.string());
  const fs::path parent = parent_of(dir);
  std::error_code ec;
  fs::create_directories(parent, ec);
  ENGRAM_CHECK(!ec, "save_checkpoint {}: cannot create {}: {}", dir.string(), parent.string(), ec.message());
  const std::string pid = std::to_string(::getpid());
  const fs::path tmp = parent / (dir.filename().string() + ".tmp-" + pid);
  const fs::path old = parent / (dir.filename().string() + ".old-" + pid);

  auto written = [&](const fs::path& file) {
    if (options.on_file_written) options.on_file_written(file);
  };
  fs::remove_all(tmp, ec);  // a leftover of a crashed process with our pid
  try {
    ENGRAM_CHECK(fs::create_directory(tmp, ec) && !ec, "save_checkpoint {}: cannot create {}: {}", dir.string(),
                 tmp.string(), ec.message());
    write_text_synced(tmp / kConfigFile, config_text(data));
    written(tmp / kConfigFile);

    write_safetensors(tmp / kModelFile, param_views(*data.params));
    written(tmp / kModelFile);

    if (data.optimizer) {
      std::vector<TensorView> state;
      for (const auto& t : data.optimizer->state_tensors()) state.push_back({t.name, t.shape, t.data});
      std::map<std::string, std::string> meta = {{"optimizer", std::string(data.optimizer->kind())}};
      for (const auto& [k, v] : data.optimizer->state_scalars()) meta[k] = scalar_text(v);
      write_safetensors(tmp / kOptimizerFile, std::move(state), meta);
      written(tmp / kOptimizerFile);
    }
    if (!data.trainer.is_null()) {
      write_text_synced(tmp / kTrainerFile, data.trainer.dump(2) + "\n");
      written(tmp / kTrainerFile);
    }
    for (const fs::path& f : data.files) {
      const std::string name = f.filename().string();
      ENGRAM_CHECK(name != kConfigFile && name != kModelFile && name != kOptimizerFile && name != kTrainerFile,
                   "save_checkpoint {}: extra file {} would replace the checkpoint's own {}", dir.string(), f.string(),
                   name);
      fs::copy_file(f, tmp / name, fs::copy_options::overwrite_existing, ec);
      ENGRAM_CHECK(!ec, "save_checkpoint {}: cannot copy {}: {}", dir.string(), f.string(), ec.message());
      written(tmp / name);
    }
    fsync_dir(tmp);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }

  // Swap into place: at every instant either dir or (after the first rename) old is complete.
  if (fs::exists(dir)) {
    fs::remove_all(old, ec);
    try {
      rename_or_throw(dir, old);
    } catch (...) {
      fs::remove_all(tmp, ec);
      throw;
    }
    try {
      rename_or_throw(tmp, dir);
    } catch (...) {
      fs::rename(old, dir, ec);  // put the previous checkpoint back
      fs::remove_all(tmp, ec);
      throw;
    }
    fsync_dir(parent);
    fs::remove_all(old, ec);
  } else {
    try {
      rename_or_throw(tmp, dir);
    } catch (...) {
      fs::remove_all(tmp, ec);
      throw;
    }
    fsync_dir(parent);
  }
}

// ---- recover / load

bool recover_checkpoint(const fs::path& target) {
  const fs::path dir = normalize(target);
  std::error_code ec;
  if (fs::exists(dir, ec)) return false;
  const fs::path parent = parent_of(dir);
  if (!fs::is_directory(parent, ec)) return false;
  const std::string prefix = dir.filename().string() + ".old-";
  fs::path newest;
  fs::file_time_type newest_time{};
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory(ec)) continue;
    const auto t = fs::last_write_time(entry.path(), ec);
    if (ec) continue;
    if (newest.empty() || t > newest_time) newest = entry.path(), newest_time = t;
  }
  if (newest.empty()) return false;
  fs::rename(newest, dir, ec);
  if (ec) return fs::exists(dir);  // someone else recovered it first
  fsync_dir(parent);
  return true;
}

int remove_checkpoint_leftovers(const fs::path& target) {
  const fs::path dir = normalize(target);
  recover_checkpoint(dir);
  std::error_code ec;
  const fs::path parent = parent_of(dir);
  if (!fs::is_directory(parent, ec)) return 0;
  const std::string tmp = dir.filename().string() + ".tmp-", old = dir.filename().string() + ".old-";
  const bool have = fs::exists(dir, ec);
  std::vector<fs::path> doomed;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(tmp, 0) == 0 || (have && name.rfind(old, 0) == 0)) doomed.push_back(entry.path());
  }
  for (const fs::path& p : doomed) fs::remove_all(p, ec);
  if (!doomed.empty()) fsync_dir(parent);
  return static_cast<int>(doomed.size());
}

std::vector<fs::path> interrupted_checkpoints(const fs::path& parent) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t cut = std::min(name.rfind(".tmp-"), name.rfind(".old-"));
    if (cut != std::string::npos && cut > 0) names.insert(name.substr(0, cut));
  }
  std::vector<fs::path> out;
  for (const std::string& n : names) out.push_back(parent / n);
  return out;
}

CheckpointInfo read_checkpoint_info(const fs::path& target) {
  const fs::path dir = normalize(target);
  recover_checkpoint(dir);
  std::error_code ec;
  ENGRAM_CHECK(fs::is_directory(dir, ec), "checkpoint directory {} does not exist", dir.string());
  const fs::path cfg = dir / kConfigFile;
  ENGRAM_CHECK(fs::exists(cfg, ec), "{}: missing (not a checkpoint directory?)", cfg.string());
  const YAML::Node root = load_yaml_file(cfg);
  ENGRAM_CHECK(root.IsMap(), "{}: expected a map with format_version, model and config", cfg.string());
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.as<std::string>() : "?";
    ENGRAM_CHECK(key == "format_version" || key == "model" || key == "config",
                 "{}: unknown top-level key '{}' (a checkpoint's config.yaml holds format_version, model and config)",
                 cfg.string(), key);
  }

  CheckpointInfo info;
  ENGRAM_CHECK(root["format_version"].IsDefined(), "{}: no format_version", cfg.string());
  info.format_version = static_cast<int>(
      detail::parse_int(root["format_version"], {"format_version", cfg.string()}, 0, 1'000'000));
  ENGRAM_CHECK(info.format_version == kCheckpointFormatVersion,
               "{}: unknown checkpoint format version {} (this build reads version {})", cfg.string(),
               info.format_version, kCheckpointFormatVersion);
  ENGRAM_CHECK(root["model"].IsDefined(), "{}: no model name", cfg.string());
  info.model_name = detail::parse_string(root["model"], {"model", cfg.string()});
  info.config = root["config"].IsDefined() ? YAML::Clone(root["config"]) : YAML::Node(YAML::NodeType::Map);
  detail::check_map(info.config, {"config", cfg.string()});

  const fs::path trainer = dir / kTrainerFile;
  if (fs::exists(trainer, ec)) {
    const std::string text = core::read_file_limited(trainer.string(), kMaxTrainerJsonBytes, "a trainer.json file");
    try {
      info.trainer = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: bad JSON: {}", trainer.string(), e.what()));
    }
  }
  info.has_optimizer = fs::exists(dir / kOptimizerFile, ec);
  return info;
}

int64_t checkpoint_floats(const fs::path& dir) {
  const SafetensorsReader file(normalize(dir) / kModelFile);  // named: tensors() is a reference into it
  int64_t n = 0;
  for (const SafetensorsReader::Entry& e : file.tensors()) n += e.shape.numel();
  return n;
}

CheckpointInfo load_checkpoint(const fs::path& target, nn::ParamStore& params, optim::Optimizer* optimizer) {
  const fs::path dir = normalize(target);
  CheckpointInfo info = read_checkpoint_info(dir);

  // Check everything before overwriting anything.
  SafetensorsReader model(dir / kModelFile);
  const std::vector<ParamRef> param_refs = param_refs_of(params);
  const auto model_entries = match_tensors(model, param_refs, "the model");

  std::optional<SafetensorsReader> opt_file;
  std::vector<optim::StateTensor> state;
  std::vector<const SafetensorsReader::Entry*> state_entries;
  std::map<std::string, double> scalars;
  if (optimizer) {
    ENGRAM_CHECK(info.has_optimizer, "{}: no {} to resume the {} optimizer from", dir.string(), kOptimizerFile,
                 optimizer->kind());
    opt_file.emplace(dir / kOptimizerFile);
    const std::string f = opt_file->path().string();
    auto kind = opt_file->metadata().find("optimizer");
    ENGRAM_CHECK(kind != opt_file->metadata().end(), "{}: metadata has no 'optimizer' kind", f);
    ENGRAM_CHECK(kind->second == optimizer->kind(), "{}: holds {} state but the optimizer is {}", f, kind->second,
                 optimizer->kind());
    state = optimizer->state_tensors();
    state_entries = match_tensors(*opt_file, state, fmt::format("the {} optimizer", optimizer->kind()).c_str());
    for (const auto& [k, v] : opt_file->metadata())
      if (k != "optimizer") scalars[k] = parse_scalar(opt_file->path(), k, v);
    ENGRAM_CHECK(scalars.count("step"), "{}: metadata has no 'step'", f);
  }

  // Every value is read into scratch and checked finite first: a checkpoint with a NaN or an inf
  // weight is refused (naming the tensor), and the parameters stay as they were.
  std::vector<Staged> model_values, state_values;
  for (size_t i = 0; i < param_refs.size(); ++i)
    model_values.push_back(read_checked(model, *model_entries[i], param_refs[i].shape.numel(), param_refs[i].name));
  for (size_t i = 0; i < state.size(); ++i)
    state_values.push_back(read_checked(*opt_file, *state_entries[i], state[i].shape.numel(), state[i].name));
  // The scalars are checked (and set) first: what follows cannot fail, so a refused checkpoint
  // leaves the parameters and the optimizer's tensors as they were.
  if (optimizer) optimizer->load_state_scalars(scalars);
  for (size_t i = 0; i < param_refs.size(); ++i)
    model_values[i].copy_to(param_refs[i].data);
  if (optimizer)
    for (size_t i = 0; i < state.size(); ++i) state_values[i].copy_to(state[i].data);
  return info;
}

// ---- one ParamStore as one file

void save_params_file(const fs::path& path, const nn::ParamStore& params,
                      const std::map<std::string, std::string>& metadata) {
  const fs::path tmp = fs::path(path.string() + ".tmp-" + std::to_string(::getpid()));
  std::error_code ec;
  try {
    write_safetensors(tmp, param_views(params), metadata);  // fsyncs the file
    rename_or_throw(tmp, path);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fsync_dir(parent_of(path));
}

void load_params_file(const fs::path& path, nn::ParamStore& params) {
  SafetensorsReader file(path);
  const std::vector<ParamRef> refs = param_refs_of(params);
  const auto entries = match_tensors(file, refs, "the model");
  std::vector<Staged> values;
  for (size_t i = 0; i < refs.size(); ++i) values.push_back(read_checked(file, *entries[i], refs[i].shape.numel(), refs[i].name));
  for (size_t i = 0; i < refs.size(); ++i) values[i].copy_to(refs[i].data);
}

}  // namespace engram::io
