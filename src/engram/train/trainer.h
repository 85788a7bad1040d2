// Trainer: the one training loop every model uses — batches, gradient clipping, optimizer and
// LR schedule, a progress line, periodic validation, best/last checkpoints, early stopping,
// metrics JSONL, and resume. The model side is a TrainTask: it owns data order and the forward +
// backward of one batch; the Trainer owns everything around it.
//
// Phases (TrainTask::phases) run in order inside one run: trainer.json records the phase, so a
// resumed run continues in the phase it was in.
// Run directory layout (DIR = TrainerConfig::run_dir):
//   DIR/last/      checkpoint after the most recent save (params + optimizer + trainer.json)
//   DIR/best/      checkpoint with the best validation metric so far (params + trainer.json)
//   DIR/metrics.jsonl  one JSON object per log/validation event ({"event":"train"|"valid", ...})
// Resume: Trainer::run() on a DIR with last/ loads it and continues with the next batch of the
// same epoch; the data order is a pure function of (seed, epoch), so it is the same order.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "engram/nn/param_store.h"
#include "engram/optim/clip.h"
#include "engram/optim/factory.h"
#include "engram/train/distributed.h"

namespace engram::train {

// A request that every Trainer::run of this process stop after its current update, as at its
// time limit: it validates, saves last/ and returns (the run resumes from there). Safe from any
// thread and from a signal handler; clear_stop_request() before a new run.
void request_stop() noexcept;
void clear_stop_request() noexcept;
bool stop_requested() noexcept;

struct TrainerConfig {
  int max_epochs = 10;
  int64_t max_steps = 0;           // 0 = no limit (updates)
  double max_minutes = 0;          // 0 = no limit (wall clock of this process)
  int64_t valid_every = 0;         // validate every N updates; 0 = at the end of each epoch
  int64_t checkpoint_every = 0;    // save last/ every N updates; 0 = at each validation
  // Also keep the model of each of the main phase's last N validations as RUN/step-S (S = the
  // update it was taken at; model and trainer state, no optimizer), for `engram average`. Older
  // ones are removed as newer ones are written; 0 = none.
  int keep_checkpoints = 0;
  int patience = 0;                // stop after N validations without improvement; 0 = never
  // Which of equally good validations best/ holds: "earliest" (a tie keeps the earlier
  // checkpoint) or "latest" (a tie replaces it: for a metric that saturates, such as a sequence
  // accuracy reaching 1 early on a validation set easier than the test set, so that best/ is
  // not stuck at the first epoch that reached it). Ties never reset patience.
  std::string best_ties = "earliest";
  int64_t log_every = 50;          // progress/metrics every N updates
  uint64_t seed = 1;
  std::string run_dir = "runs/default";
  optim::OptimizerConfig optimizer;
  optim::ScheduleConfig schedule;
  optim::ClipConfig clip;
  // NaN guard: a batch whose loss or gradient is not finite is reported (step, batch and the
  // first parameter with a non-finite gradient) and its update skipped; this many such batches
  // in a row end the run with an error (0 = never).
  int max_bad_steps = 10;
  DistributedConfig distributed;  // under mpirun (train/distributed.h)
  // Fine-tuning: a fresh run starts from the weights of this checkpoint directory (DIR/best,
  // DIR/last or a copy: model.safetensors and config.yaml) instead of a random init. The model
  // name, every parameter's name and shape and every value's finiteness are checked, and each of
  // the task's checkpoint files (a vocabulary) must be byte-identical to the checkpoint's, so the
  // weights never meet other ids. A resumed run ignores it (its last/ holds the weights).
  std::string init_from;
  // Products of the forward and backward passes: "fp32", or "bf16" (mixed precision: every
  // product's operands rounded to bf16, sums, weights, gradients and the optimizer's state in
  // fp32; kernels::Bf16Products). bf16 needs oneDNN's bf16 matmul (AVX512-BF16 or AMX).
  std::string precision = "fp32";

