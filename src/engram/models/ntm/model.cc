// The "ntm" model: builds the NTM or the LSTM baseline for its task, saves / loads it.
#include "engram/models/ntm/model.h"

#include "engram/io/checkpoint.h"

namespace engram::models {

NtmTaskModel::NtmTaskModel(const NtmModelConfig& cfg, core::Rng& rng) : cfg_(cfg) {
  const int in = task_input_size(cfg.task), out = task_output_size(cfg.task);
  if (cfg.architecture == NtmArchitecture::kNtm) {
    cfg_.ntm.input_size = in, cfg_.ntm.output_size = out;
    seq_ = std::make_unique<Ntm>(store_, "ntm", cfg_.ntm, rng);
  } else {
    cfg_.lstm.input_size = in, cfg_.lstm.output_size = out;
    seq_ = std::make_unique<LstmSeq>(store_, "lstm_baseline", cfg_.lstm, rng);
  }
}

YAML::Node NtmTaskModel::config() const { return io::to_yaml(cfg_); }

std::unique_ptr<Model> make_ntm_model(const YAML::Node& config, core::Rng& rng) {
  NtmModelConfig cfg;
  io::from_yaml(config, cfg, "ntm config");
  return std::make_unique<NtmTaskModel>(cfg, rng);
}

std::unique_ptr<NtmTaskModel> load_ntm_model(const std::string& dir) {
  const io::CheckpointInfo info = io::read_checkpoint_info(dir);
  ENGRAM_CHECK(info.model_name == NtmTaskModel::kName, "{} holds a '{}' model, not an '{}' model", dir,
               info.model_name, NtmTaskModel::kName);
  NtmModelConfig cfg;
  io::from_yaml(info.config, cfg, dir + "/config.yaml");
  core::Rng rng(1);
  auto model = std::make_unique<NtmTaskModel>(cfg, rng);
  io::load_checkpoint(dir, model->params());
  return model;
}

}  // namespace engram::models
