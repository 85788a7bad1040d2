// `engram demo`: the embedded default, no download. Trains (about two minutes on 2 cores) a
// character-level GRU encoder-decoder with Bahdanau attention on a task engram generates itself
// (dates written in many human forms -> ISO 8601 "YYYY-MM-DD", data/tasks/dates.h), then prints its
// exact-match accuracy on held-out dates, a few translations, and writes the attention heatmap of
// one of them. The recipe is configs/demo.yaml, built into the binary. A thin adapter over
// models/seq2seq/demo.h.
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/demo_config.h"
#include "engram/cli/options.h"
#include "engram/models/seq2seq/demo.h"

namespace engram::cli {

void register_demo(CLI::App& app) {
  struct DemoArgs {
    models::DemoOptions options;
    int threads = 1;  // threads (the caller and its team's helpers)
  };
  auto a = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand("demo", "train a small attention model on generated dates and show it working");
  cmd->add_option("--run-dir", a->options.run_dir, "run directory (replaced if it holds an earlier demo)");
  cmd->add_option("--minutes", a->options.minutes, "training time budget in minutes")->check(CLI::Range(0.05, 1000.0));
  cmd->add_option("--seed", a->options.seed, "random seed");
  add_threads_option(cmd, a->threads);
  cmd->callback([a] {
    use_threads(a->threads);
    std::fputs(models::run_demo(kDemoConfigYaml, a->options).c_str(), stdout);
  });
}

}  // namespace engram::cli
