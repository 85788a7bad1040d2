// Decoding, metrics and the eval table of the pointer tasks; the loaded model directory.
// Dims: B instances per decoding batch, n points, R output steps.
#include "engram/models/pointer/eval.h"
#include "engram/models/loading.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "engram/core/rng.h"
#include "engram/data/tasks/tsp.h"
#include "engram/decode/ensemble.h"
#include "engram/decode/runner.h"
#include "engram/decode/search.h"
#include "engram/eval/report.h"
#include "engram/io/checkpoint.h"
#include "engram/models/pointer/task.h"

namespace engram::models {

namespace tasks = data::tasks;

namespace {

PointerPrediction to_prediction(const decode::Hypothesis& h) {
  PointerPrediction p;
  p.output = pointer_positions(h.ids);
  p.finished = h.finished;
  p.log_prob = h.log_prob;
  p.attention = h.alignment;
  return p;
}

// Symmetry v of the unit square (see PointerDecodeOptions::views) applied to a point; a
// mirror image reverses a polygon's orientation.
constexpr int kSymmetries = 8;
bool symmetry_mirrors(int v) { return v == 1 || v == 2 || v == 4 || v == 7; }
void apply_symmetry(int v, float& x, float& y) {
  const float a = x, b = y;
  switch (v) {
    case 0: break;
    case 1: x = 1.0f - a; break;
    case 2: y = 1.0f - b; break;
    case 3: x = 1.0f - a, y = 1.0f - b; break;
    case 4: x = b, y = a; break;
    case 5: x = 1.0f - b, y = a; break;
    case 6: x = b, y = 1.0f - a; break;
    default: x = 1.0f - b, y = 1.0f - a; break;
  }
}

// PointerDecodeOptions::views: view v maps the points by symmetry v % 8 and, from v = 8 on,
// reads them in an order drawn from v; each instance keeps the best output by `objective`.
template <class Objective>
std::vector<PointerPrediction> predict_views(const ModelSet<PointerNet>& models,
                                             std::span<const tasks::PointerInstance> instances,
                                             const PointerDecodeOptions& options, const Objective& objective) {
  PointerDecodeOptions one = options;
  one.views = 1;
  std::vector<PointerPrediction> out = predict_pointer(models, instances, one);
  std::vector<double> best(out.size());
  for (size_t i = 0; i < out.size(); ++i) best[i] = objective(out[i], instances[i]);
  std::vector<tasks::PointerInstance> seen(instances.size());
  std::vector<std::vector<int>> orders(instances.size());
  for (int v = 1; v < options.views; ++v) {
    for (size_t i = 0; i < instances.size(); ++i) seen[i] = pointer_view(instances[i], v, orders[i]);
    one.sample_seed = options.sample_seed + static_cast<uint64_t>(v);
    std::vector<PointerPrediction> got = predict_pointer(models, seen, one);
    for (size_t i = 0; i < got.size(); ++i) {
      pointer_view_back(models.first().cfg().task, v, orders[i], got[i]);
      const double value = objective(got[i], instances[i]);
      if (value > best[i]) best[i] = value, out[i] = std::move(got[i]);
    }
  }
  return out;
}

}  // namespace

tasks::PointerInstance pointer_view(const tasks::PointerInstance& in, int v, std::vector<int>& order) {
  ENGRAM_CHECK(v >= 0 && v < kMaxPointerViews, "pointer views: view {} is not in [0, {})", v, kMaxPointerViews);
  ENGRAM_CHECK(in.dim == 2 && in.points.size() % 2 == 0, "pointer views: they need 2-D points, not {}-D", in.dim);
  const size_t n = static_cast<size_t>(in.size());
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  if (v >= kSymmetries) {  // Fisher-Yates, drawn from the view's number
    core::Rng rng(static_cast<uint64_t>(v));
    for (size_t j = n; j > 1; --j) std::swap(order[j - 1], order[rng.below(j)]);
  }
  tasks::PointerInstance out;
  out.dim = 2;
  out.points.resize(2 * n);
  for (size_t j = 0; j < n; ++j) {
    float x = in.points[2 * static_cast<size_t>(order[j])], y = in.points[2 * static_cast<size_t>(order[j]) + 1];
    apply_symmetry(v % kSymmetries, x, y);
    out.points[2 * j] = x, out.points[2 * j + 1] = y;
  }
  return out;
}

void pointer_view_back(PointerTask task, int v, std::span<const int> order, PointerPrediction& p) {
  const size_t n = order.size(), k = p.output.size();
  const bool rows = !p.attention.empty();
  ENGRAM_CHECK(!rows || p.attention.size() == (k + 1) * n, "pointer views: attention of {} values for {} x {}",
               p.attention.size(), k + 1, n);
  for (int& j : p.output) {
    ENGRAM_CHECK(j >= 0 && static_cast<size_t>(j) < n, "pointer views: position {} of {} points", j, n);
    j = order[static_cast<size_t>(j)];
  }
  if (rows) {
    std::vector<float> a(p.attention.size());
    for (size_t r = 0; r <= k; ++r)
      for (size_t j = 0; j < n; ++j) a[r * n + static_cast<size_t>(order[j])] = p.attention[r * n + j];
    p.attention = std::move(a);
  }
  if (k < 2) return;
  std::vector<size_t> steps(k);  // output step i of the result = step steps[i] of the view
  std::iota(steps.begin(), steps.end(), 0);
  if (task == PointerTask::kHull && symmetry_mirrors(v % kSymmetries)) std::reverse(steps.begin() + 1, steps.end());
  const int start = task == PointerTask::kHull ? *std::min_element(p.output.begin(), p.output.end()) : 0;
  const auto at = std::find_if(steps.begin(), steps.end(), [&](size_t i) { return p.output[i] == start; });
  if (at != steps.end()) std::rotate(steps.begin(), at, steps.end());
  std::vector<int> out(k);
  for (size_t i = 0; i < k; ++i) out[i] = p.output[steps[i]];
  p.output = std::move(out);
  if (rows) {
    std::vector<float> a(p.attention);
    for (size_t i = 0; i < k; ++i)
      std::copy_n(p.attention.begin() + static_cast<std::ptrdiff_t>(steps[i] * n), n,
                  a.begin() + static_cast<std::ptrdiff_t>(i * n));
    p.attention = std::move(a);
  }
}

const decode::OptionSet& pointer_option_set() {
  static const decode::OptionSet set = [] {
    decode::OptionSet s{{"beam", "samples", "temperature", "seed", "views", "precision", "batch"}, {}};
    s.defaults.batch = 128;
    return s;
  }();
  return set;
}

PointerDecodeOptions pointer_decode_options(const decode::DecodeOptions& o) {
  PointerDecodeOptions p;
  p.beam = o.beam;
  p.batch_size = o.batch;
  p.samples = o.samples;
  p.temperature = o.temperature;
  p.sample_seed = o.seed;
  p.views = o.views;
  return p;
}

std::vector<PointerPrediction> predict_pointer(const ModelSet<PointerNet>& models,
                                               std::span<const tasks::PointerInstance> instances,
                                               const PointerDecodeOptions& options) {
  ENGRAM_CHECK(options.beam >= 1 && options.batch_size >= 1, "pointer decoding: beam {} and batch_size {} must be >= 1",
               options.beam, options.batch_size);
  ENGRAM_CHECK(options.samples >= 0 && std::isfinite(options.temperature) && options.temperature > 0.0f,
               "pointer decoding: samples {} must be >= 0 and temperature {} finite and > 0", options.samples,
               options.temperature);
  const PointerTask task = models.first().cfg().task;
  for (const PointerNet* m : models.models)
    ENGRAM_CHECK(m->cfg().task == task && m->cfg().input_dim == models.first().cfg().input_dim,
                 "pointer ensemble: a {} model of input width {} with a {} model of width {}",
                 pointer_task_name(m->cfg().task), m->cfg().input_dim, pointer_task_name(task),
                 models.first().cfg().input_dim);
  ENGRAM_CHECK(options.views >= 1 && options.views <= kMaxPointerViews, "pointer decoding: views {} must be in [1, {}]",
               options.views, kMaxPointerViews);
  ENGRAM_CHECK(options.views == 1 || task != PointerTask::kSort,
               "pointer decoding: views are readings of 2-D points (hull, tsp), not of sorting");
  // What sampling maximises: TSP minus the tour length (−inf for an invalid tour), else the
  // log-probability. The kept output's value is remembered, not recomputed per sample.
  auto objective = [&](const PointerPrediction& p, const tasks::PointerInstance& in) {
    if (task != PointerTask::kTsp) return p.log_prob;
    if (!p.finished || !tasks::is_valid_tour(p.output, in.size())) return -std::numeric_limits<double>::infinity();
    return -tasks::tour_length(std::span<const float>(in.points), p.output);
  };
  if (options.views > 1) return predict_views(models, instances, options, objective);
  core::Graph g(false);
  g.use_packed_weights(options.packed_weights);
  models.set_weights(g);
  // One model, or the members as one (their mean probability of each next position).
  std::optional<decode::EnsembleStepModel> ensemble;
  const decode::StepModel& model = models.decoder(ensemble);
  // Room for every position and the end: n + 1 steps (the rules end every output by then).
  decode::SearchOptions so;
  so.beam = options.beam;
  so.alignments = options.attention;
  so.max_length_ratio = 1.0f;
  so.max_length_offset = 1;
  so.max_length = decode::kMaxOutputTokens;
  std::vector<int> lengths(instances.size());
  for (size_t i = 0; i < instances.size(); ++i) {
    lengths[i] = instances[i].size();
    ENGRAM_CHECK(lengths[i] < decode::kMaxOutputTokens, "pointer decoding: an instance of {} points (at most {})",
                 lengths[i], decode::kMaxOutputTokens - 1);
  }
  std::vector<tasks::PointerInstance> chunk_instances;
  const auto make = [&](std::span<const size_t> chunk) {
    chunk_instances.clear();
    for (const size_t i : chunk) chunk_instances.push_back(instances[i]);
    return pointer_source(chunk_instances);
  };
  std::vector<PointerPrediction> out;
  out.reserve(instances.size());
  for (const auto& list : decode::run_batched(g, model, lengths, options.batch_size, so, make)) {
    ENGRAM_CHECK(!list.empty(), "pointer decoding: no hypothesis for instance {}", out.size());
    out.push_back(to_prediction(list[0]));
  }
  if (options.samples == 0) return out;
  std::vector<double> best(out.size());  // objective of out[i]
  for (size_t i = 0; i < out.size(); ++i) best[i] = objective(out[i], instances[i]);
  decode::SearchOptions one = so;
  one.beam = 1;
  one.sampling_topk = 0;  // every position
  one.temperature = options.temperature;
  core::Rng seeds(options.sample_seed);  // sample k is drawn with the k-th seed of this stream
  for (int k = 0; k < options.samples; ++k) {
    one.seed = seeds.next();
    const auto drawn = decode::run_batched(g, model, lengths, options.batch_size, one, make);
    for (size_t i = 0; i < out.size(); ++i) {
      ENGRAM_CHECK(!drawn[i].empty(), "pointer decoding: no sample for instance {}", i);
      PointerPrediction p = to_prediction(drawn[i][0]);
      const double value = objective(p, instances[i]);
      if (value > best[i]) best[i] = value, out[i] = std::move(p);
    }
  }
  return out;
}

PointerScore score_pointer(PointerTask task, std::span<const tasks::PointerInstance> instances,
                           std::span<const PointerPrediction> predictions) {
  ENGRAM_CHECK(instances.size() == predictions.size(), "pointer score: {} predictions for {} instances",
               predictions.size(), instances.size());
  PointerScore s;
  s.task = task;
  s.instances = static_cast<int64_t>(instances.size());
  if (instances.empty()) return s;
  double exact = 0, valid = 0, coverage = 0, length = 0, reference = 0, gap = 0, wrong_start = 0;
  int64_t simple = 0;
  for (size_t i = 0; i < instances.size(); ++i) {
    const tasks::PointerInstance& in = instances[i];
    const PointerPrediction& p = predictions[i];
    const std::span<const float> pts(in.points);
    switch (task) {
      case PointerTask::kSort: {
        std::vector<int> sorted = p.output;
        std::sort(sorted.begin(), sorted.end());
        std::vector<int> all(in.size());
        std::iota(all.begin(), all.end(), 0);
        valid += p.finished && sorted == all;
        exact += p.finished && p.output == in.target;
        break;
      }
      case PointerTask::kHull: {
        exact += p.finished && tasks::same_cycle(p.output, in.target);
        wrong_start += p.output.empty() || in.target.empty() || p.output[0] != in.target[0];
        const std::optional<double> c = p.finished ? tasks::hull_area_coverage(pts, p.output, in.target) : std::nullopt;
        if (c) coverage += *c, ++simple;
        break;
      }
      case PointerTask::kTsp: {
        const double ref = tasks::tour_length(pts, in.target);
        reference += ref;
        if (p.finished && tasks::is_valid_tour(p.output, in.size())) {
          const double len = tasks::tour_length(pts, p.output);
          length += len;
          gap += ref > 0 ? len / ref - 1.0 : 0.0;
          valid += 1;
        }
        break;
      }
    }
  }
  const double n = static_cast<double>(instances.size()), nan = std::nan("");
  s.exact = exact / n;
  if (task == PointerTask::kHull) {
    valid = static_cast<double>(simple);
    s.coverage = simple ? coverage / simple : nan;
    s.fail = 1.0 - valid / n;
    s.wrong_start = wrong_start / n;
  }
  s.valid = valid / n;
  if (task == PointerTask::kTsp) {
    s.reference = reference / n;
    s.length = valid ? length / valid : nan;
    s.gap = valid ? gap / valid : nan;
  }
  return s;
}

train::Metrics pointer_metrics(const PointerScore& s) {
  switch (s.task) {
    case PointerTask::kSort: return {{"acc", s.exact}};
    case PointerTask::kHull: return {{"acc", s.exact}, {"coverage", s.coverage}, {"fail", s.fail}};
    case PointerTask::kTsp:
      return {{"length", s.length}, {"reference", s.reference}, {"gap", s.gap}, {"valid", s.valid}};
  }
  return {};
}

std::vector<tasks::PointerInstance> pointer_test_set(PointerTask task, int n, int64_t instances, uint64_t seed,
                                                     int tsp_starts) {
  ENGRAM_CHECK(n >= 1 && instances >= 1, "pointer test set: n {} and instances {} must be >= 1", n, instances);
  tasks::PointerTaskOptions o;
  o.task = task;
  o.min_n = o.max_n = n;
  o.tsp_exact_max_n = tasks::kHeldKarpMaxN;
  o.tsp_starts = tsp_starts;
  return make_pointer_instances(o, seed, 0, instances);
}

std::vector<PointerEvalRow> evaluate_pointer(const ModelSet<PointerNet>& models, const PointerEvalOptions& options) {
  const PointerTask task = models.first().cfg().task;
  std::vector<PointerEvalRow> rows;
  auto add = [&](int n, std::string reference, std::span<const tasks::PointerInstance> set) {
    const std::vector<PointerPrediction> p = predict_pointer(models, set, options.decode);
    rows.push_back({n, std::move(reference), score_pointer(task, set, p)});
  };
  if (!options.file.empty()) {
    std::map<int64_t, std::vector<tasks::PointerInstance>> by_n;
    tasks::for_each_pointer_line(options.file, tasks::pointer_file_options(task), [&](tasks::PointerInstance&& in) {
      by_n[in.size()].push_back(std::move(in));
      return true;
    });
    ENGRAM_CHECK(!by_n.empty(), "{}: no instances", options.file);
    for (const auto& [n, set] : by_n) add(static_cast<int>(n), task == PointerTask::kTsp ? "file" : "", set);
    return rows;
  }
  for (int n : options.n) {
    const auto set = pointer_test_set(task, n, options.instances, options.seed, options.tsp_starts);
    add(n, task != PointerTask::kTsp ? "" : n <= tasks::kHeldKarpMaxN ? "Held-Karp" : "heuristic", set);
  }
  return rows;
}

std::string pointer_eval_table(PointerTask task, std::span<const PointerEvalRow> rows) {
  auto pct = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.1f}%", 100.0 * v); };
  std::string out =
      task == PointerTask::kSort ? eval::markdown_head({"n", "instances", "exact sequence"})
      : task == PointerTask::kHull
          ? eval::markdown_head({"n", "instances", "exact polygon", "area coverage", "FAIL", "wrong first point"})
          : eval::markdown_head({"n", "instances", "mean tour length", "reference length", "reference", "mean gap",
                                 "valid tours"});
  for (const PointerEvalRow& r : rows) {
    const PointerScore& s = r.score;
    switch (task) {
      case PointerTask::kSort: out += fmt::format("| {} | {} | {} |\n", r.n, s.instances, pct(s.exact)); break;
      case PointerTask::kHull:
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.n, s.instances, pct(s.exact), pct(s.coverage),
                           pct(s.fail), pct(s.wrong_start));
        break;
      case PointerTask::kTsp:
        out += fmt::format("| {} | {} | {:.4f} | {:.4f} | {} | {} | {} |\n", r.n, s.instances, s.length, s.reference,
                           r.reference, pct(s.gap), pct(s.valid));
        break;
    }
  }
  return out;
}

