// NTM tasks on the shared Trainer: the paper's recipe, the TrainTask adapter (generated batches
// as a pure function of (seed, epoch, batch), so resuming replays the same data) and the NaN guard.
// Dims: B batch, T steps.
#include "engram/models/ntm/task.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "engram/core/memory.h"
#include "engram/core/ops.h"
#include "engram/io/config.h"
#include "engram/models/registry.h"
#include "engram/optim/clip.h"
#include "engram/optim/factory.h"

namespace engram::models {

namespace {

using models::NtmArchitecture;
using models::NtmTaskKind;
namespace tasks = engram::data::tasks;

class NtmTrainTask : public train::TrainTask {
 public:
  explicit NtmTrainTask(const NtmTrainConfig& cfg)
      : cfg_(cfg), rng_(cfg.train.seed), model_(cfg.ntm, rng_), graph_(true, size_t{1} << 24) {
    ENGRAM_CHECK(cfg.data.batch_size >= 1 && cfg.data.batches_per_epoch >= 1 && cfg.data.valid_sequences >= 1,
                 "ntm: data.batch_size {}, data.batches_per_epoch {} and data.valid_sequences {} must be >= 1", cfg.data.batch_size,
                 cfg.data.batches_per_epoch, cfg.data.valid_sequences);
    // The two generated sets are held whole: their memory is checked before (the batches' own
    // size, a lower bound) and while they are drawn (every vector counted).
    auto hold = [](std::vector<tasks::SeqBatch>& set, tasks::SeqBatch b, double& bytes, std::string_view what) {
      bytes += static_cast<double>(sizeof b) +
               sizeof(float) * static_cast<double>(b.input.size() + b.target.size() + b.mask.size());
      core::check_memory(bytes, what);
      set.push_back(std::move(b));
    };
    const std::string valid_what = fmt::format("ntm: data.valid_sequences {}", cfg.data.valid_sequences);
    core::check_memory(static_cast<double>(sizeof(tasks::SeqBatch)) * cfg.data.valid_sequences, valid_what);
    core::Rng vr(cfg.data.valid_seed);
    double bytes = 0;
    for (int i = 0; i < cfg.data.valid_sequences; ++i)
      hold(valid_, models::make_task_batch(cfg.ntm.task, 1, vr), bytes, valid_what);
    const NtmExtrapolationSet& x = cfg.data.extrapolation;
    ENGRAM_CHECK(x.sequences >= 0, "ntm: data.extrapolation.sequences {} must be >= 0", x.sequences);
    ENGRAM_CHECK(cfg.ntm.task.task == models::NtmTaskKind::kRepeatCopy || (x.min_repeat == 0 && x.max_repeat == 0),
                 "ntm: data.extrapolation.min_repeat {} / max_repeat {}: a {} task does not repeat (repeat-copy only)",
                 x.min_repeat, x.max_repeat, models::task_name(cfg.ntm.task.task));
    if (x.sequences > 0) {
      const models::NtmTaskConfig& t = cfg.ntm.task;
      const int lo = x.min_len > 0 ? x.min_len : t.min_len, hi = x.max_len > 0 ? x.max_len : t.max_len;
      const int rlo = x.min_repeat > 0 ? x.min_repeat : t.min_repeat;
      const int rhi = x.max_repeat > 0 ? x.max_repeat : t.max_repeat;
      ENGRAM_CHECK(lo >= 1 && lo <= hi && rlo >= 1 && rlo <= rhi,
                   "ntm: data.extrapolation lengths {}-{} and repeats {}-{} must be non-empty positive ranges", lo, hi, rlo,
                   rhi);
      const std::string what = fmt::format("ntm: data.extrapolation.sequences {}", x.sequences);
      core::check_memory(static_cast<double>(sizeof(tasks::SeqBatch)) * x.sequences, what);
      core::Rng xr(x.seed);
      bytes = 0;
      for (int i = 0; i < x.sequences; ++i) {
        const int length = lo + static_cast<int>(xr.below(static_cast<uint64_t>(hi - lo + 1)));
        const int repeat = rlo + static_cast<int>(xr.below(static_cast<uint64_t>(rhi - rlo + 1)));
        hold(extrap_, models::make_task_batch_at(t, length, repeat, 1, xr), bytes, what);
      }
    }
  }

  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return model_.name(); }
  YAML::Node model_config() const override { return model_.config(); }
  int64_t batches_per_epoch() const override { return cfg_.data.batches_per_epoch; }
  bool reports_perplexity() const override { return false; }  // the loss is bits per sequence
  void begin_epoch(int epoch, uint64_t seed) override {
    epoch_ = epoch;
    seed_ = seed;
  }

