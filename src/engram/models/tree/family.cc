// The tree family's registry entry: a TreeRunConfig run (a recursive net or Tree-LSTM on SST, with
// Tai et al.'s recipe for the chosen cell and view as defaults) and a loaded model directory.
#include <fmt/format.h>

#include "engram/models/registry.h"
#include "engram/models/training.h"
#include "engram/models/tree/task.h"

namespace engram::models {

namespace {

std::string train_tree_run(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const TreeRunConfig cfg = read_tree_config(node, source, sets);
  return train_task(
      cfg.train, [&] { return make_tree_task(cfg); }, 4,
      fmt::format("evaluate with: engram sentiment eval -m {}", cfg.train.run_dir));
}

std::unique_ptr<LoadedModel> load_tree(const std::filesystem::path& dir) { return load_tree_model(dir); }

}  // namespace

const Family& tree_family() {
  static const Family f{TreeModel::kName, "Recursive nets and Tree-LSTMs: sentiment on the Stanford Sentiment Treebank",
                        &dump_read_config<TreeRunConfig, &read_tree_config>, &train_tree_run, &load_tree, "sentiment"};
  return f;
}

}  // namespace engram::models