  template <class V>
  void visit(V& v) {
    v("max_epochs", max_epochs, "stop after this many epochs");
    v("max_steps", max_steps, "stop after this many updates (0 = no limit)");
    v("max_minutes", max_minutes, "stop after this many minutes (0 = no limit)");
    v("valid_every", valid_every, "validate every N updates (0 = each epoch)");
    v("checkpoint_every", checkpoint_every, "save the last checkpoint every N updates (0 = at validation)");
    v("keep_checkpoints", keep_checkpoints,
      "keep the model of each of the last N validations as RUN/step-S, for engram average (0 = none)");
    v("patience", patience, "early stopping: validations without improvement (0 = off)");
    v("best_ties", best_ties, "earliest | latest: which of equally good validations best/ keeps");
    v("log_every", log_every, "progress and metrics every N updates");
    v("seed", seed, "random seed (data order, init, dropout)");
    v("run_dir", run_dir, "directory for checkpoints and metrics");
    v("optimizer", optimizer, "optimizer");
    v("schedule", schedule, "learning-rate schedule");
    v("clip", clip, "gradient clipping (per value, then per parameter, then global norm)");
    v("max_bad_steps", max_bad_steps, "stop after this many non-finite batches in a row (0 = never)");
    v("distributed", distributed, "data-parallel training under mpirun (docs/distributed.md)");
    v("init_from", init_from, "fine-tune: start a fresh run from this checkpoint directory's weights ('' = random init)");
    v("precision", precision, "fp32 | bf16: the training products' precision (bf16: fp32 weights, gradients and optimizer)");
  }
};

// The randomness of training as pure functions of (seed, epoch, batch index), so a resumed run
// draws exactly what an uninterrupted one does, and every task draws it the same way (no task
// invents its own formula): batch_seed seeds one batch's dropout masks, noise and generated
// examples; epoch_seed one epoch's data order. splitmix64 of the three words.
uint64_t batch_seed(uint64_t seed, int epoch, int64_t index);
uint64_t epoch_seed(uint64_t seed, int epoch);  // batch_seed(seed, epoch, -1)

// Every check the Trainer makes of its config (limits, clipping, the optimizer's and schedule's
// options), so a family can validate a run completely before it writes anything.
void check_trainer_config(const TrainerConfig& cfg);

// Data parallelism (train/distributed.h): with N ranks, rank r computes shard r of every batch:
// the examples shard_range(n, shard) of the batch's n, in the batch's order. A task that
// supports it (TrainTask::shardable) scales its loss so that the gradients of the N shards sum to
// the gradient one process computes on the whole batch (a mean divides by the whole batch's
// count, not the shard's; a regulariser is added on rank 0 only) and reports the shard's
// loss_sum and units (the ranks' are summed). A shard may be empty (fewer examples than ranks):
// it reports {0, 0} and adds no gradient. Random draws keyed by the batch (noise, augmentation)
// are drawn for the whole batch on every rank, in the batch's order, and the shard keeps its own,
// so they are those of one process; dropout masks are drawn per rank from
// shard_seed(batch_seed(...), shard): the same distribution, not the same masks.
struct Shard {
  int rank = 0;
  int size = 1;
};
std::pair<int64_t, int64_t> shard_range(int64_t n, Shard shard);  // [begin, end)
uint64_t shard_seed(uint64_t seed, Shard shard);                   // seed itself on rank 0

// What one batch reports back.
struct BatchResult {
  double loss_sum = 0;  // summed loss over the batch's units (the gradient is of the mean or sum: the task decides)
  int64_t units = 0;    // tokens / questions / sequences in the batch (for loss per unit and units/s)
};

// Validation metrics by name; the task names which one decides "best".
using Metrics = std::map<std::string, double>;

// A training phase before the main one (MemN2N's linear start): its own epochs, patience and
// constant learning rate, a fresh optimizer, epochs and steps counted from 0 (so its data order
// and draws are those of a run of its own), validation on the task's primary metric of the phase;
// best/ is kept for the main phase only. The main phase is the Trainer's config.
// The config's limits bound every phase: a phase ends after min(its max_epochs, train.max_epochs)
// epochs (train.max_epochs 0: its own) and after train.max_steps updates of its own (then the
// next phase starts), so a run of P phases makes at most P x train.max_steps updates;
// train.max_minutes is one clock over all phases and ends the run where it is (resumable).
struct TrainPhase {
  std::string name;   // "linear_start"
  int max_epochs = 1;
  int patience = 0;   // end the phase after this many validations without improvement (0 = never)
  float lr = 0;
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;
  virtual nn::ParamStore& params() = 0;
  // Model name and config for checkpoints (config.yaml).
  virtual std::string model_name() const = 0;
  virtual YAML::Node model_config() const = 0;
  virtual int64_t batches_per_epoch() const = 0;
  // Called at the start of each epoch (also when resuming mid-epoch) to fix the data order of
  // that epoch as a pure function of (seed, epoch).
  virtual void begin_epoch(int epoch, uint64_t seed) = 0;
  // Forward + backward of batch `index` of the current epoch; gradients ACCUMULATE into params()
  // (the trainer zeroes them before, and checks, clips and steps after: a task never clips).
  // A non-finite loss_sum makes the trainer skip the update (the NaN guard).
  virtual BatchResult train_batch(int64_t index) = 0;
  // Evaluate on held-out data (no gradients). Must contain primary_metric().
  virtual Metrics validate() = 0;
  virtual std::string primary_metric() const = 0;  // e.g. "bleu", "loss", "error"
  virtual bool higher_is_better() const = 0;
  // Extra state to put in / take from trainer.json (e.g. linear-start phase); optional.
  virtual nlohmann::json extra_state() const { return nullptr; }
  // Files every checkpoint directory gets a copy of (e.g. vocabularies), so that RUN/best alone
  // is a usable model directory.
  virtual std::vector<std::filesystem::path> checkpoint_files() const { return {}; }
  virtual void load_extra_state(const nlohmann::json&) {}
  // Phases before the main one, in order (one resumable run goes through all of them, then the
  // main phase); begin_phase(p) is called as phase p starts (p == phases().size(): the main one).
  virtual std::vector<TrainPhase> phases() const { return {}; }
  virtual void begin_phase(int phase) {}
  // Told after each validation; optional.
  virtual void after_validation(const Metrics&) {}
  // Whether the loss per unit is a cross-entropy in nats, so exp(loss) is a perplexity worth
  // showing (not for the NTM's bits per sequence).
  virtual bool reports_perplexity() const { return true; }
  // Whether train_batch computes only shard() of each batch, as the Shard comment above says
  // (needed to train with more than one rank).
  virtual bool shardable() const { return false; }
  void set_shard(Shard s) { shard_ = s; }
  const Shard& shard() const { return shard_; }