  bool shardable() const override { return true; }

  // Sequences [lo, hi) of a time-major batch.
  static tasks::SeqBatch slice_sequences(const tasks::SeqBatch& b, int64_t lo, int64_t hi) {
    tasks::SeqBatch s;
    s.steps = b.steps, s.batch = hi - lo, s.in_width = b.in_width, s.out_width = b.out_width;
    for (int64_t t = 0; t < b.steps; ++t) {
      const int64_t row = t * b.batch;
      s.input.insert(s.input.end(), b.input.begin() + (row + lo) * b.in_width, b.input.begin() + (row + hi) * b.in_width);
      s.target.insert(s.target.end(), b.target.begin() + (row + lo) * b.out_width,
                      b.target.begin() + (row + hi) * b.out_width);
      s.mask.insert(s.mask.end(), b.mask.begin() + row + lo, b.mask.begin() + row + hi);
    }
    return s;
  }

  train::BatchResult train_batch(int64_t index) override {
    core::Rng rng(train::batch_seed(seed_, epoch_, index));
    // The whole batch is generated on every rank and a rank keeps its shard's sequences; the loss
    // is a mean per sequence, scaled to the shard's share of the batch.
    tasks::SeqBatch batch = models::make_task_batch(cfg_.ntm.task, cfg_.data.batch_size, rng);
    const int64_t all = batch.batch;
    const auto [lo, hi] = train::shard_range(all, shard());
    if (lo == hi) return {0, 0};
    if (hi - lo < all) batch = slice_sequences(batch, lo, hi);
    graph_.reset();
    models::SeqLoss l = models::sequence_loss(graph_, model_.seq(), batch);
    const double nan = std::nan("");
    if (l.non_finite) {  // NaN guard: report, then a non-finite loss makes the trainer skip the update
      std::fprintf(stderr, "ntm: NaN guard: non-finite %s weighting at time step %d (epoch %d, batch %lld); "
                   "batch skipped\n", l.non_finite->head.c_str(), l.non_finite->step, epoch_ + 1,
                   static_cast<long long>(index));
      return {nan, hi - lo};
    }
    // The Trainer checks the gradient and clips it (train.clip).
    graph_.backward(hi - lo < all ? core::scale(l.loss, static_cast<float>(hi - lo) / static_cast<float>(all)) : l.loss);
    return {l.bits * static_cast<double>(hi - lo), hi - lo};
  }

