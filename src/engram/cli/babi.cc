// `engram babi eval|explain|speed`: End-To-End Memory Networks on the bAbI tasks; training is
// `engram train configs/babi-*.yaml`. A thin adapter over models/memn2n/.
//   engram babi eval -m MODEL_DIR          per-task test error table (Markdown) next to the paper
//   engram babi explain -m MODEL_DIR --task 2 --question 5 -o attn.svg
//   engram babi speed --steps 300          training questions/s (forward + backward + update)
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "engram/models/memn2n/task.h"
#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/io/config.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

namespace fs = std::filesystem;
using models::BabiConfig;
using models::BabiData;
using models::BabiSeedResult;
using models::LoadedBabiModel;
using models::BabiTrainTask;
using models::default_babi_config;
using models::parse_babi_tasks;
using models::babi_data_dir;
using models::load_babi_data;
using models::memn2n_config;
using models::train_babi;
using models::train_babi_seed;

// MemN2N paper (Sukhbaatar et al. 2015), Table 1, bAbI 1k, 3 hops, "PE LS RN" jointly trained:
// test error % of tasks 1..20 (mean 12.4, 11 tasks failed).
constexpr double kPaperJoint1k[20] = {0.0, 11.4, 21.9, 13.4, 14.4, 2.8,  18.3, 9.3,  1.9,  6.5,
                                      0.3, 0.1,  0.2,  6.9,  0.0,  2.7,  40.4, 9.4,  88.0, 0.0};

// ---- eval -----------------------------------------------------------------------------------

struct TaskRow {
  int task = 0;
  std::string name;
  models::Memn2nScore score;
};

struct EvalArgs {
  std::string model, data, split = "test";
  bool json = false;
  int threads = 1;  // MemN2N's products are tiny ([B, D] x [D, V]): one thread, none spinning idle
};

// Scores a model directory on the questions of its tasks (split: train | valid | test).
std::vector<TaskRow> score_model(const fs::path& dir, const EvalArgs& a, std::string* data_dir_out) {
  const std::string& data_override = a.data;
  const auto loaded = models::load_model_as<LoadedBabiModel>(dir, "memn2n");
  LoadedBabiModel& m = *loaded;
  if (!data_override.empty()) m.cfg.data.dir = data_override;
  const std::string data_dir = babi_data_dir(m.cfg);
  const std::vector<int> tasks = parse_babi_tasks(m.cfg.data.tasks, data_dir);
  const BabiData data = load_babi_data(m.cfg, tasks, &m.vocab);
  ENGRAM_CHECK(a.split == "test" || a.split == "valid" || a.split == "train",
               "--split must be train, valid or test, not '{}'", a.split);
  const models::Memn2nDataset& split = a.split == "test" ? data.test : a.split == "valid" ? data.valid : data.train;
  const auto scores = models::evaluate_memn2n(*m.model, split, 256);
  std::map<int, std::string> names;
  for (const auto& f : data::list_babi_tasks(data_dir)) names[f.task] = f.name;
  std::vector<TaskRow> rows;
  for (int t : tasks) rows.push_back({t, names[t], scores.at(t)});
  *data_dir_out = data_dir;
  return rows;
}

