// Training the pointer-generator (`engram train CONFIG.yaml` with `model: pointer_generator`):
// the run config, data (a `source<TAB>target` file, data/summary_pairs.h, the generated names
// task, data/tasks/names.h, or the BBC News Summary corpus, data/bbc.h, with its fixed split), one vocabulary of the most frequent train words (or a SentencePiece
// model) kept in the run directory, examples in extended ids, and the train::TrainTask: batches
// by a token budget in an order that is a pure function of (seed, epoch), the loss of model.h,
// and validation by dev NLL, greedy ROUGE, copy share and OOV-copy rate.
//
// Coverage "for a final phase" (See et al. train without coverage, then switch it on for a short
// last phase): with pointer_generator.coverage and task.pre_coverage_epochs > 0, the run starts
// with a phase `no_coverage` of that many epochs (constant lr task.pre_coverage_lr, a fresh
// optimizer; the coverage feature is zero and there is no coverage loss), then the main phase
// (train.*) trains with coverage; best/ is chosen in the main phase. pre_coverage_epochs 0 =
// coverage from the start.
// Run directory: RUN/train.yaml, RUN/vocab.txt | vocab.spm, and the Trainer's files.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/data/batching.h"
#include "engram/data/bbc.h"
#include "engram/data/summary_pairs.h"
#include "engram/models/pointer_generator/model.h"
#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/pointer_generator/text.h"
#include "engram/models/training.h"
#include "engram/train/trainer.h"

namespace engram::models {

struct PgDataConfig {
  std::string train_tsv;             // source<TAB>target per line, or
  std::string generator;             // "names": the generated copy task, or
  std::string bbc;                   // "headline" | "summary": the BBC corpus (its train / valid split)
  std::string bbc_dir = "summarization/bbc-news-summary";  // under $ENGRAM_DATA_DIR (data/paths.h)
  std::string valid_tsv;             // validation pairs (else valid_size held out of train_tsv)
  int64_t valid_size = 200;          // pairs held out (seeded) when there is no valid_tsv
  int64_t generate_train = 2000;     // generator: training pairs
  int64_t generate_valid = 200;      // generator: validation pairs
  int64_t max_pairs = 0;             // at most this many training pairs (0 = all)
  int max_target_tokens = 100;       // targets truncated to this many tokens (See et al.: 100;
                                     // articles: pointer_generator.max_source_tokens)
  int64_t max_tokens = 4096;         // batch budget: B * max(S, T) padded tokens
  int64_t max_sentences = 16;        // and at most this many pairs per batch (0 = no cap)
  int64_t rouge_pairs = 200;         // validation summaries decoded (greedy) for ROUGE
  int decode_batch = 32;             // sources decoded together in validation

  template <class V>
  void visit(V& v) {
    v("train_tsv", train_tsv, "training pairs: source<TAB>target per line (\\n separates target sentences)");
    v("generator", generator, "generated task instead of files: names (rare names to copy)");
    v("bbc", bbc, "BBC News Summary instead of files: headline (body -> headline) | summary (body -> summary)");
    v("bbc_dir", bbc_dir, "the BBC corpus folder (articles/, summaries/), relative paths under $ENGRAM_DATA_DIR");
    v("valid_tsv", valid_tsv, "validation pairs (else valid_size held out of train_tsv)");
    v("valid_size", valid_size, "pairs held out for validation when there is no valid_tsv");
    v("generate_train", generate_train, "generator: training pairs");
    v("generate_valid", generate_valid, "generator: validation pairs");
    v("max_pairs", max_pairs, "use at most this many training pairs (0 = all)");
    v("max_target_tokens", max_target_tokens, "truncate targets to this many tokens");
    v("max_tokens", max_tokens, "batch budget in padded tokens");
    v("max_sentences", max_sentences, "max pairs per batch (0 = no cap)");
    v("rouge_pairs", rouge_pairs, "validation pairs summarised (greedy) for ROUGE");
    v("decode_batch", decode_batch, "sources decoded together in validation");
  }
  void validate() const;
};

struct PgTaskConfig {
  int pre_coverage_epochs = 0;   // with coverage: epochs of a no-coverage phase first (0 = none)
  float pre_coverage_lr = 0.15f; // its constant learning rate (See et al.: Adagrad 0.15)

