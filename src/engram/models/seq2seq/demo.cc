// `engram demo`'s run and report (demo.h).
#include "engram/io/files.h"
#include "engram/models/seq2seq/demo.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "engram/core/error.h"
#include "engram/data/tasks/dates.h"
#include "engram/eval/accuracy.h"
#include "engram/io/config.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/trainer.h"
#include "engram/viz/heatmap.h"

namespace engram::models {

namespace fs = std::filesystem;

Seq2SeqTrainConfig demo_config(const std::string& recipe_yaml, const DemoOptions& o) {
  const YAML::Node node = io::parse_yaml(recipe_yaml, "configs/demo.yaml (built in)");
  return parse_run_config<Seq2SeqTrainConfig>(
      node, "configs/demo.yaml (built in)",
      {fmt::format("train.max_minutes={}", o.minutes), fmt::format("train.seed={}", o.seed),
       "train.run_dir=" + o.run_dir});
}

std::string run_demo(const std::string& recipe_yaml, const DemoOptions& o) {
  // A previous demo in the same directory is replaced, not resumed (the marker says it is ours).
  const fs::path out = o.run_dir, marker = out / "DEMO";
  if (fs::exists(marker)) fs::remove_all(out);
  ENGRAM_CHECK(!fs::exists(out) || fs::is_empty(out), "{}: exists and is not a demo directory; pick --run-dir",
               o.run_dir);
  fs::create_directories(out);
  io::write_file_atomic(marker, "written by `engram demo`; removed by the next demo run\n");  // checked

  std::printf("engram demo: dates in many written forms -> ISO 8601, learned from generated examples\n");
  const Seq2SeqTrainConfig cfg = demo_config(recipe_yaml, o);
  Seq2SeqTask task(cfg);
  train::Trainer trainer(task, cfg.train);
  const train::TrainSummary s = trainer.run();
  std::printf("trained %lld steps in %.0f s\n\n", static_cast<long long>(s.steps), s.seconds);
  return demo_report(task, o.run_dir);
}

std::string demo_report(const Seq2SeqTask& task, const std::string& run_dir) {
  // The best checkpoint on validation, as `engram translate -m RUN` would load it.
  const auto loaded = load_model_as<Translator>(run_dir, "seq2seq");
  const Translator& tr = *loaded;
  const TextPairs& valid = task.valid_text();
  TranslateOptions o;
  o.batch_size = 250;
  std::vector<std::string> hyps;
  for (const Translation& t : tr.translate(valid.src, o)) hyps.push_back(t.text());
  const double acc = eval::accuracy(hyps, valid.tgt);
  std::string report =
      fmt::format("held-out accuracy (exact match, greedy): {:.1f}% of {} dates\n\n", 100 * acc, valid.src.size());

  // One date in several forms, then the attention of one translation.
  const data::tasks::Date date{2026, 11, 29};
  std::vector<std::string> shown;
  for (int f : {0, 2, 4, 6, 8, 10, 12, 14})
    if (f < data::tasks::num_date_formats()) shown.push_back(data::tasks::format_date(date, f));
  o.search.alignments = true;
  const std::vector<Translation> ts = tr.translate(shown, o);
  for (size_t i = 0; i < shown.size(); ++i)  // padded to 32 bytes, as printf's %-32s
    report += "  " + shown[i] + std::string(shown[i].size() < 32 ? 32 - shown[i].size() : 0, ' ') + " -> " +
              ts[i].text() + "\n";
  const Translation& t = ts[0];
  if (!t.nbest.empty()) {
    viz::Heatmap map;
    map.title = shown[0] + "  →  " + t.text();
    map.row_labels = t.tgt_tokens[0];
    map.col_labels = t.src_tokens;
    map.rows = static_cast<int>(map.row_labels.size());
    map.cols = static_cast<int>(map.col_labels.size());
    map.values = t.nbest[0].alignment;
    const std::string svg = (fs::path(run_dir) / "attention.svg").string();
    io::write_output_file(svg, viz::heatmap_svg(map));
    report += fmt::format("\nattention of \"{}\" written to {}\n", shown[0], svg);
  }
  report += fmt::format("model in {} (try: engram translate -m {}, engram attention -m {} \"{}\")\n", run_dir, run_dir,
                        run_dir, shown.size() > 1 ? shown[1] : "");
  return report;
}

}  // namespace engram::models