// ---- the loaded model directory

std::unique_ptr<LoadedPointerModel> load_pointer_model(const std::filesystem::path& dir) {
  auto m = std::make_unique<LoadedPointerModel>();
  m->model_dir = dir;
  m->model = load_checkpoint_model<PointerNet, PointerConfig>(dir);
  m->packed = std::make_unique<core::PackedWeights>(nn::packed_weights(m->model->params()));
  return m;
}

void LoadedPointerModel::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) {
  setup.set_members(*this, std::move(members), [&](const LoadedModel& member) {
    const PointerConfig& a = model->cfg();
    const PointerConfig& b = dynamic_cast<const LoadedPointerModel&>(member).model->cfg();
    ENGRAM_CHECK(a.task == b.task && a.input_dim == b.input_dim,
                 "--ensemble: {} is a {} model of input width {} and {} a {} model of width {} (an ensemble shares "
                 "its task)",
                 member.dir().string(), pointer_task_name(b.task), b.input_dim, dir().string(),
                 pointer_task_name(a.task), a.input_dim);
  });
}

std::string LoadedPointerModel::input_help() const {
  return model->cfg().task == PointerTask::kSort
             ? "v1 v2 ... vn [output ...]: numbers to sort (the paper's line format)"
             : "x1 y1 x2 y2 ... xn yn [output ...]: points (the paper's line format)";
}

