// bAbI with End-To-End Memory Networks: the run configuration, data loading (vocabulary over
// every task of the data directory, 10% of each task's training questions held out), the
// TrainTask adapter over models::Memn2n, and the training recipe of the paper: linear start
// (memory softmaxes removed until validation loss stops falling), then the main phase, both on
// the shared Trainer; several seeds, the best on validation error kept.
// Run directory: RUN/seed-S/{linear_start/, last/, best/, metrics.jsonl} per seed,
// RUN/model/ (the selected checkpoint + vocab.txt), RUN/selection.json; per-task (not joint)
// training puts one such tree under RUN/task-T/.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engram/data/vocab.h"
#include "engram/models/loaded_family.h"
#include "engram/models/memn2n/model.h"
#include "engram/models/registry.h"
#include "engram/train/trainer.h"

namespace engram::models {

struct LinearStartConfig {
  bool enabled = true;
  float lr = 0.005f;     // the paper's LS learning rate
  int max_epochs = 30;   // length of the LS phase (the authors' code: 20 per task, 30 joint)
  // > 0: end LS earlier, after this many validations without a lower validation loss (the
  // paper's wording); 0: run all max_epochs, as the authors' code (better here: see
  // bench/results_memn2n.md).
  int patience = 0;

  template <class V>
  void visit(V& v) {
    v("enabled", enabled, "linear start (LS): no softmax in the memory layers at first");
    v("lr", lr, "learning rate during LS");
    v("max_epochs", max_epochs, "LS phase in epochs (at most, with patience)");
    v("patience", patience, "end LS after this many validations without a lower validation loss (0 = never)");
  }
};

// data: where the questions come from and how they are batched.
struct BabiDataConfig {
  std::string dir;              // a bAbI v1.2 directory (en, en-10k); "" = $ENGRAM_DATA_DIR/babi/en
  std::string tasks = "all";    // "all", "1,2,5", "1-3,7"
  bool joint = true;            // one model for all tasks (else one per task)
  int batch_size = 32;
  double valid_fraction = 0.1;  // of each task's training questions
  uint64_t split_seed = 1;
  float random_noise = 0.1f;    // RN: empty-memory fraction in time indices (0 = off)

  template <class V>
  void visit(V& v) {
    v("dir", dir, "bAbI directory, relative ones under $ENGRAM_DATA_DIR ('' = babi/en)");
    v("tasks", tasks, "tasks: all | 1,2,5 | 1-3,7");
    v("joint", joint, "train one model on all tasks (else one per task)");
    v("batch_size", batch_size, "questions per batch");
    v("valid_fraction", valid_fraction, "held-out fraction of each task's training questions");
    v("split_seed", split_seed, "seed of the validation split");
    v("random_noise", random_noise, "RN: fraction of empty memories in the time indices (0 = off)");
  }
};

// task: MemN2N's own training recipe around the Trainer.
struct BabiTaskConfig {
  std::vector<int64_t> seeds = {1};  // one run per seed, the best on validation error kept
  LinearStartConfig linear_start;
  int lr_decay_epochs = 15;     // main phase: multiply the lr by lr_decay every N epochs
  float lr_decay = 0.5f;

  template <class V>
  void visit(V& v) {
    v("seeds", seeds, "one run per seed; the best on validation error is kept");
    v("linear_start", linear_start, "linear start");
    v("lr_decay_epochs", lr_decay_epochs, "main phase: decay the lr every N epochs");
    v("lr_decay", lr_decay, "main phase: lr decay factor");
  }
};

// A MemN2N run (`engram train` with `model: memn2n`).
struct BabiConfig {
  std::string model = "memn2n";
  models::Memn2nConfig memn2n;
  BabiDataConfig data;
  BabiTaskConfig task;
  train::TrainerConfig train;  // the main phase (train.schedule is set from task.lr_decay*)

