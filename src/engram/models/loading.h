// One checkpoint loader for every family: a model directory (config.yaml + model.safetensors,
// io/checkpoint.h) -> the family's model, and the one lookup of a file that sits in the model
// directory or in the run directory above it (vocabularies are written once per run).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/nn/init.h"
#include "engram/nn/param_store.h"

namespace engram::models {

// The model of checkpoint directory `dir`: config.yaml must name M::kName; its config is read
// into a Cfg by `read(config, cfg, where)` — by default strictly (an unknown key or a bad value is
// an error naming the file) — the model is built from it and its parameters are loaded (shapes
// checked against the file). A family whose older checkpoints hold another config layout passes
// its own `read`.
template <class M, class Cfg, class Read>
std::unique_ptr<M> load_checkpoint_model(const std::filesystem::path& dir, Read&& read) {
  const io::CheckpointInfo info = io::read_checkpoint_info(dir);
  ENGRAM_CHECK(info.model_name == M::kName, "{} holds a '{}' model, not a '{}' model", dir.string(), info.model_name,
               M::kName);
  Cfg cfg;
  read(info.config, cfg, (dir / "config.yaml").string());
  core::Rng rng(1);
  std::unique_ptr<M> model;
  {
    const nn::init::SkipOnThisThread skip;  // every parameter is read from the checkpoint below
    const nn::ParamBudgetOnThisThread budget(io::checkpoint_floats(dir), (dir / "model.safetensors").string());
    model = std::make_unique<M>(cfg, rng);
  }
  io::load_checkpoint(dir, model->params());
  return model;
}

template <class M, class Cfg>
std::unique_ptr<M> load_checkpoint_model(const std::filesystem::path& dir) {
  return load_checkpoint_model<M, Cfg>(
      dir, [](const YAML::Node& config, Cfg& cfg, const std::string& where) { io::from_yaml(config, cfg, where); });
}

// `dir`/`name` when it exists, else the run directory's (`dir`/../`name`) when that exists, else
// `dir`/`name` (an error reading it names the model directory).
inline std::filesystem::path model_file(const std::filesystem::path& dir, const std::string& name) {
  if (std::filesystem::exists(dir / name) || !std::filesystem::exists(dir.parent_path() / name)) return dir / name;
  return dir.parent_path() / name;
}

}  // namespace engram::models
