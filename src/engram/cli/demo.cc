// `engram demo`: the embedded default, no download. Trains (about two minutes on 2 cores) a
// character-level GRU encoder-decoder with Bahdanau attention on a task engram generates itself
// (dates written in many human forms -> ISO "2026-11-29", data/tasks/dates.h), then prints its
// exact-match accuracy on held-out dates, a few translations, and writes the attention heatmap of
// one of them. The recipe is configs/demo.yaml, built into the binary. A thin adapter over
// models/seq2seq/task.h, the Trainer and models/seq2seq/translate.h.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/demo_config.h"
#include "engram/cli/options.h"
#include "engram/io/config.h"
#include "engram/data/tasks/dates.h"
#include "engram/eval/accuracy.h"
#include "engram/models/seq2seq/task.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/trainer.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

namespace fs = std::filesystem;

struct DemoArgs {
  std::string out = "runs/demo";
  double minutes = 1.6;  // training budget (train.max_minutes of configs/demo.yaml)
  uint64_t seed = 1;
  int threads = 1;       // BLAS / OpenMP threads
};

// configs/demo.yaml (built in), with the flags' overrides.
models::Seq2SeqTrainConfig demo_config(const DemoArgs& a) {
  const YAML::Node node = io::parse_yaml(kDemoConfigYaml, "configs/demo.yaml (built in)");
  return models::parse_run_config<models::Seq2SeqTrainConfig>(
      node, "configs/demo.yaml (built in)",
      {fmt::format("train.max_minutes={}", a.minutes), fmt::format("train.seed={}", a.seed), "train.run_dir=" + a.out});
}

void run_demo(const DemoArgs& a) {
  use_threads(a.threads);
  // A previous demo in the same directory is replaced, not resumed (the marker says it is ours).
  const fs::path out = a.out, marker = out / "DEMO";
  if (fs::exists(marker)) fs::remove_all(out);
  ENGRAM_CHECK(!fs::exists(out) || fs::is_empty(out), "{}: exists and is not a demo directory; pick --run-dir", a.out);
  fs::create_directories(out);
  std::ofstream(marker) << "written by `engram demo`; removed by the next demo run\n";

  std::printf("engram demo: dates in many written forms -> ISO 8601, learned from generated examples\n");
  const models::Seq2SeqTrainConfig cfg = demo_config(a);
  models::Seq2SeqTask task(cfg);
  train::Trainer trainer(task, cfg.train);
  const train::TrainSummary s = trainer.run();
  std::printf("trained %lld steps in %.0f s\n\n", static_cast<long long>(s.steps), s.seconds);

  // The best checkpoint on validation, as `engram translate -m RUN` would load it.
  const auto loaded = models::load_model_as<models::Translator>(a.out, "seq2seq");
  const models::Translator& tr = *loaded;
  const models::TextPairs& valid = task.valid_text();
  models::TranslateOptions o;
  o.batch_size = 250;
  std::vector<std::string> hyps;
  for (const models::Translation& t : tr.translate(valid.src, o)) hyps.push_back(t.text());
  const double acc = eval::accuracy(hyps, valid.tgt);
  std::printf("held-out accuracy (exact match, greedy): %.1f%% of %zu dates\n\n", 100 * acc, valid.src.size());

  // One date in several forms, then the attention of one translation.
  const data::tasks::Date date{2026, 11, 29};
  std::vector<std::string> shown;
  for (int f : {0, 2, 4, 6, 8, 10, 12, 14})
    if (f < data::tasks::num_date_formats()) shown.push_back(data::tasks::format_date(date, f));
  o.search.alignments = true;
  const std::vector<models::Translation> ts = tr.translate(shown, o);
  for (size_t i = 0; i < shown.size(); ++i) std::printf("  %-32s -> %s\n", shown[i].c_str(), ts[i].text().c_str());
  const models::Translation& t = ts[0];
  if (!t.nbest.empty()) {
    viz::Heatmap map;
    map.title = shown[0] + "  →  " + t.text();
    map.row_labels = t.tgt_tokens[0];
    map.col_labels = t.src_tokens;
    map.rows = static_cast<int>(map.row_labels.size());
    map.cols = static_cast<int>(map.col_labels.size());
    map.values = t.nbest[0].alignment;
    const std::string svg = (out / "attention.svg").string();
    viz::write_svg(svg, viz::heatmap_svg(map));
    std::printf("\nattention of \"%s\" written to %s\n", shown[0].c_str(), svg.c_str());
  }
  std::printf("model in %s (try: engram translate -m %s, engram attention -m %s \"%s\")\n", a.out.c_str(),
              a.out.c_str(), a.out.c_str(), shown.size() > 1 ? shown[1].c_str() : "");
}

}  // namespace

void register_demo(CLI::App& app) {
  auto a = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand("demo", "train a small attention model on generated dates and show it working");
  cmd->add_option("--run-dir", a->out, "run directory (replaced if it holds an earlier demo)");
  cmd->add_option("--minutes", a->minutes, "training time budget in minutes")->check(CLI::Range(0.05, 1000.0));
  cmd->add_option("--seed", a->seed, "random seed");
  add_threads_option(cmd, a->threads);
  cmd->callback([a] { run_demo(*a); });
}

}  // namespace engram::cli