  template <class V>
  void visit(V& v) {
    v("model", model, "model family (memn2n)");
    v("memn2n", memn2n, "the model");
    v("data", data, "bAbI data and batching");
    v("task", task, "seeds, linear start, lr decay");
    v("train", train, "training loop (main phase; train.schedule is set from task.lr_decay*)");
  }
};

// The recipes of the paper and the authors' code (joint: D 50, 60 epochs, lr halved every 15;
// per task: D 20, 100 epochs, lr halved every 25), SGD with clipping at 40, batch 32, PE LS RN,
// adjacent tying, the authors' position encoding (pe_global) and null slots.
BabiConfig default_babi_config(bool joint);

// "all" -> tasks available in dir; "1,2,5" / "1-3,7" -> those (each must be available).
std::vector<int> parse_babi_tasks(const std::string& spec, const std::string& dir);
// cfg.data.dir (a relative one as given if it exists, else under the data root: data/paths.h),
// or <data root>/babi/en when it is empty.
std::string babi_data_dir(const BabiConfig& cfg);

struct BabiData {
  data::Vocab vocab;
  int longest_sentence = 0;  // words, over every task of the directory
  std::vector<int> tasks;
  models::Memn2nDataset train, valid, test;  // samples of every task in `tasks`
};
// Loads `tasks`; the vocabulary spans every task of the directory (train and test files), unless
// `vocab` is given (a trained model's: the data is encoded with it, unknown words as <unk>).
BabiData load_babi_data(const BabiConfig& cfg, const std::vector<int>& tasks, const data::Vocab* vocab = nullptr);

// cfg.memn2n completed from the data: vocab, and sentence_length for pe_global.
models::Memn2nConfig memn2n_config(const BabiConfig& cfg, const BabiData& data);

// The Trainer's view of one MemN2N run.
class BabiTrainTask : public train::TrainTask {
 public:
  // `files` go into every checkpoint (vocab.txt, data.yaml), so a checkpoint stands alone.
  BabiTrainTask(const BabiConfig& cfg, models::Memn2n& model, const BabiData& data, bool linear_start,
                std::vector<std::filesystem::path> files);
  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return "memn2n"; }
  YAML::Node model_config() const override;
  int64_t batches_per_epoch() const override;
  void begin_epoch(int epoch, uint64_t seed) override;
  train::BatchResult train_batch(int64_t index) override;
  bool shardable() const override { return true; }
  train::Metrics validate() override;
  std::string primary_metric() const override { return linear_start_ ? "loss" : "error"; }
  bool higher_is_better() const override { return false; }
  std::vector<std::filesystem::path> checkpoint_files() const override;
  // Linear start (when enabled) as a phase before the main one: no memory softmax, its own epochs,
  // patience and lr; its epoch count is kept with the checkpoint (extra_state).
  std::vector<train::TrainPhase> phases() const override;
  void begin_phase(int phase) override;
  void after_validation(const train::Metrics& m) override;
  nlohmann::json extra_state() const override;
  void load_extra_state(const nlohmann::json& j) override;
  int linear_start_epochs() const { return ls_epochs_; }

 private:
  BabiConfig cfg_;
  models::Memn2n& model_;
  const BabiData& data_;
  bool linear_start_;
  int ls_epochs_ = 0;  // epochs of linear start done
  std::vector<std::filesystem::path> files_;
  std::vector<int32_t> order_;  // [train samples] this epoch's order
  int epoch_ = 0;
  uint64_t seed_ = 1;
  core::Graph graph_;
};

struct BabiSeedResult {
  int64_t seed = 0;
  double valid_error = 0;
  double seconds = 0;
  int linear_start_epochs = 0;
  bool out_of_time = false;    // train.max_minutes stopped it (resumable)
  std::filesystem::path best;  // the seed's best checkpoint (absent before its main phase)
};

// Trains one seed into run_dir (linear start, then the main phase; resumable). train.max_minutes
// counts from `started` (the command's start: one limit over every seed and task).
BabiSeedResult train_babi_seed(const BabiConfig& cfg, const BabiData& data, int64_t seed,
                               const std::filesystem::path& run_dir, std::chrono::steady_clock::time_point started);
// Every seed of cfg, then copies the best (lowest validation error) of the seeds that have a
// main-phase checkpoint to run_dir/model (with vocab.txt) and writes run_dir/selection.json.
// Seeds after train.max_minutes has run out are not started (a run of the command again resumes
// them); when no seed reached its main phase, nothing is selected. Returns the per-seed results.
std::vector<BabiSeedResult> train_babi(const BabiConfig& cfg, const BabiData& data,
                                       const std::filesystem::path& run_dir,
                                       std::chrono::steady_clock::time_point started);

// A trained model directory: config, vocabulary, parameters (the family's LoadedModel).
struct LoadedBabiModel : LoadedFamily<LoadedBabiModel, Memn2n> {
  BabiConfig cfg;  // memn2n from config.yaml, data from data.yaml (the rest: defaults)
  data::Vocab vocab;

  // "Mary moved to the bathroom. John went to the hallway. Where is Mary?" -> "bathroom": the
  // statements (ended by '.', '!' or a newline) are the memory, the last sentence (ended by '?')
  // the question; tokenised as the bAbI files are.
  std::string run_line(const std::string& line) override;
  std::string input_help() const override { return "statements ending in '.', then a question ending in '?'"; }
  // run_line's answer with what explains it: the story's sentences as read, the window of them
  // in memory, the attention of every hop and the answer's probability.
  struct Answer {
    std::vector<std::string> story;  // the statements, in order, trimmed
    Memn2nExplanation explanation;   // attention[k][j]: hop k on story sentence offset + j
    std::string answer;
  };
  Answer answer(const std::string& line) const;
  // run_line's text read as answer() reads it: the statements as read (trimmed) and the tokenised
  // sample. Errors on text the model cannot take: no question, a question of no words, no
  // statement before it (an empty story), or (pe_global encoding) a sentence of more words than
  // the model's sentence_length J. parse_request (POST /v1/babi) checks a request with it.
  struct Parsed {
    std::vector<std::string> story;
    data::BabiSample sample;
  };
  Parsed parse(const std::string& line) const;
  // POST /v1/babi (serve.cc, docs/serve.md): {"story": text or [sentences], "question"} ->
  // {"answer", "probability", "story", "hops": [[α per story sentence] per hop]}. The stories of a
  // batch run as one.
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // Members: memn2n models of the same vocabulary (token for token). The answer's probability is
  // their mean; the hops' attention shown is this model's.
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};
// Reads MODEL_DIR/config.yaml, vocab.txt and data.yaml (each also found in the parent) and
// model.safetensors. A checkpoint written before the one config shape (its config.yaml holds the
// whole run config) loads too.
LoadedBabiModel load_babi_model(const std::filesystem::path& dir);

}  // namespace engram::models
