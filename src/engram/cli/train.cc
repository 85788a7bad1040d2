// `engram train CONFIG.yaml [--set key=value ...]`: trains the model the config names (`model:`)
// on the shared Trainer; `engram train RUN_DIR` resumes a run from its saved train.yaml (any run
// resumes from RUN/last when it exists). A thin adapter over models/seq2seq_train.h; MemN2N and
// the NTM have their own `engram babi train` / `engram ntm train`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/core/kernels/blas.h"
#include "engram/io/config.h"
#include "engram/models/seq2seq/task.h"
#include "engram/train/trainer.h"

namespace engram::cli {

namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::string config;              // CONFIG.yaml or a run directory
  std::vector<std::string> sets;   // --set key=value
  bool dump = false;
  int threads = 1;                 // BLAS / OpenMP threads
};

void train_seq2seq(const YAML::Node& node, const std::string& source, const TrainArgs& a) {
  models::Seq2SeqTrainConfig cfg;
  io::from_yaml(node, cfg, source);
  for (const std::string& s : a.sets) io::apply_override(cfg, s);
  if (a.dump) {
    std::printf("%s", io::dump_config(cfg).c_str());
    return;
  }
  models::Seq2SeqTask task(cfg);
  train::Trainer trainer(task, task.config().train);
  train::TrainSummary s = trainer.run();
  std::printf("done: %lld steps in %.1f s%s%s; best %s %.2f; model in %s/best\n", static_cast<long long>(s.steps),
              s.seconds, s.resumed ? " (resumed)" : "", s.early_stopped ? " (early stop)" : "",
              task.primary_metric().c_str(), s.best_metric, task.config().train.run_dir.c_str());
}

void run_train(const TrainArgs& a) {
  core::kernels::set_blas_threads(a.threads);
  std::string file = a.config;
  if (fs::is_directory(file)) {
    file = (fs::path(file) / "train.yaml").string();
    ENGRAM_CHECK(fs::exists(file), "{}: a run directory needs its train.yaml", a.config);
  }
  const YAML::Node node = io::load_yaml_file(file);
  ENGRAM_CHECK(node.IsMap() && node["model"], "{}: the config needs a 'model:' key (seq2seq)", file);
  const std::string model = node["model"].as<std::string>();
  if (model == models::Seq2Seq::kName) return train_seq2seq(node, file, a);
  ENGRAM_CHECK(false, "{}: engram train knows model 'seq2seq', not '{}' (MemN2N: engram babi train; NTM: engram ntm train)",
               file, model);
}

}  // namespace

void register_translate(CLI::App& app);  // translate.cc
void register_attention(CLI::App& app);  // attention.cc

void register_seq2seq(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "train a model from a YAML config (resumes an existing run directory)");
  cmd->add_option("config", a->config, "CONFIG.yaml (with model: seq2seq), or a run directory to resume")->required();
  cmd->add_option("--set", a->sets, "override a config key, e.g. --set seq2seq.hidden=512 (repeatable)");
  cmd->add_flag("--dump-config", a->dump, "print the effective config as YAML and exit");
  cmd->add_option("--threads", a->threads, "BLAS/OpenMP threads (default 1: these models' small per-step products gain little from a second thread and lose a lot when the cores are shared)")->check(CLI::PositiveNumber);
  cmd->callback([a] { run_train(*a); });
  register_translate(app);
  register_attention(app);
}

}  // namespace engram::cli
