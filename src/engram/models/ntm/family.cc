// The ntm family's registry entry: an NtmTrainConfig run (the NTM or the LSTM baseline on copy,
// repeat copy or associative recall, with the paper's recipe for the chosen task and
// architecture as defaults) and a loaded model directory.
#include <fmt/format.h>

#include "engram/models/ntm/model.h"
#include "engram/models/ntm/task.h"
#include "engram/io/files.h"
#include "engram/models/registry.h"
#include "engram/models/training.h"

namespace engram::models {

namespace {

std::string train_ntm_run(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const NtmTrainConfig cfg = read_ntm_config(node, source, sets);
  return train_config_task(
      cfg, [&] { return make_ntm_task(cfg); }, 4, fmt::format("evaluate with: engram ntm eval -m {}", cfg.train.run_dir));
}

std::unique_ptr<LoadedModel> load_ntm(const std::filesystem::path& dir) { return load_ntm_model(dir); }

}  // namespace

const Family& ntm_family() {
  static const Family f{NtmTaskModel::kName, "Neural Turing Machine (and LSTM baseline): copy, repeat copy, recall",
                        &dump_read_config<NtmTrainConfig, &read_ntm_config>, &train_ntm_run, &load_ntm, "ntm"};
  return f;
}

}  // namespace engram::models
