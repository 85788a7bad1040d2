// The memn2n family's registry entry: a BabiConfig run (every seed, linear start then the main
// phase, joint or one model per task) and a model directory answering questions typed as text.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "engram/core/kernels/blas.h"
#include "engram/models/memn2n/task.h"
#include "engram/io/files.h"
#include "engram/models/registry.h"
#include "engram/models/training.h"
#include "engram/train/run_config.h"

namespace engram::models {

namespace {

namespace fs = std::filesystem;

BabiConfig babi_recipe(const BabiConfig& probe) { return default_babi_config(probe.data.joint); }

std::string train_memn2n(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const BabiConfig cfg = parse_run_config<BabiConfig>(node, source, sets, &babi_recipe);
  ENGRAM_CHECK(!cfg.task.seeds.empty(), "memn2n: task.seeds is empty");
  for (size_t i = 0; i < cfg.task.seeds.size(); ++i)  // each seed trains into RUN/seed-S: one run each
    for (size_t j = 0; j < i; ++j)
      ENGRAM_CHECK(cfg.task.seeds[i] != cfg.task.seeds[j], "memn2n: task.seeds holds {} twice", cfg.task.seeds[i]);
  ENGRAM_CHECK(cfg.data.batch_size >= 1, "memn2n: data.batch_size must be >= 1, got {}", cfg.data.batch_size);
  ENGRAM_CHECK(std::isfinite(cfg.data.random_noise) && cfg.data.random_noise >= 0 && cfg.data.random_noise <= 1,
               "memn2n: data.random_noise {} must be a fraction in [0, 1] (0 = off)", cfg.data.random_noise);
  ENGRAM_CHECK(cfg.task.lr_decay_epochs >= 1, "memn2n: task.lr_decay_epochs must be >= 1, got {}",
               cfg.task.lr_decay_epochs);
  const std::string dir = babi_data_dir(cfg);
  const std::vector<int> tasks = parse_babi_tasks(cfg.data.tasks, dir);
  const fs::path run_dir = cfg.train.run_dir;
  // One Trainer run per seed (and per task unless joint), all under the run directory's lock.
  return train_runs(cfg.train, [&] {
    train::write_run_config(run_dir, io::dump_config(cfg));
    const auto t0 = std::chrono::steady_clock::now();  // train.max_minutes bounds every seed and task together
    bool out_of_time = false;
    if (cfg.data.joint) {
      const BabiData data = load_babi_data(cfg, tasks);
      std::printf("bAbI %s: tasks %s, %zu train / %zu valid / %zu test questions, vocabulary %d\n", dir.c_str(),
                  fmt::format("{}", fmt::join(tasks, ",")).c_str(), data.train.samples.size(),
                  data.valid.samples.size(), data.test.samples.size(), data.vocab.size());
      for (const auto& r : train_babi(cfg, data, run_dir, t0)) {
        std::printf("seed %lld: valid error %.2f%%, %.0f s (linear start %d epochs)\n", static_cast<long long>(r.seed),
                    100 * r.valid_error, r.seconds, r.linear_start_epochs);
        out_of_time = out_of_time || r.out_of_time;
      }
    } else {
      for (int t : tasks) {
        if (out_of_time) break;
        BabiConfig one = cfg;
        one.data.tasks = std::to_string(t);
        const BabiData data = load_babi_data(one, {t});
        for (const auto& r : train_babi(one, data, run_dir / fmt::format("task-{}", t), t0)) {
          std::printf("task %d seed %lld: valid error %.2f%%, %.0f s\n", t, static_cast<long long>(r.seed),
                      100 * r.valid_error, r.seconds);
          out_of_time = out_of_time || r.out_of_time;
        }
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out_of_time)
      return fmt::format("stopped by train.max_minutes after {:.0f} s; run the same command again to resume", secs);
    return fmt::format("done in {:.0f} s; evaluate with: engram babi eval -m {}", secs,
                       (cfg.data.joint ? run_dir / "model" : run_dir).string());
  });
}

std::unique_ptr<LoadedModel> load_memn2n(const fs::path& dir) {
  return std::make_unique<LoadedBabiModel>(load_babi_model(dir));
}

}  // namespace

const Family& memn2n_family() {
  static const Family f{"memn2n", "End-To-End Memory Networks: bAbI question answering",
                        &dump_run_config<BabiConfig, &babi_recipe>, &train_memn2n, &load_memn2n, "babi"};
  return f;
}

}  // namespace engram::models
