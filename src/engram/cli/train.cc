// `engram train CONFIG.yaml [--set key=value ...]`: trains any registered family (the config's
// `model:` names it) on the shared Trainer; `engram train RUN_DIR` resumes a run from its saved
// train.yaml (any run resumes from RUN/last when it exists). A thin adapter over
// models/registry.h.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/core/kernels/blas.h"
#include "engram/models/registry.h"

namespace engram::cli {

namespace {

struct TrainArgs {
  std::string config;              // CONFIG.yaml or a run directory
  std::vector<std::string> sets;   // --set key=value
  bool dump = false;
  int threads = 1;                 // threads (the caller and its team's helpers)
};

void run_train(const TrainArgs& a) {
  core::kernels::set_blas_threads(a.threads);
  const models::RunConfigFile run = models::read_run_config(a.config);
  std::vector<std::string> sets = a.sets;
  // Resuming RUN trains into RUN, wherever its train.yaml says it was made (a copied run directory
  // resumes as the copy).
  if (!run.run_dir.empty()) sets.push_back("train.run_dir=" + run.run_dir);
  if (a.dump) {
    std::fputs(models::effective_run_config(run, sets).c_str(), stdout);
    return;
  }
  std::printf("%s\n", models::train_run(run, sets).c_str());
}

std::string family_list() {
  std::string s;
  for (const models::Family* f : models::families()) s += fmt::format("\n  {:8} {}", f->name, f->summary);
  return s;
}

}  // namespace

void register_translate(CLI::App& app);  // translate.cc
void register_attention(CLI::App& app);  // attention.cc
void register_shortlist(CLI::App& app);  // shortlist.cc

void register_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "train any model family from a YAML config (resumes an existing run "
                                          "directory). Families:" + family_list());
  cmd->add_option("config", a->config, "CONFIG.yaml (model: <family>), or a run directory to resume")->required();
  cmd->add_option("--set", a->sets, "override a config key, e.g. --set seq2seq.hidden=512 (repeatable)");
  cmd->add_flag("--dump-config", a->dump, "print the effective config as YAML and exit");
  add_threads_option(cmd, a->threads)->capture_default_str();
  cmd->callback([a] { run_train(*a); });
}

void register_seq2seq(CLI::App& app) {
  register_train(app);
  register_translate(app);
  register_attention(app);
  register_shortlist(app);
}

}  // namespace engram::cli
