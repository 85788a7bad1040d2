// The pointer family's registry entry: a PointerTrainConfig run (sorting, convex hull or TSP on
// generated instances) on the shared Trainer, and a model directory that reads one instance in
// the paper's line format.
#include <fmt/format.h>

#include <filesystem>

#include "engram/io/files.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/pointer/task.h"
#include "engram/models/registry.h"
#include "engram/models/training.h"

namespace engram::models {

namespace {

std::string train_pointer(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const PointerTrainConfig cfg = read_pointer_config(node, source, sets);
  cfg.pointer.validate();
  cfg.data.validate();
  return train_config_task(cfg, [&] { return std::make_unique<PointerTrainTask>(cfg); }, 4,
                           fmt::format("evaluate with: engram pointer eval -m {}", cfg.train.run_dir));
}

std::unique_ptr<LoadedModel> load_pointer(const std::filesystem::path& dir) { return load_pointer_model(dir); }

}  // namespace

const Family& pointer_family() {
  static const Family f{PointerNet::kName, "Pointer Networks: sorting, convex hull, TSP (outputs point at inputs)",
                        &dump_read_config<PointerTrainConfig, &read_pointer_config>, &train_pointer,
                        &load_pointer, "pointer"};
  return f;
}

}  // namespace engram::models
