// Checkpoints: a model directory written atomically and loaded with checks that say what is
// wrong. Layout of DIR:
//
//   config.yaml            format_version: 1 / model: <name> / config: {every Config field}
//   model.safetensors      every ParamStore tensor under its name (float32)
//   optimizer.safetensors  optional: the optimizer's state tensors ("<slot>/<param name>");
//                          metadata: "optimizer" (kind) and its scalars ("step", "lr", ...)
//   trainer.json           optional: free-form trainer state (step, epoch, rng, best metric)
//
// save_checkpoint writes everything into DIR.tmp-<pid> (fsyncing each file and the directory),
// then renames it into place: an existing DIR is first renamed to DIR.old-<pid> and removed
// after the new one is in place. A crash at any point leaves either the old or the new
// checkpoint; if it strikes between the two renames, loading finds DIR missing and renames the
// newest DIR.old-* back.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <map>
#include <vector>
#include <nlohmann/json.hpp>
#include <string>

#include "engram/nn/param_store.h"
#include "engram/optim/optimizer.h"

namespace engram::io {

constexpr int kCheckpointFormatVersion = 1;
// The largest trainer.json read_checkpoint_info reads (docs/limits.md); config.yaml is bounded by
// kMaxConfigFileBytes and model.safetensors by its header (io/safetensors.h).
inline constexpr uint64_t kMaxTrainerJsonBytes = uint64_t{64} << 20;

// What to save. `params` is required; the rest may be left empty.
struct CheckpointData {
  std::string model_name;                       // e.g. "seq2seq" (the registry name)
  YAML::Node config;                            // a map (or null), e.g. io::to_yaml(model_config)
  const nn::ParamStore* params = nullptr;
  const optim::Optimizer* optimizer = nullptr;  // null: no optimizer.safetensors
  nlohmann::json trainer{};                     // null: no trainer.json
  // Files copied in as they are (e.g. the vocabularies), so the directory stands alone; their
  // names must differ from the checkpoint's own files.
  std::vector<std::filesystem::path> files{};
};

struct CheckpointSaveOptions {
  // Called after each file is complete inside the temporary directory (with its path). For
  // tests: throwing from it simulates a crash midway; the previous checkpoint must survive.
  std::function<void(const std::filesystem::path&)> on_file_written;
};

// Writes `data` to directory `dir` atomically (see above). Errors leave any previous checkpoint
// at `dir` in place and remove the temporary directory.
void save_checkpoint(const std::filesystem::path& dir, const CheckpointData& data,
                     const CheckpointSaveOptions& options = {});

// What a checkpoint says about itself (everything except the tensors).
struct CheckpointInfo {
  int format_version = 0;
  std::string model_name;
  YAML::Node config;        // the `config:` map
  nlohmann::json trainer;   // null when there is no trainer.json
  bool has_optimizer = false;
};

// Reads config.yaml and trainer.json (recovering DIR from DIR.old-* first, see above). Errors on
// a missing directory or file and on an unknown format version.
CheckpointInfo read_checkpoint_info(const std::filesystem::path& dir);

// How many floats the tensors of `dir`'s model.safetensors hold (its header read and checked).
int64_t checkpoint_floats(const std::filesystem::path& dir);

// read_checkpoint_info, then copies every tensor of model.safetensors into `params` (which must
// hold exactly the same names and shapes) and, if `optimizer` is given, its state and scalars
// from optimizer.safetensors. All names and shapes are checked before anything is overwritten.
CheckpointInfo load_checkpoint(const std::filesystem::path& dir, nn::ParamStore& params,
                               optim::Optimizer* optimizer = nullptr);

// One ParamStore as a single safetensors file (for state a task keeps beside its checkpoints,
// e.g. the pointer family's REINFORCE baseline): save_params_file writes PATH.tmp-<pid>, fsyncs it
// and renames it over `path` (then fsyncs the directory); load_params_file checks names, shapes
// and that every value is finite before it overwrites anything in `params`.
void save_params_file(const std::filesystem::path& path, const nn::ParamStore& params,
                      const std::map<std::string, std::string>& metadata = {});
void load_params_file(const std::filesystem::path& path, nn::ParamStore& params);

// If `dir` is missing but DIR.old-<pid> directories exist, renames the newest back to `dir` and
// returns true. Called by the readers above.
bool recover_checkpoint(const std::filesystem::path& dir);

// After recover_checkpoint: removes what an interrupted save left beside `dir` (DIR.tmp-<pid>, and
// DIR.old-<pid> once DIR exists). Only for the directory's owner (train/run_lock.h): another
// process's save in progress would lose its temporary copy. Returns how many were removed.
int remove_checkpoint_leftovers(const std::filesystem::path& dir);
// The checkpoint directories DIR in `parent` that an interrupted save left a DIR.tmp-<pid> or
// DIR.old-<pid> beside (whether DIR exists or not), each once, sorted.
std::vector<std::filesystem::path> interrupted_checkpoints(const std::filesystem::path& parent);

}  // namespace engram::io