 private:
  Shard shard_;
};

// One update, exactly as Trainer::run does it for every batch: zero the gradients, the task's
// forward + backward of batch `index` (of the epoch the task was last told of in begin_epoch),
// the NaN guard's check, clipping (cfg.clip), the optimizer step at the current learning rate.
// Public so that a benchmark times the update training runs, not a copy of it.
class Updater {
 public:
  // Builds the optimizer cfg.optimizer names over task.params().
  Updater(TrainTask& task, const TrainerConfig& cfg);
  struct Result {
    BatchResult batch;
    bool skipped = false;    // a non-finite loss or gradient: no update
    double grad_norm = 0;    // before clipping
    std::string bad_param;   // skipped: the first parameter with a non-finite gradient ("" if none)
    double allreduce_s = 0;  // seconds spent summing gradients across ranks (0 with one rank)
  };
  Result update(int64_t index);
  optim::Optimizer& optimizer() { return *opt_; }

 private:
  TrainTask& task_;
  optim::ClipConfig clip_;
  bool bf16_ = false;  // train.precision bf16
  std::unique_ptr<optim::Optimizer> opt_;
};

struct TrainSummary {
  int phase = 0;       // the phase the run ended in (TrainTask::phases().size() = the main one)
  int64_t steps = 0;
  int epochs_done = 0;
  double best_metric = 0;
  bool resumed = false;
  bool early_stopped = false;
  bool out_of_time = false;  // train.max_minutes ended the run (resumable where it stopped)
  double seconds = 0;
  Metrics last_valid;
};

class Trainer {
 public:
  Trainer(TrainTask& task, TrainerConfig cfg);
  // Trains (resuming from run_dir/last if present) until a stop condition; returns a summary.
  TrainSummary run();
  // Test hook: called after every update with the step number (e.g. to simulate a kill).
  std::function<void(int64_t step)> on_step;
  // The moment train.max_minutes counts from (unset: the start of run()). A recipe that trains
  // several runs in one command (MemN2N's seeds and tasks) gives each the command's start, so
  // the limit bounds the command; a run that starts past it trains nothing (out_of_time).
  std::optional<std::chrono::steady_clock::time_point> started;

 private:
  void init_from_checkpoint(const std::filesystem::path& from);  // train.init_from (fresh runs)

  TrainTask& task_;
  TrainerConfig cfg_;
};

}  // namespace engram::train
