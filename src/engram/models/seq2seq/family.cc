// The seq2seq family's registry entry: train a Seq2SeqTrainConfig run on the shared Trainer, load
// a model directory as a Translator.
#include <fmt/format.h>

#include "engram/models/registry.h"
#include "engram/models/training.h"
#include "engram/models/seq2seq/task.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/run_lock.h"
#include "engram/train/trainer.h"

namespace engram::models {

namespace {

std::string train_seq2seq(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const Seq2SeqTrainConfig cfg = parse_run_config<Seq2SeqTrainConfig>(node, source, sets);
  cfg.seq2seq.validate_options();  // everything that can be checked before the data is read
  return train_task(
      cfg.train, [&] { return std::make_unique<Seq2SeqTask>(cfg); },  // writes the vocabularies and train.yaml
      2, fmt::format("model in {}/best", cfg.train.run_dir));
}

std::unique_ptr<LoadedModel> load_seq2seq(const std::filesystem::path& dir) { return load_translator(dir); }

}  // namespace

const Family& seq2seq_family() {
  static const Family f{Seq2Seq::kName, "RNN encoder-decoder with attention: translation, dates",
                        &dump_run_config<Seq2SeqTrainConfig, nullptr>, &train_seq2seq, &load_seq2seq, "translate"};
  return f;
}

}  // namespace engram::models
