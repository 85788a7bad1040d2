// NTM (or LSTM baseline) training speed (the workload of bench/ntm_speed.sh, mirrored by
// bench/pytorch/ntm.py): sequences per second over `--steps` updates of each batch size, each one
// train::Updater's update (forward + backward + the run's clipping and optimizer, RMSProp in the
// paper's recipe), lengths cycling min_len .. max_len (the schedule of bench/pytorch/ntm.py), the
// batches generated inside the timed loop from a fixed data seed, after `--warmup` untimed updates.
//   build/bench/ntm_speed [CONFIG.yaml] [--set key=value] [--batch 1,16] [--steps 200] [--warmup 20]
// Dims: B batch, T steps.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "speed_options.h"
#include "engram/core/error.h"
#include "engram/io/config.h"
#include "engram/models/ntm/task.h"
#include "engram/train/trainer.h"

namespace {

using namespace engram;
using models::NtmArchitecture;

struct SpeedArgs {
  std::string config;             // optional run config (default: the copy recipe)
  std::vector<std::string> sets;  // --set key=value
  std::vector<int> batches = {1, 16};
  int steps = 200, warmup = 20, threads = 1;
};

// The measurement's batches: lengths (recall: items) cycling min_len .. max_len, the middle
// repeat count, from a fixed data seed; forward + backward only (the Updater does the rest).
class NtmSpeedTask : public train::TrainTask {
 public:
  NtmSpeedTask(const models::NtmTrainConfig& cfg, int batch)
      : cfg_(cfg), batch_(batch), init_(cfg.train.seed), model_(cfg.ntm, init_), graph_(true, size_t{1} << 24) {}
  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return model_.name(); }
  YAML::Node model_config() const override { return model_.config(); }
  int64_t batches_per_epoch() const override { return 1; }
  void begin_epoch(int, uint64_t) override {}
  train::BatchResult train_batch(int64_t i) override {
    const models::NtmTaskConfig& task = cfg_.ntm.task;
    const int length = task.min_len + static_cast<int>(i % (task.max_len - task.min_len + 1));
    const data::tasks::SeqBatch b =
        models::make_task_batch_at(task, length, (task.min_repeat + task.max_repeat) / 2, batch_, data_);
    graph_.reset();
    models::SeqLoss l = models::sequence_loss(graph_, model_.seq(), b);
    ENGRAM_CHECK(!l.non_finite, "speed: non-finite weighting at step {}", l.non_finite->step);
    graph_.backward(l.loss);
    return {l.bits * batch_, batch_};
  }
  train::Metrics validate() override { return {}; }
  std::string primary_metric() const override { return "bits"; }
  bool higher_is_better() const override { return false; }

 private:
  models::NtmTrainConfig cfg_;
  int batch_;
  core::Rng init_;
  models::NtmTaskModel model_;
  core::Graph graph_;
  core::Rng data_{7};
};

// `steps` timed updates of batch `batch` after `warmup` untimed ones; sequences per second.
double training_speed(const models::NtmTrainConfig& cfg, int batch, int steps, int warmup) {
  ENGRAM_CHECK(batch >= 1 && steps >= 1 && warmup >= 0, "speed: batch {}, steps {}, warmup {}", batch, steps, warmup);
  NtmSpeedTask task(cfg, batch);
  train::Updater updater(task, cfg.train);  // the run's update: clipping (train.clip) and the optimizer
  for (int i = 0; i < warmup; ++i) updater.update(i);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) updater.update(i);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(steps) * batch / secs;
}

void run_speed(const SpeedArgs& a) {
  YAML::Node node;
  node["model"] = "ntm";
  if (!a.config.empty()) node = io::load_yaml_file(a.config);
  const models::NtmTrainConfig cfg = models::read_ntm_config(node, a.config.empty() ? "<defaults>" : a.config, a.sets);
  const auto& n = cfg.ntm.ntm;
  std::printf("%s on %s (lengths %d-%d cycling), %s, BLAS %s with %d thread%s\n",
              cfg.ntm.architecture == NtmArchitecture::kNtm ? "NTM" : "LSTM baseline",
              models::task_name(cfg.ntm.task.task), cfg.ntm.task.min_len, cfg.ntm.task.max_len,
              cfg.ntm.architecture == NtmArchitecture::kNtm
                  ? fmt::format("controller {} x{}, memory {} x {}, {} read / {} write heads, {} ops", n.controller_size,
                                n.controller_layers, n.memory_slots, n.memory_width, n.read_heads, n.write_heads,
                                n.fused ? "fused" : "composed")
                        .c_str()
                  : fmt::format("{} x {}", cfg.ntm.lstm.layers, cfg.ntm.lstm.hidden_size).c_str(),
              core::kernels::blas_backend(), a.threads, a.threads == 1 ? "" : "s");
  for (int batch : a.batches) {
    const double rate = training_speed(cfg, batch, a.steps, a.warmup);
    std::printf("batch %d: %.1f sequences/s (%d timed updates)\n", batch, rate, a.steps);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"NTM / LSTM baseline training sequences/s (forward + backward + update)", "ntm_speed"};
  app.option_defaults()->always_capture_default();
  SpeedArgs a;
  app.add_option("config", a.config, "run config (model: ntm; default: the paper's copy recipe)");
  app.add_option("--set", a.sets, "override a config key, e.g. --set ntm.architecture=lstm (repeatable)");
  app.add_option("--batch", a.batches, "batch sizes, e.g. 1,16")->delimiter(',')->check(CLI::Range(1, 1024));
  app.add_option("--steps", a.steps, "timed updates per batch size")->check(CLI::Range(1, 1000000));
  app.add_option("--warmup", a.warmup, "untimed updates first")->check(CLI::Range(0, 1000000));
  engram::bench::add_threads_option(app, a.threads);
  return engram::bench::speed_main(app, argc, argv, a.threads, [&] { run_speed(a); });
}