void run_eval(const EvalArgs& a) {
  use_threads(a.threads);
  const std::string& model_dir = a.model;
  const bool json = a.json;
  const fs::path dir = fs::path(model_dir).lexically_normal();
  std::vector<TaskRow> rows;
  std::string data_dir;
  if (fs::exists(dir / "config.yaml")) {
    rows = score_model(dir, a, &data_dir);
  } else {  // a per-task tree: DIR/task-T/model
    for (int t = 1; t <= 20; ++t) {
      const fs::path sub = dir / fmt::format("task-{}", t) / "model";
      if (!fs::exists(sub / "config.yaml")) continue;
      for (auto& r : score_model(sub, a, &data_dir)) rows.push_back(std::move(r));
    }
    ENGRAM_CHECK(!rows.empty(), "{} is neither a model directory (config.yaml) nor a tree of task-T/model", model_dir);
  }
  const bool is_1k = fs::path(data_dir).lexically_normal().filename() == "en";
  models::Memn2nScore all;
  int failed = 0;
  double sum_err = 0, sum_paper = 0;
  nlohmann::json j;
  std::printf("| task | name | %s error %% | paper %% (test) | support hit %% |\n|---:|---|---:|---:|---:|\n",
              a.split.c_str());
  for (const auto& r : rows) {
    const double err = 100 * r.score.error();
    sum_err += err;
    failed += err > 5.0;
    all.add(r.score);
    const std::string paper = is_1k ? fmt::format("{:.1f}", kPaperJoint1k[r.task - 1]) : "-";
    sum_paper += kPaperJoint1k[r.task - 1];
    std::printf("| %d | %s | %.1f | %s | %.1f |\n", r.task, r.name.c_str(), err, paper.c_str(),
                100 * r.score.support_rate());
    j["tasks"].push_back({{"task", r.task}, {"name", r.name}, {"error", r.score.error()},
                          {"questions", r.score.questions}, {"support_hit", r.score.support_rate()}});
  }
  const double mean = sum_err / rows.size();
  const bool paper_comparable = is_1k && rows.size() == 20;
  std::printf("| **mean** | %zu tasks | **%.1f** | %s | %.1f |\n", rows.size(), mean,
              paper_comparable ? fmt::format("{:.1f}", sum_paper / 20).c_str() : "-", 100 * all.support_rate());
  std::printf("| **failed (> 5%%)** | | **%d** | %s | |\n", failed, paper_comparable ? "11" : "-");
  std::string per_hop;
  for (size_t k = 0; k < all.support_hop.size(); ++k)
    per_hop += fmt::format("{}hop {} {:.1f}%", k ? ", " : "", k + 1,
                           all.with_support ? 100.0 * all.support_hop[k] / all.with_support : 0.0);
  std::printf("\nsupporting-fact hit rate (most-attended sentence is a supporting fact in some hop): %.1f%% "
              "(%s) over %lld questions\n",
              100 * all.support_rate(), per_hop.c_str(), static_cast<long long>(all.with_support));
  if (!is_1k) std::printf("paper column: only the 1k (en) joint values are known here\n");
  if (json) {
    j["mean_error"] = mean / 100;
    j["failed"] = failed;
    j["support_hit"] = all.support_rate();
    std::printf("%s\n", j.dump().c_str());
  }
}

// ---- explain --------------------------------------------------------------------------------

struct ExplainArgs {
  std::string model, data, svg;
  int task = 0, question = 0, threads = 1;
};

void run_explain(const ExplainArgs& a) {
  use_threads(a.threads);
  const std::string& model_dir = a.model;
  const std::string& data_override = a.data;
  const std::string& svg = a.svg;
  const int question = a.question;
  int task = a.task;
  const auto loaded = models::load_model_as<LoadedBabiModel>(fs::path(model_dir).lexically_normal(), "memn2n");
  LoadedBabiModel& m = *loaded;
  if (!data_override.empty()) m.cfg.data.dir = data_override;
  const std::string data_dir = babi_data_dir(m.cfg);
  const std::vector<int> model_tasks = parse_babi_tasks(m.cfg.data.tasks, data_dir);
  if (task == 0) task = model_tasks.front();
  ENGRAM_CHECK(std::find(model_tasks.begin(), model_tasks.end(), task) != model_tasks.end(),
               "the model was trained on tasks {}, not task {}", fmt::join(model_tasks, ","), task);
  const BabiData data = load_babi_data(m.cfg, {task}, &m.vocab);
  ENGRAM_CHECK(question >= 0 && question < static_cast<int>(data.test.samples.size()),
               "task {} has {} test questions; --question {} is out of range", task, data.test.samples.size(),
               question);
  const models::Memn2nSample& s = data.test.samples[question];
  const models::Memn2nExplanation e = models::explain_memn2n(*m.model, data.test, question);
  const auto& story = data.test.stories[s.story];
  const int first = s.begin + e.offset, n = s.end - first;
  std::vector<int> marked;
  for (int32_t p : s.supporting)
    if (p - e.offset >= 0) marked.push_back(p - e.offset);
  const int hops = static_cast<int>(e.attention.size());
  std::printf("task %d, test question %d (* = supporting fact)\n\n  slot", task, question);
  for (int k = 0; k < hops; ++k) std::printf("  hop %d", k + 1);
  std::printf("  sentence\n");
  std::vector<std::string> labels;
  for (int i = 0; i < n; ++i) {
    const bool sup = std::find(marked.begin(), marked.end(), i) != marked.end();
    const std::string text = m.vocab.decode_text(story[first + i]);
    std::printf("%s %4d", sup ? "*" : " ", i + 1);
    for (int k = 0; k < hops; ++k) std::printf("  %5.2f", e.attention[k][i]);
    std::printf("  %s\n", text.c_str());
    labels.push_back(fmt::format("{} {}", i + 1, text.size() > 28 ? text.substr(0, 27) + "…" : text));
  }
  const std::string predicted = m.vocab.token(e.predicted), answer = m.vocab.token(s.answer);
  std::printf("\nquestion: %s?\nanswer: %s   predicted: %s (p = %.2f) %s\n", m.vocab.decode_text(s.query).c_str(),
              answer.c_str(), predicted.c_str(), e.probability, predicted == answer ? "correct" : "WRONG");
  for (int k = 0; k < hops; ++k) {
    int top = 0;
    for (int i = 1; i < n; ++i) top = e.attention[k][i] > e.attention[k][top] ? i : top;
    const bool hit = std::find(marked.begin(), marked.end(), top) != marked.end();
    std::printf("hop %d attends most to sentence %d%s\n", k + 1, top + 1, hit ? " (a supporting fact)" : "");
  }
  if (svg.empty()) return;
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
  viz::write_svg(svg, viz::heatmap_svg(h));
  std::printf("wrote %s\n", svg.c_str());
}