std::string LoadedPointerModel::run_line(const std::string& line) {
  const PointerTask task = model->cfg().task;
  const tasks::PointerFileOptions fo = tasks::pointer_file_options(task);
  // The line's own 'output ...' is ignored (cut off); a placeholder lets the reader check the rest.
  size_t cut = line.size();
  for (size_t pos = line.find("output"); pos != std::string::npos; pos = line.find("output", pos + 6)) {
    const bool left = pos == 0 || std::isspace(static_cast<unsigned char>(line[pos - 1]));
    const bool right = pos + 6 == line.size() || std::isspace(static_cast<unsigned char>(line[pos + 6]));
    if (left && right) {
      cut = pos;
      break;
    }
  }
  std::string text(line, 0, cut);
  text.append(" output 1");
  tasks::PointerFileOptions placeholder = fo;
  placeholder.every_point = false;  // the placeholder names one point
  tasks::PointerInstance in = tasks::parse_pointer_line(text, placeholder, "input");
  in.target.clear();
  PointerDecodeOptions o;
  o.packed_weights = packed.get();
  const std::vector<PointerPrediction> p = predict_pointer(models(), std::span(&in, 1), o);
  std::string out;
  for (int j : p[0].output) out += fmt::format("{}{}", out.empty() ? "" : " ", j + 1);
  if (fo.closed && !p[0].output.empty()) out += fmt::format(" {}", p[0].output[0] + 1);
  return out;
}

}  // namespace engram::models
