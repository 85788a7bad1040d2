// The seq2seq family's registry entry: train a Seq2SeqTrainConfig run on the shared Trainer, load
// a model directory as a Translator.
#include <fmt/format.h>

#include "engram/models/registry.h"
#include "engram/models/seq2seq/task.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/run_lock.h"
#include "engram/train/trainer.h"

namespace engram::models {

namespace {

std::string train_seq2seq(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const Seq2SeqTrainConfig cfg = parse_run_config<Seq2SeqTrainConfig>(node, source, sets);
  cfg.seq2seq.validate_options();  // everything that can be checked before the data is read
  train::check_trainer_config(cfg.train);
  const train::RunDirLock lock(cfg.train.run_dir);
  // Rank 0 builds the vocabularies into the run directory first; the other ranks load them.
  std::unique_ptr<Seq2SeqTask> made;
  train::root_first([&] { made = std::make_unique<Seq2SeqTask>(cfg); });
  Seq2SeqTask& task = *made;
  train::Trainer trainer(task, task.config().train);
  const train::TrainSummary s = trainer.run();
  return fmt::format("done: {} steps in {:.1f} s{}{}; best {} {:.2f}; model in {}/best", s.steps, s.seconds,
                     s.resumed ? " (resumed)" : "", s.early_stopped ? " (early stop)" : "", task.primary_metric(),
                     s.best_metric, task.config().train.run_dir);
}

std::unique_ptr<LoadedModel> load_seq2seq(const std::filesystem::path& dir) { return load_translator(dir); }

}  // namespace

const Family& seq2seq_family() {
  static const Family f{Seq2Seq::kName, "RNN encoder-decoder with attention: translation, dates",
                        &dump_run_config<Seq2SeqTrainConfig, nullptr>, &train_seq2seq, &load_seq2seq, "translate"};
  return f;
}

}  // namespace engram::models
