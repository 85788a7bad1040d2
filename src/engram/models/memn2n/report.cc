// `engram babi eval` / `explain` as text: scoring model directories on their tasks' questions,
// the table beside the paper's numbers, and one question's attention per hop.
#include "engram/models/memn2n/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "engram/core/error.h"
#include "engram/eval/report.h"
#include "engram/models/memn2n/task.h"
#include "engram/viz/heatmap.h"

namespace engram::models {

namespace {

namespace fs = std::filesystem;

// MemN2N paper (Sukhbaatar et al. 2015), Table 1, bAbI 1k, 3 hops, "PE LS RN" jointly trained:
// test error % of tasks 1..20 (mean 12.4, 11 tasks failed).
constexpr double kPaperJoint1k[20] = {0.0, 11.4, 21.9, 13.4, 14.4, 2.8,  18.3, 9.3,  1.9,  6.5,
                                      0.3, 0.1,  0.2,  6.9,  0.0,  2.7,  40.4, 9.4,  88.0, 0.0};

struct TaskRow {
  int task = 0;
  std::string name;
  Memn2nScore score;
};

// The loaded model of `dir`, reading its data from `data_override` when set, with the ensemble
// members `members` (their own directories) and `precision`.
std::unique_ptr<LoadedBabiModel> load_with_data(const fs::path& dir, const std::string& data_override,
                                                const std::vector<fs::path>& members, decode::Precision precision) {
  auto loaded = load_model_as<LoadedBabiModel>(dir, "memn2n");
  if (!data_override.empty()) loaded->cfg.data.dir = data_override;
  if (!members.empty())
    loaded->set_ensemble(load_ensemble_members<LoadedModel>(std::vector<std::string>(members.begin(), members.end()),
                                                            "memn2n"));
  loaded->set_precision(precision);
  return loaded;
}

// Scores a model directory on the questions of its tasks (split: train | valid | test).
std::vector<TaskRow> score_model(const fs::path& dir, const std::vector<fs::path>& members, const BabiEvalOptions& o,
                                 std::string* data_dir_out) {
  const auto loaded = load_with_data(dir, o.data, members, o.precision);
  LoadedBabiModel& m = *loaded;
  const std::string data_dir = babi_data_dir(m.cfg);
  const std::vector<int> tasks = parse_babi_tasks(m.cfg.data.tasks, data_dir);
  const BabiData data = load_babi_data(m.cfg, tasks, &m.vocab);
  ENGRAM_CHECK(o.split == "test" || o.split == "valid" || o.split == "train",
               "--split must be train, valid or test, not '{}'", o.split);
  const Memn2nDataset& split = o.split == "test" ? data.test : o.split == "valid" ? data.valid : data.train;
  const auto scores = evaluate_memn2n(m.models(), split, 256);
  std::map<int, std::string> names;
  for (const auto& f : data::list_babi_tasks(data_dir)) names[f.task] = f.name;
  std::vector<TaskRow> rows;
  for (int t : tasks) {
    const auto it = scores.find(t);
    ENGRAM_CHECK(it != scores.end(), "bAbI task {}: no {} questions in {}{}", t, o.split, data_dir,
                 o.split == "valid" ? " (data.valid_fraction holds none out)" : "");
    rows.push_back({t, names[t], it->second});
  }
  *data_dir_out = data_dir;
  return rows;
}

}  // namespace

std::string babi_eval_report(const std::string& model, const BabiEvalOptions& o) {
  const fs::path dir = fs::path(model).lexically_normal();
  std::vector<TaskRow> rows;
  std::string data_dir;
  if (fs::exists(dir / "config.yaml")) {
    rows = score_model(dir, std::vector<fs::path>(o.ensemble.begin(), o.ensemble.end()), o, &data_dir);
  } else {  // a per-task tree: DIR/task-T/model
    for (int t = 1; t <= 20; ++t) {
      const fs::path task = fs::path(fmt::format("task-{}", t)) / "model", sub = dir / task;
      if (!fs::exists(sub / "config.yaml")) continue;
      std::vector<fs::path> members;  // the same task's model of each ensemble tree
      for (const std::string& e : o.ensemble) {
        ENGRAM_CHECK(fs::exists(fs::path(e) / task / "config.yaml"),
                     "--ensemble: {} has no {} (the ensemble of a tree of task-T/model takes trees of the same tasks)",
                     e, task.string());
        members.push_back(fs::path(e) / task);
      }
      for (auto& r : score_model(sub, members, o, &data_dir)) rows.push_back(std::move(r));
    }
    ENGRAM_CHECK(!rows.empty(), "{} is neither a model directory (config.yaml) nor a tree of task-T/model", model);
  }
  const bool is_1k = fs::path(data_dir).lexically_normal().filename() == "en";
  Memn2nScore all;
  int failed = 0;
  double sum_err = 0, sum_paper = 0;
  nlohmann::json j;
  std::string out = eval::markdown_head(
      {"task", "name", fmt::format("{} error %", o.split), "paper % (test)", "support hit %"}, "rlrrr");
  for (const auto& r : rows) {
    const double err = 100 * r.score.error();
    sum_err += err;
    failed += err > 5.0;
    all.add(r.score);
    const std::string paper = is_1k ? fmt::format("{:.1f}", kPaperJoint1k[r.task - 1]) : "-";
    sum_paper += kPaperJoint1k[r.task - 1];
    out += fmt::format("| {} | {} | {:.1f} | {} | {:.1f} |\n", r.task, r.name, err, paper, 100 * r.score.support_rate());
    j["tasks"].push_back({{"task", r.task}, {"name", r.name}, {"error", r.score.error()},
                          {"questions", r.score.questions}, {"support_hit", r.score.support_rate()}});
  }
  const double mean = sum_err / rows.size();
  const bool paper_comparable = is_1k && rows.size() == 20;
  out += fmt::format("| **mean** | {} tasks | **{:.1f}** | {} | {:.1f} |\n", rows.size(), mean,
                     paper_comparable ? fmt::format("{:.1f}", sum_paper / 20) : "-", 100 * all.support_rate());
  out += fmt::format("| **failed (> 5%)** | | **{}** | {} | |\n", failed, paper_comparable ? "11" : "-");
  std::string per_hop;
  for (size_t k = 0; k < all.support_hop.size(); ++k)
    per_hop += fmt::format("{}hop {} {:.1f}%", k ? ", " : "", k + 1,
                           all.with_support ? 100.0 * all.support_hop[k] / all.with_support : 0.0);
  out += fmt::format("\nsupporting-fact hit rate (most-attended sentence is a supporting fact in some hop): {:.1f}% "
                     "({}) over {} questions\n",
                     100 * all.support_rate(), per_hop, all.with_support);
  if (!is_1k) out += "paper column: only the 1k (en) joint values are known here\n";
  if (!o.ensemble.empty())
    out += fmt::format("an ensemble of {} models: {} + {} (the mean answer probability; support hits: {}'s attention)\n",
                       o.ensemble.size() + 1, model, fmt::join(o.ensemble, " + "), model);
  if (o.precision != decode::Precision::kFp32) out += fmt::format("{} weights\n", decode::precision_name(o.precision));
  if (o.json) {
    j["mean_error"] = mean / 100;
    j["failed"] = failed;
    j["support_hit"] = all.support_rate();
    out += j.dump() + "\n";
  }
  return out;
}

BabiExplanation explain_babi(const std::string& model, const BabiExplainOptions& o) {
  const auto loaded = load_with_data(fs::path(model).lexically_normal(), o.data,
                                     std::vector<fs::path>(o.ensemble.begin(), o.ensemble.end()), o.precision);
  LoadedBabiModel& m = *loaded;
  const std::string data_dir = babi_data_dir(m.cfg);
  const std::vector<int> model_tasks = parse_babi_tasks(m.cfg.data.tasks, data_dir);
  const int task = o.task == 0 ? model_tasks.front() : o.task, question = o.question;
  ENGRAM_CHECK(std::find(model_tasks.begin(), model_tasks.end(), task) != model_tasks.end(),
               "the model was trained on tasks {}, not task {}", fmt::join(model_tasks, ","), task);
  const BabiData data = load_babi_data(m.cfg, {task}, &m.vocab);
  ENGRAM_CHECK(question >= 0 && question < static_cast<int>(data.test.samples.size()),
               "task {} has {} test questions; --question {} is out of range", task, data.test.samples.size(),
               question);
  const Memn2nSample& s = data.test.samples[question];
  const Memn2nExplanation e = explain_memn2n(m.models(), data.test, question);
  const auto& story = data.test.stories[s.story];
  const int first = s.begin + e.offset, n = s.end - first;
  std::vector<int> marked;
  for (int32_t p : s.supporting)
    if (p - e.offset >= 0) marked.push_back(p - e.offset);
  const int hops = static_cast<int>(e.attention.size());
  std::string out = fmt::format("task {}, test question {} (* = supporting fact)\n\n  slot", task, question);
  for (int k = 0; k < hops; ++k) out += fmt::format("  hop {}", k + 1);
  out += "  sentence\n";
  std::vector<std::string> labels;
  for (int i = 0; i < n; ++i) {
    const bool sup = std::find(marked.begin(), marked.end(), i) != marked.end();
    const std::string text = m.vocab.decode_text(story[first + i]);
    out += fmt::format("{} {:4d}", sup ? "*" : " ", i + 1);
    for (int k = 0; k < hops; ++k) out += fmt::format("  {:5.2f}", static_cast<double>(e.attention[k][i]));
    out += "  " + text + "\n";
    labels.push_back(fmt::format("{} {}", i + 1, text.size() > 28 ? text.substr(0, 27) + "…" : text));
  }
  const std::string predicted = m.vocab.token(e.predicted), answer = m.vocab.token(s.answer);
  out += fmt::format("\nquestion: {}?\nanswer: {}   predicted: {} (p = {:.2f}) {}\n", m.vocab.decode_text(s.query),
                     answer, predicted, static_cast<double>(e.probability), predicted == answer ? "correct" : "WRONG");
  for (int k = 0; k < hops; ++k) {
    int top = 0;
    for (int i = 1; i < n; ++i) top = e.attention[k][i] > e.attention[k][top] ? i : top;
    const bool hit = std::find(marked.begin(), marked.end(), top) != marked.end();
    out += fmt::format("hop {} attends most to sentence {}{}\n", k + 1, top + 1, hit ? " (a supporting fact)" : "");
  }
  viz::Heatmap h;
  h.title = fmt::format("task {} q{}: {}? -> {} (answer {})", task, question, m.vocab.decode_text(s.query), predicted,
                        answer);
  h.rows = hops;
  h.cols = n;
  for (int k = 0; k < hops; ++k) {
    h.row_labels.push_back(fmt::format("hop {}", k + 1));
    h.values.insert(h.values.end(), e.attention[k].begin(), e.attention[k].begin() + n);
  }
  h.col_labels = labels;
  h.marked_cols = marked;
  return {out, viz::heatmap_svg(h)};
}

}  // namespace engram::models
