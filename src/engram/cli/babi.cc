// `engram babi eval|explain`: End-To-End Memory Networks on the bAbI tasks; training is
// `engram train configs/babi-*.yaml`, training speed build/bench/memn2n_speed. A thin adapter over
// models/memn2n/report.h.
//   engram babi eval -m MODEL_DIR [--ensemble DIR ...] [--precision fp32|bf16]
//                                          per-task test error table (Markdown) next to the paper
//   engram babi explain -m MODEL_DIR --task 2 --question 5 -o attn.svg
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/memn2n/report.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

// MemN2N's products are tiny ([B, D] x [D, V]): one thread by default, none spinning idle.
struct BabiEvalArgs {
  std::string model;
  models::BabiEvalOptions options;
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();  // --precision
  int threads = 1;
};

struct ExplainArgs {
  std::string model, svg;
  models::BabiExplainOptions options;
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();  // --precision
  int threads = 1;
};

void run_explain(const ExplainArgs& a) {
  use_threads(a.threads);
  models::BabiExplainOptions o = a.options;
  o.precision = a.decode->precision;
  const models::BabiExplanation e = models::explain_babi(a.model, o);
  std::fputs(e.text.c_str(), stdout);
  if (a.svg.empty()) return;
  io::write_output_file(a.svg, e.svg);
  std::printf("wrote %s\n", a.svg.c_str());
}

}  // namespace

void register_babi(CLI::App& app) {
  auto* babi = app.add_subcommand("babi", "End-To-End Memory Networks on the bAbI tasks");
  babi->require_subcommand(1);

  auto ev = std::make_shared<BabiEvalArgs>();
  auto* eval = babi->add_subcommand("eval", "per-task test error table (Markdown) next to the paper's");
  eval->add_option("-m,--model", ev->model, "model directory (or a per-task tree of task-T/model)")->required();
  eval->add_option("--data", ev->options.data, "bAbI directory (default: the one the model was trained on)");
  eval->add_option("--split", ev->options.split, "the model's own split")
      ->check(CLI::IsMember({"test", "valid", "train"}));
  eval->add_flag("--json", ev->options.json, "also print the numbers as one JSON line");
  add_ensemble_dirs_option(eval, ev->options.ensemble);
  add_precision_flag(eval, ev->decode);
  add_threads_option(eval, ev->threads);
  eval->callback([ev] {
    use_threads(ev->threads);
    models::BabiEvalOptions o = ev->options;
    o.precision = ev->decode->precision;
    std::fputs(models::babi_eval_report(ev->model, o).c_str(), stdout);
  });

  auto ex = std::make_shared<ExplainArgs>();
  auto* explain = babi->add_subcommand("explain", "attention of every hop over a test story");
  add_model_option(explain, ex->model);
  explain->add_option("--task", ex->options.task, "task (0 = the model's first)")->check(CLI::Range(0, 20));
  explain->add_option("--question", ex->options.question, "index of the test question in the task (0-based)")
      ->check(non_negative<int>());
  add_output_option(explain, ex->svg, "also write the attention as an SVG heatmap");
  explain->add_option("--data", ex->options.data, "bAbI directory (default: the one the model was trained on)");
  add_ensemble_dirs_option(explain, ex->options.ensemble);
  add_precision_flag(explain, ex->decode);
  add_threads_option(explain, ex->threads);
  explain->callback([ex] { run_explain(*ex); });
}

}  // namespace engram::cli