  train::Metrics validate() override {
    train::Metrics m = score(valid_, "");
    if (!extrap_.empty())
      for (auto& kv : score(extrap_, "extrap_")) m.insert(kv);
    m["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    return m;
  }
  std::string primary_metric() const override { return extrap_.empty() ? "bits" : "extrap_bits"; }
  bool higher_is_better() const override { return false; }

 private:
  NtmTrainConfig cfg_;
  core::Rng rng_;  // initialisation only
  models::NtmTaskModel model_;
  core::Graph graph_;
  // Mean cost and wrong bits per sequence over `set`, keys prefixed by `prefix`; sequences whose
  // weighting went non-finite are counted as skipped.
  train::Metrics score(const std::vector<tasks::SeqBatch>& set, const std::string& prefix) const {
    core::Graph g(false, size_t{1} << 24);
    double bits = 0, errors = 0;
    int64_t n = 0, skipped = 0;
    for (const tasks::SeqBatch& b : set) {
      g.reset();
      models::SeqLoss l = models::sequence_loss(g, model_.seq(), b);
      if (l.non_finite) {
        ++skipped;
        continue;
      }
      bits += l.bits, errors += l.bit_errors, ++n;
    }
    const double nan = std::nan("");
    return {{prefix + "bits", n ? bits / n : nan}, {prefix + "bit_errors", n ? errors / n : nan},
            {prefix + "skipped", double(skipped)}};
  }

  std::vector<tasks::SeqBatch> valid_;   // one sequence each
  std::vector<tasks::SeqBatch> extrap_;  // one sequence each; empty = no extrapolation set
  int epoch_ = 0;
  uint64_t seed_ = 1;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();  // wall clock of this process
};

}  // namespace

NtmTrainConfig default_ntm_train_config(NtmTaskKind task, NtmArchitecture arch) {
  NtmTrainConfig c;
  c.ntm.architecture = arch;
  c.ntm.task = models::default_task_config(task);
  // Graves et al. 2014, tables 1-3: LSTM controller of 100 units, 128 x 20 memory, one read and
  // one write head, lr 1e-4 on every task; the LSTM baseline 3 x 256 (repeat copy 3 x 512),
  // lr 3e-5 (recall 1e-4). RMSProp momentum 0.9 in Graves (2013)'s form (eq. 38-41: alpha 0.95,
  // centered, 1e-4 under the square root). The form matters: with PyTorch's (uncentered, 1e-8
  // added to the root) associative recall did not converge in 563,000 updates; with this one it
  // does in ~20,000 (bench/results_ntm.md).
  c.ntm.lstm.hidden_size = task == NtmTaskKind::kRepeatCopy ? 512 : 256;
  auto& o = c.train.optimizer;
  o.name = "rmsprop";
  o.lr = arch == NtmArchitecture::kNtm || task == NtmTaskKind::kRecall ? 1e-4f : 3e-5f;
  o.momentum = 0.9f;
  o.alpha = 0.95f;
  o.centered = true;
  o.eps = 1e-4f;
  o.eps_in_root = true;
  c.train.max_epochs = 0;  // until max_steps / max_minutes / patience
  c.train.max_steps = 100000;
  c.train.log_every = 100;
  c.train.clip.per_value = 10.0f;  // the paper: gradients clipped element-wise to +-10
  c.train.run_dir = fmt::format("runs/{}-{}", arch == NtmArchitecture::kNtm ? "ntm" : "lstm",
                                  models::task_name(task));
  return c;
}

namespace {
NtmTrainConfig ntm_recipe(const NtmTrainConfig& probe) {
  return default_ntm_train_config(probe.ntm.task.task, probe.ntm.architecture);
}
}  // namespace

NtmTrainConfig read_ntm_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  return parse_run_config<NtmTrainConfig>(node, source, sets, &ntm_recipe);
}

std::unique_ptr<train::TrainTask> make_ntm_task(const NtmTrainConfig& cfg) {
  auto task = std::make_unique<NtmTrainTask>(cfg);
  std::printf("%s on %s: %lld parameters, batch %d, %s lr %g; run dir %s\n",
              cfg.ntm.architecture == NtmArchitecture::kNtm ? "NTM" : "LSTM baseline",
              models::task_name(cfg.ntm.task.task), static_cast<long long>(task->params().numel()),
              cfg.data.batch_size, cfg.train.optimizer.name.c_str(), cfg.train.optimizer.lr, cfg.train.run_dir.c_str());
  if (cfg.data.extrapolation.sequences > 0)
    std::printf("best/ is chosen on %d extrapolation sequences (metric extrap_bits), not on the training range\n",
                cfg.data.extrapolation.sequences);
  std::fflush(stdout);
  return task;
}

train::TrainSummary train_ntm(const NtmTrainConfig& cfg) {
  const std::unique_ptr<train::TrainTask> task = make_ntm_task(cfg);
  train::Trainer trainer(*task, cfg.train);
  return trainer.run();
}

}  // namespace engram::models
