// MemN2N training speed on bAbI 1k, 20 tasks jointly (the workload of bench/memn2n_speed.sh,
// mirrored by bench/pytorch/memn2n.py): questions per second over `--steps` updates of the
// training recipe's model, each one train::Updater's update (forward + backward + per-parameter
// clipping at 40 + SGD), the batches built inside the timed loop, after 20 untimed updates.
//   build/bench/memn2n_speed [--data DIR] [--steps 300] [--batch 32] [--dim 50] [--hops 3]
//                            [--encoding pe_global] [--masked] [--threads 1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "speed_options.h"
#include "engram/io/config.h"
#include "engram/models/memn2n/task.h"
#include "engram/train/trainer.h"

namespace {

using namespace engram;

struct SpeedArgs {
  std::string data, encoding = "pe_global";
  int steps = 300, batch = 32, dim = 50, hops = 3, threads = 1;
  bool masked = false;
};

void run_speed(const SpeedArgs& a) {
  models::BabiConfig cfg = models::default_babi_config(true);
  if (!a.data.empty()) cfg.data.dir = a.data;
  cfg.data.batch_size = a.batch;
  cfg.memn2n.dim = a.dim;
  cfg.memn2n.hops = a.hops;
  io::apply_override(cfg, "memn2n.encoding=" + a.encoding);
  if (a.masked) cfg.memn2n.null_slots = false;
  const models::BabiData data = models::load_babi_data(cfg, models::parse_babi_tasks("all", models::babi_data_dir(cfg)));
  const models::Memn2nConfig mc = models::memn2n_config(cfg, data);
  const int steps = a.steps, batch = a.batch, threads = a.threads;
  core::Rng rng(1);
  models::Memn2n model(mc, rng);
  models::BabiTrainTask task(cfg, model, data, false, {});
  train::Updater updater(task, cfg.train);  // the recipe's update: SGD at 0.005, each parameter clipped to norm 40
  const int64_t per_epoch = task.batches_per_epoch();
  int epoch = 0;
  int64_t index = 0, questions = 0;
  auto step = [&] {
    if (index == 0) task.begin_epoch(epoch, 1);
    questions += updater.update(index).batch.units;
    if (++index == per_epoch) index = 0, ++epoch;
  };
  for (int i = 0; i < std::min(20, steps); ++i) step();
  questions = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("engram memn2n train: %.0f questions/s  (%d steps of batch %d in %.3f s, %.3f ms/step; D %d, K %d, "
              "V %d, %s, %s, blas %s, %d thread%s)\n",
              questions / secs, steps, batch, secs, 1000 * secs / steps, mc.dim, mc.hops, mc.vocab,
              a.encoding.c_str(), mc.null_slots ? "null slots" : "masked", core::kernels::blas_backend(), threads,
              threads == 1 ? "" : "s");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MemN2N training questions/s on the bAbI 1k joint data (no checkpoints)", "memn2n_speed"};
  app.option_defaults()->always_capture_default();
  SpeedArgs a;
  app.add_option("--data", a.data, "bAbI directory (default $ENGRAM_DATA_DIR/babi/en)");
  app.add_option("--steps", a.steps, "timed updates")->check(CLI::Range(1, 1000000));
  app.add_option("--batch", a.batch, "batch size")->check(CLI::Range(1, 4096));
  app.add_option("--dim", a.dim, "embedding width D")->check(CLI::Range(1, 4096));
  app.add_option("--hops", a.hops, "hops K")->check(CLI::Range(1, 16));
  engram::bench::add_threads_option(app, a.threads);
  app.add_option("--encoding", a.encoding, "sentence encoding")->check(CLI::IsMember({"bow", "pe", "pe_global"}));
  app.add_flag("--masked", a.masked, "pad to the batch's largest memory and mask empty slots (no null slots)");
  return engram::bench::speed_main(app, argc, argv, a.threads, [&] { run_speed(a); });
}
