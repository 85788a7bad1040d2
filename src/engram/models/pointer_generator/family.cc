// The pointer_generator family's registry entry: a PgTrainConfig run on the shared Trainer, and a
// model directory that summarises one line of text.
#include <fmt/format.h>

#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/pointer_generator/task.h"
#include "engram/models/registry.h"
#include "engram/models/training.h"
#include "engram/train/run_lock.h"
#include "engram/train/trainer.h"

namespace engram::models {

namespace {

std::string train_pg(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const PgTrainConfig cfg = parse_run_config<PgTrainConfig>(node, source, sets);
  cfg.validate();  // everything that can be checked before the data is read
  return train_task(
      cfg.train, [&] { return std::make_unique<PgTrainTask>(cfg); },  // writes the vocabulary and train.yaml
      2, fmt::format("model in {}/best", cfg.train.run_dir));
}

std::unique_ptr<LoadedModel> load_pg(const std::filesystem::path& dir) { return load_pointer_generator(dir); }

}  // namespace

const Family& pointer_generator_family() {
  static const Family f{PointerGenerator::kName,
                        "pointer-generator with coverage: summaries that copy unseen names from the source",
                        &dump_run_config<PgTrainConfig, nullptr>, &train_pg, &load_pg, "summarize"};
  return f;
}

}  // namespace engram::models
