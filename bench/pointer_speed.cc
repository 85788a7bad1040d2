// Pointer Network training and decoding speed on random planar TSP instances (the workload of
// bench/pointer_speed.sh, mirrored by bench/pytorch/pointer.py): the model of
// configs/pointer-sort.yaml's shapes with the TSP rules (2-D points, linear embedding E 128,
// LSTM encoder and decoder H 256, additive pointer, no glimpse) by default.
// Training = train::Updater (forward + backward + global-norm clipping at 2 + Adam, the update
// `engram train` runs) on one fixed batch of B instances of n points whose targets are random
// tours from city 0: sequences/s. Decoding = greedy search through models::predict_pointer (the
// decode::StepModel path `engram pointer eval` runs; the rules fix every output at n + 1 steps),
// B instances at once and instances one at a time (on the packed fp32 copy of the weights, as
// run_line and `engram serve` decode; --no-packed: the plain weights): instances/s, with freshly
// initialised weights.
//   build/bench/pointer_speed [--batch 128] [--n 10,50] [--steps 5] [--warmup 2]
//       [--decode-batches 2] [--singles 20] [--what train,greedy,single] [--threads 1] [--set glimpses=1 ...]
// Dims: B batch, n points per instance.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "speed_options.h"
#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/ops.h"
#include "engram/core/rng.h"
#include "engram/io/config.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/pointer/model.h"
#include "engram/nn/param_store.h"
#include "engram/train/trainer.h"

namespace {

using namespace engram;
namespace tasks = data::tasks;

using Clock = std::chrono::steady_clock;

struct SpeedArgs {
  int batch = 128;
  std::vector<int> n = {10, 50};
  int steps = 5, warmup = 2, decode_batches = 2, singles = 20, threads = 1;
  bool packed = true;  // one-instance decoding on the packed fp32 weights (as run_line and serve)
  std::vector<std::string> what = {"train", "greedy", "single"};
  std::vector<std::string> sets;
};

// `count` random instances of n points, each with a random tour from city 0 as its target.
std::vector<tasks::PointerInstance> random_instances(core::Rng& rng, int count, int n) {
  std::vector<tasks::PointerInstance> out(count);
  for (auto& in : out) {
    in.dim = 2;
    in.points = tasks::random_points(n, 2, rng);
    in.target.resize(n);
    std::iota(in.target.begin(), in.target.end(), 0);
    rng.shuffle(in.target.begin() + 1, in.target.end());
  }
  return out;
}

// The training step's work on one fixed batch, for train::Updater.
class OneBatchTask : public train::TrainTask {
 public:
  OneBatchTask(models::PointerNet& model, std::span<const tasks::PointerInstance> set)
      : model_(model), src_(models::pointer_source(set)) {
    for (const auto& in : set) targets_.push_back(in.target);
  }
  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return model_.name(); }
  YAML::Node model_config() const override { return model_.config(); }
  int64_t batches_per_epoch() const override { return 1; }
  void begin_epoch(int, uint64_t) override {}
  train::BatchResult train_batch(int64_t) override {
    g_.reset();
    core::Var sum = model_.loss(g_, src_, targets_);
    g_.backward(core::scale(sum, 1.0f / static_cast<float>(src_.batch)));  // the batch mean, as PointerTrainTask
    return {sum.data()[0], src_.batch};
  }
  train::Metrics validate() override { return {}; }
  std::string primary_metric() const override { return "loss"; }
  bool higher_is_better() const override { return false; }