// ---- speed ----------------------------------------------------------------------------------

struct SpeedArgs {
  std::string data, encoding = "pe_global";
  int steps = 300, batch = 32, dim = 50, hops = 3, threads = 1;
  bool masked = false;
};

void run_speed(const SpeedArgs& a) {
  BabiConfig cfg = default_babi_config(true);
  if (!a.data.empty()) cfg.data.dir = a.data;
  cfg.data.batch_size = a.batch;
  cfg.memn2n.dim = a.dim;
  cfg.memn2n.hops = a.hops;
  io::apply_override(cfg, "memn2n.encoding=" + a.encoding);
  if (a.masked) cfg.memn2n.null_slots = false;
  use_threads(a.threads);
  const BabiData data = load_babi_data(cfg, parse_babi_tasks("all", babi_data_dir(cfg)));
  const models::Memn2nConfig mc = memn2n_config(cfg, data);
  const int steps = a.steps, batch = a.batch, threads = a.threads;
  core::Rng rng(1);
  models::Memn2n model(mc, rng);
  BabiTrainTask task(cfg, model, data, false, {});
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

void register_babi(CLI::App& app) {
  auto* babi = app.add_subcommand("babi", "End-To-End Memory Networks on the bAbI tasks");
  babi->require_subcommand(1);

  auto ev = std::make_shared<EvalArgs>();
  auto* eval = babi->add_subcommand("eval", "per-task test error table (Markdown) next to the paper's");
  eval->add_option("-m,--model", ev->model, "model directory (or a per-task tree of task-T/model)")->required();
  eval->add_option("--data", ev->data, "bAbI directory (default: the one the model was trained on)");
  eval->add_option("--split", ev->split, "the model's own split")->check(CLI::IsMember({"test", "valid", "train"}));
  eval->add_flag("--json", ev->json, "also print the numbers as one JSON line");
  add_threads_option(eval, ev->threads);
  eval->callback([ev] { run_eval(*ev); });

  auto ex = std::make_shared<ExplainArgs>();
  auto* explain = babi->add_subcommand("explain", "attention of every hop over a test story");
  add_model_option(explain, ex->model);
  explain->add_option("--task", ex->task, "task (0 = the model's first)")->check(CLI::Range(0, 20));
  explain->add_option("--question", ex->question, "index of the test question in the task (0-based)")
      ->check(CLI::NonNegativeNumber);
  add_output_option(explain, ex->svg, "also write the attention as an SVG heatmap");
  explain->add_option("--data", ex->data, "bAbI directory (default: the one the model was trained on)");
  add_threads_option(explain, ex->threads);
  explain->callback([ex] { run_explain(*ex); });

  auto sp = std::make_shared<SpeedArgs>();
  auto* speed = babi->add_subcommand("speed", "training questions/s on the 1k joint data (no checkpoints)");
  speed->add_option("--data", sp->data, "bAbI directory (default $ENGRAM_DATA_DIR/babi/en)");
  speed->add_option("--steps", sp->steps, "timed updates")->check(CLI::Range(1, 1000000));
  speed->add_option("--batch", sp->batch, "batch size")->check(CLI::Range(1, 4096));
  speed->add_option("--dim", sp->dim, "embedding width D")->check(CLI::Range(1, 4096));
  speed->add_option("--hops", sp->hops, "hops K")->check(CLI::Range(1, 16));
  add_threads_option(speed, sp->threads);
  speed->add_option("--encoding", sp->encoding, "sentence encoding")->check(CLI::IsMember({"bow", "pe", "pe_global"}));
  speed->add_flag("--masked", sp->masked, "pad to the batch's largest memory and mask empty slots (no null slots)");
  speed->callback([sp] { run_speed(*sp); });
}

}  // namespace engram::cli
