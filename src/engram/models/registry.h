// The model registry: a model name ("seq2seq", ...) -> a factory that builds the model from its
// saved config, so a model directory (config.yaml names the model) can be loaded without the
// loader knowing every architecture. Model is the small base every registered model implements.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::models {

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;     // the registry name, saved in config.yaml
  virtual nn::ParamStore& params() = 0;     // every parameter
  virtual YAML::Node config() const = 0;    // every Config field (io::to_yaml)
};

// Builds a model from a config map (strict: unknown keys are errors), initialised from `rng`.
using ModelFactory = std::unique_ptr<Model> (*)(const YAML::Node& config, core::Rng& rng);

// The factory registered for `name`; an unknown name is an error listing the known ones.
ModelFactory model_factory(std::string_view name);
std::unique_ptr<Model> make_model(std::string_view name, const YAML::Node& config, core::Rng& rng);
std::vector<std::string> model_names();

// Loads a checkpoint directory (config.yaml + model.safetensors, see io/checkpoint.h): builds the
// model its config names and copies the saved parameters in.
std::unique_ptr<Model> load_model(const std::string& dir);

}  // namespace engram::models