 private:
  models::PointerNet& model_;
  decode::SourceBatch src_;
  std::vector<std::vector<int>> targets_;
  core::Graph g_;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Processor time of the whole process (all threads) since `c0`, in ms: robust to other load on a
// shared machine, where wall time is not.
double cpu_ms_since(std::clock_t c0) { return 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC; }

void run_speed(const SpeedArgs& a) {
  ENGRAM_CHECK(a.batch >= 1 && a.steps >= 1 && a.warmup >= 0 && a.decode_batches >= 1 && a.singles >= 1,
               "pointer speed: --batch, --steps, --decode-batches and --singles must be >= 1, --warmup >= 0");
  for (int n : a.n) ENGRAM_CHECK(n >= 2 && n <= 1000, "pointer speed: --n {} outside 2..1000", n);
  models::PointerConfig cfg;
  cfg.task = models::PointerTask::kTsp;
  cfg.embed_dim = 128;
  cfg.hidden = 256;
  for (const std::string& s : a.sets) io::apply_override(cfg, s);
  ENGRAM_CHECK(cfg.task == models::PointerTask::kTsp, "pointer speed: the workload is TSP (random tours); --set task "
               "must stay tsp");
  const bool packed_f32 = a.packed && core::kernels::packed_f32_kernel();
  auto wants = [&](const char* w) { return std::find(a.what.begin(), a.what.end(), w) != a.what.end(); };
  core::Rng data_rng(7);
  for (int n : a.n) {
    core::Rng init(1);
    models::PointerNet model(cfg, init);
    std::printf("pointer n %d: %s, E %d, H %d, %d glimpse(s), clip %g, %d params, B %d; BLAS %s with %d thread%s\n", n,
                cfg.cell == models::PointerCell::kLstm ? "LSTM" : "GRU", cfg.embed_dim, cfg.hidden, cfg.glimpses,
                cfg.logit_clip, static_cast<int>(model.params().numel()), a.batch, core::kernels::blas_backend(),
                a.threads, a.threads == 1 ? "" : "s");
    const std::vector<tasks::PointerInstance> set = random_instances(data_rng, a.batch, n);
    if (wants("train")) {
      OneBatchTask task(model, set);
      train::TrainerConfig tc;
      tc.optimizer.name = "adam";
      tc.optimizer.lr = 1e-4f;
      tc.clip.global_norm = 2.0f;
      train::Updater updater(task, tc);
      double loss = 0;
      auto one_step = [&] { loss = updater.update(0).batch.loss_sum / a.batch; };
      for (int i = 0; i < a.warmup; ++i) one_step();
      const auto t0 = Clock::now();
      const std::clock_t c0 = std::clock();
      for (int i = 0; i < a.steps; ++i) one_step();
      const double sec = seconds_since(t0) / a.steps, cpu = cpu_ms_since(c0) / (double(a.steps) * a.batch);
      std::printf("train n %d: %.1f sequences/s, cpu %.3f ms per sequence (%.1f ms/step, loss %.3f, %d timed steps)\n",
                  n, a.batch / sec, cpu, sec * 1e3, loss, a.steps);
      std::fflush(stdout);
    }
    core::Rng init2(2);
    models::PointerNet fresh(cfg, init2);
    if (wants("greedy")) {
      models::PointerDecodeOptions o;
      o.batch_size = a.batch;
      models::predict_pointer(fresh, set, o);  // warm-up
      const auto t0 = Clock::now();
      const std::clock_t c0 = std::clock();
      size_t steps = 0;
      for (int i = 0; i < a.decode_batches; ++i) steps = models::predict_pointer(fresh, set, o)[0].output.size() + 1;
      const double sec = seconds_since(t0), cpu = cpu_ms_since(c0) / (double(a.decode_batches) * a.batch);
      std::printf("greedy batch n %d: %.1f instances/s, cpu %.3f ms per instance (%zu steps each, %d batches of %d)\n",
                  n, a.decode_batches * a.batch / sec, cpu, steps, a.decode_batches, a.batch);
      std::fflush(stdout);
    }
    if (wants("single")) {
      const std::vector<tasks::PointerInstance> singles = random_instances(data_rng, a.singles, n);
      const core::PackedWeights packed = nn::packed_weights(fresh.params());
      models::PointerDecodeOptions o;
      o.batch_size = 1;
      o.packed_weights = packed_f32 ? &packed : nullptr;
      models::predict_pointer(fresh, std::span(singles).first(1), o);  // warm-up
      const auto t0 = Clock::now();
      const std::clock_t c0 = std::clock();
      for (const auto& in : singles) models::predict_pointer(fresh, std::span(&in, 1), o);
      const double sec = seconds_since(t0), cpu = cpu_ms_since(c0) / a.singles;
      std::printf("greedy single n %d: %.1f instances/s, cpu %.3f ms per instance (%d instances one at a time, %s)\n",
                  n, a.singles / sec, cpu, a.singles, packed_f32 ? "packed fp32 weights" : "plain weights");
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Pointer Network training and greedy decoding speed on random TSP instances (bench/pointer_speed.sh)",
               "pointer_speed"};
  app.option_defaults()->always_capture_default();
  auto a = std::make_shared<SpeedArgs>();
  app.add_option("--batch", a->batch, "training and batched-decoding batch (instances)");
  app.add_option("--n", a->n, "points per instance, e.g. 10,50")->delimiter(',');
  app.add_option("--steps", a->steps, "timed training steps");
  app.add_option("--warmup", a->warmup, "untimed training steps first (the graph arena settles)");
  app.add_option("--decode-batches", a->decode_batches, "timed batches of --batch instances decoded");
  app.add_option("--singles", a->singles, "instances decoded one at a time");
  app.add_flag("--packed,!--no-packed", a->packed,
               "one-instance decoding on the packed fp32 weights (engram's run_line and serve path)");
  engram::bench::add_threads_option(app, a->threads);
  app.add_option("--what", a->what, "comma list of train, greedy, single")
      ->delimiter(',')
      ->check(CLI::IsMember({"train", "greedy", "single"}));
  app.add_option("--set", a->sets, "override a model key, e.g. --set glimpses=1")->take_all();
  return engram::bench::speed_main(app, argc, argv, a->threads, [&] { run_speed(*a); });
}
