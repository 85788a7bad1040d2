// Recursive net / Tree-LSTM training speed on SST: seconds per training epoch (forward + backward
// + AdaGrad, the run's own update) with each execution, node by node and batched by level; the
// issue "Recursive networks" compares them with PyTorch and DyNet's published 18.5 s/epoch.
//   build/bench/tree_speed [CONFIG.yaml] [--set k=v ...] [--execution level,node] [--batches N]
//                          [--warmup 2] [--threads 1]
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "speed_options.h"
#include "engram/io/config.h"
#include "engram/models/tree/task.h"

namespace {

using namespace engram;

struct SpeedArgs {
  std::string config;
  std::vector<std::string> sets;
  std::vector<std::string> executions = {"level", "node"};
  int64_t batches = 0, warmup = 2;
  int threads = 1;
};

void run_speed(const SpeedArgs& a) {
  YAML::Node node;
  node["model"] = "tree";
  if (!a.config.empty()) node = io::load_yaml_file(a.config);
  const models::TreeRunConfig cfg = models::read_tree_config(node, a.config.empty() ? "<defaults>" : a.config, a.sets);
  std::string groups;  // ", embedding at 0.1"
  for (const optim::ParamLrConfig& g : cfg.train.optimizer.param_lr) groups += fmt::format(", {} at {}", g.params, g.lr);
  std::printf("%s cell, embed %d, hidden %d, %s view, batch %d, %s lr %g%s, BLAS %s with %d thread%s\n",
              models::tree_cell_name(cfg.tree.cell), cfg.tree.embed, cfg.tree.hidden,
              data::sentiment_view_name(cfg.data.view).data(), cfg.data.batch_size, cfg.train.optimizer.name.c_str(),
              cfg.train.optimizer.lr, groups.c_str(), core::kernels::blas_backend(), a.threads, a.threads == 1 ? "" : "s");
  for (const std::string& name : a.executions) {
    const models::TreeExecution exec = name == "level" ? models::TreeExecution::kByLevel : models::TreeExecution::kPerNode;
    const models::TreeEpochTiming t = models::time_tree_epoch(cfg, exec, a.batches, a.warmup);
    std::printf("%s: %.1f s per training epoch (%lld trees in %lld timed updates%s)\n", name.c_str(), t.seconds,
                static_cast<long long>(t.trees), static_cast<long long>(t.batches),
                a.batches > 0 ? ", scaled to the epoch" : "");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"seconds per SST training epoch (forward + backward + update)", "tree_speed"};
  app.option_defaults()->always_capture_default();
  SpeedArgs a;
  app.add_option("config", a.config, "run config (model: tree; default: the Tree-LSTM fine recipe)");
  app.add_option("--set", a.sets, "override a config key, e.g. --set tree.cell=rnn (repeatable)");
  app.add_option("--execution", a.executions, "executions to time")->delimiter(',')->check(CLI::IsMember({"level", "node"}));
  app.add_option("--batches", a.batches, "time this many updates and scale to the epoch (0 = the whole epoch)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  app.add_option("--warmup", a.warmup, "untimed updates first")->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  engram::bench::add_threads_option(app, a.threads);
  return engram::bench::speed_main(app, argc, argv, a.threads, [&] { run_speed(a); });
}