  template <class V>
  void visit(V& v) {
    v("pre_coverage_epochs", pre_coverage_epochs, "coverage models: epochs without coverage first (0 = none)");
    v("pre_coverage_lr", pre_coverage_lr, "learning rate of that phase");
  }
};

struct PgTrainConfig {
  std::string model = PointerGenerator::kName;
  PointerGeneratorConfig pointer_generator;  // vocab is set from the data
  PgDataConfig data;
  PgTaskConfig task;
  train::TrainerConfig train;

  template <class V>
  void visit(V& v) {
    v("model", model, "model name (pointer_generator)");
    v("pointer_generator", pointer_generator, "the model");
    v("data", data, "training and validation data");
    v("task", task, "the coverage phase");
    v("train", train, "training loop");
  }
  // Everything that can be checked before any data is read.
  void validate() const;
};

class PgTrainTask final : public train::TrainTask {
 public:
  // Reads or generates the data, builds (or, resuming, loads) the vocabulary in the run
  // directory, writes RUN/train.yaml and builds the model. `log`: one-line notes (may be null).
  explicit PgTrainTask(const PgTrainConfig& cfg, std::FILE* log = stdout);

  nn::ParamStore& params() override { return model_->params(); }
  std::string model_name() const override { return PointerGenerator::kName; }
  YAML::Node model_config() const override { return model_->config(); }
  int64_t batches_per_epoch() const override { return static_cast<int64_t>(plan_.size()); }
  void begin_epoch(int epoch, uint64_t seed) override;
  train::BatchResult train_batch(int64_t index) override;
  bool shardable() const override { return true; }
  // {"loss": dev NLL per token, "ppl", "coverage_loss", "rouge1", "rouge2", "rouge_l",
  //  "copy_share", "oov_copy", "repeats"}.
  train::Metrics validate() override;
  std::string primary_metric() const override { return "rouge_l"; }
  bool higher_is_better() const override { return true; }
  std::vector<std::filesystem::path> checkpoint_files() const override;
  std::vector<train::TrainPhase> phases() const override;
  void begin_phase(int phase) override;

  const PointerGenerator& model() const { return *model_; }
  const TextCodec& codec() const { return *codec_; }
  const PgTrainConfig& config() const { return cfg_; }
  bool coverage_active() const { return coverage_active_; }

 private:
  PgTrainConfig cfg_;
  std::optional<TextCodec> codec_;
  std::unique_ptr<PointerGenerator> model_;
  std::vector<data::Example> train_, valid_;  // extended ids
  TextPairs valid_text_;
  std::vector<std::vector<int64_t>> plan_;
  int epoch_ = 0;
  uint64_t seed_ = 1;
  bool coverage_active_ = true;
  core::Graph graph_;
};

// The BBC corpus as summarisation pairs: source = the body sentences joined with spaces, target =
// the headline (task "headline", one sentence) or the extractive summary's sentences ("summary").
// Errors name an unknown task.
std::vector<data::SummaryPair> bbc_pairs(const std::vector<data::NewsArticle>& articles, const std::string& task);
// The articles of one split ("train" | "valid" | "test") of the corpus in `dir` (resolved by
// data::resolve_data_path).
std::vector<data::NewsArticle> load_bbc_split(const std::string& dir, const std::string& split);

// One pair in extended ids: the source truncated to max_source, the target to max_target tokens.
data::Example pg_example(const TextCodec& codec, const std::string& src, const std::string& tgt, int max_source,
                         int max_target);

}  // namespace engram::models
