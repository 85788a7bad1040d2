// The name -> factory table. Add a model here with one line.
#include "engram/models/registry.h"

#include <utility>

#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/models/seq2seq/model.h"

namespace engram::models {

namespace {

std::unique_ptr<Model> make_seq2seq(const YAML::Node& config, core::Rng& rng) {
  Seq2SeqConfig cfg;
  io::from_yaml(config, cfg, "seq2seq config");
  return std::make_unique<Seq2Seq>(cfg, rng);
}

constexpr std::pair<const char*, ModelFactory> kModels[] = {
    {Seq2Seq::kName, &make_seq2seq},
};

}  // namespace

ModelFactory model_factory(std::string_view name) {
  for (const auto& [n, f] : kModels)
    if (name == n) return f;
  std::string known;
  for (const auto& [n, f] : kModels) known += (known.empty() ? "" : ", ") + std::string(n);
  ENGRAM_CHECK(false, "unknown model '{}' (known: {})", name, known);
  return nullptr;
}

std::unique_ptr<Model> make_model(std::string_view name, const YAML::Node& config, core::Rng& rng) {
  return model_factory(name)(config, rng);
}

std::vector<std::string> model_names() {
  std::vector<std::string> out;
  for (const auto& [n, f] : kModels) out.emplace_back(n);
  return out;
}

std::unique_ptr<Model> load_model(const std::string& dir) {
  const io::CheckpointInfo info = io::read_checkpoint_info(dir);
  core::Rng rng(1);
  std::unique_ptr<Model> model = make_model(info.model_name, info.config, rng);
  io::load_checkpoint(dir, model->params());
  return model;
}

}  // namespace engram::models
