// The pointer picture: two point panels (predicted, optimal) and the attention heatmap.
// Dims: n points, R output steps.
#include "engram/models/pointer/show.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "engram/data/tasks/tsp.h"
#include "engram/viz/heatmap.h"
#include "engram/viz/svg.h"

namespace engram::models {

namespace tasks = data::tasks;
using viz::svg_num;

namespace {

constexpr double kPanel = 320;   // panel size in px
constexpr double kMargin = 20;   // around everything
constexpr double kTitle = 28;    // title band above a panel
constexpr double kGap = 30;      // between panels

// One panel at (x0, y0): the points and the output drawn through them.
std::string panel(PointerTask task, const tasks::PointerInstance& in, const std::vector<int>& out, double x0, double y0,
                  const std::string& title, const char* colour) {
  const int64_t n = in.size();
  std::string s = fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#222\">{}</text>\n", svg_num(x0),
                              svg_num(y0 + 16), viz::xml_escape(title));
  const double top = y0 + kTitle;
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\"/>\n", svg_num(x0),
                   svg_num(top), svg_num(kPanel), svg_num(kPanel));
  const double pad = 12, span = kPanel - 2 * pad;
  // Screen position of point j (sorting: of the k-th output, value j).
  auto px = [&](double u) { return x0 + pad + u * span; };
  auto py = [&](double v) { return top + pad + (1.0 - v) * span; };
  std::vector<std::pair<double, double>> at(n);
  if (task == PointerTask::kSort) {
    std::vector<int> rank(n, -1);
    for (size_t k = 0; k < out.size(); ++k) rank[out[k]] = static_cast<int>(k);
    for (int64_t j = 0; j < n; ++j)
      at[j] = {px(in.points[j]), py(rank[j] < 0 ? 0.0 : n > 1 ? static_cast<double>(rank[j]) / (n - 1) : 0.5)};
  } else {
    for (int64_t j = 0; j < n; ++j) at[j] = {px(in.points[2 * j]), py(in.points[2 * j + 1])};
  }
  if (!out.empty()) {
    std::string pts;
    for (int j : out) pts += fmt::format("{},{} ", svg_num(at[j].first), svg_num(at[j].second));
    const bool closed = task != PointerTask::kSort;
    s += fmt::format("<{} points=\"{}\" fill=\"{}\" fill-opacity=\"0.08\" stroke=\"{}\" stroke-width=\"1.6\"/>\n",
                     closed ? "polygon" : "polyline", pts, closed ? colour : "none", colour);
  }
  std::vector<bool> on(n, false);
  for (int j : out) on[j] = true;
  for (int64_t j = 0; j < n; ++j) {
    const bool first = task == PointerTask::kTsp && j == 0;
    s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", svg_num(at[j].first),
                     svg_num(at[j].second), first ? 5 : on[j] ? 3.5 : 2.5, first ? "#d62728" : on[j] ? colour : "#777");
    if (n <= 30)
      s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"#555\">{}</text>\n", svg_num(at[j].first + 4),
                       svg_num(at[j].second - 4), j + 1);
  }
  return s;
}

std::string result_text(PointerTask task, const tasks::PointerInstance& in, const std::vector<int>& out, bool finished,
                        bool reference) {
  const std::span<const float> pts(in.points);
  switch (task) {
    case PointerTask::kSort:
      return reference ? "sorted" : out == in.target && finished ? "exact" : "wrong";
    case PointerTask::kHull: {
      if (reference) return fmt::format("hull, {} vertices, area {:.4f}", in.target.size(),
                                        std::abs(tasks::polygon_area(pts, in.target)));
      const std::optional<double> c = finished ? tasks::hull_area_coverage(pts, out, in.target) : std::nullopt;
      if (!c) return "FAIL (not a simple polygon)";
      return fmt::format("{}, area coverage {:.1f}%", finished && tasks::same_cycle(out, in.target) ? "exact" : "wrong",
                         100.0 * *c);
    }
    case PointerTask::kTsp: {
      if (reference) return fmt::format("length {:.4f}", tasks::tour_length(pts, in.target));
      if (!finished || !tasks::is_valid_tour(out, in.size())) return "invalid tour";
      const double len = tasks::tour_length(pts, out), ref = tasks::tour_length(pts, in.target);
      return fmt::format("length {:.4f}, gap {:+.2f}%", len, ref > 0 ? 100.0 * (len / ref - 1.0) : 0.0);
    }
  }
  return "";
}

}  // namespace

std::string pointer_svg(PointerTask task, const tasks::PointerInstance& in, const PointerPrediction& p,
                        const std::string& what) {
  const int64_t n = in.size();
  const char* optimal = task == PointerTask::kTsp && n > tasks::kHeldKarpMaxN ? "reference" : "optimal";
  std::string body;
  body += panel(task, in, p.output, kMargin, kMargin,
                fmt::format("predicted ({}): {}", what, result_text(task, in, p.output, p.finished, false)), "#1f77b4");
  body += panel(task, in, in.target, kMargin + kPanel + kGap, kMargin,
                fmt::format("{}: {}", optimal, result_text(task, in, in.target, true, true)), "#2ca02c");
  double width = 2 * kMargin + 2 * kPanel + kGap, height = 2 * kMargin + kTitle + kPanel;
  const int64_t rows = n > 0 ? static_cast<int64_t>(p.attention.size()) / n : 0;
  if (rows > 0) {
    viz::Heatmap hm;
    hm.title = "pointer attention: output steps x input points";
    hm.rows = static_cast<int>(rows);
    hm.cols = static_cast<int>(n);
    hm.values = p.attention;
    for (int64_t r = 0; r < rows; ++r)
      hm.row_labels.push_back(r < static_cast<int64_t>(p.output.size()) ? fmt::format("{} -> {}", r + 1, p.output[r] + 1)
                                                                        : std::string("end"));
    for (int64_t j = 0; j < n; ++j) hm.col_labels.push_back(std::to_string(j + 1));
    hm.show_values = n <= 12;
    std::string inner = viz::heatmap_svg(hm);
    inner = inner.substr(inner.find("<svg"));
    std::smatch w, h;
    static const std::regex kWidth("width=\"([0-9.]+)\""), kHeight("height=\"([0-9.]+)\"");
    const double iw = std::regex_search(inner, w, kWidth) ? std::stod(w[1]) : 0;
    const double ih = std::regex_search(inner, h, kHeight) ? std::stod(h[1]) : 0;
    const std::string open = "<svg xmlns=\"http://www.w3.org/2000/svg\" ";
    if (inner.compare(0, open.size(), open) == 0)
      inner = fmt::format("<svg x=\"{}\" y=\"{}\" ", svg_num(kMargin), svg_num(height - kMargin + 10)) +
              inner.substr(open.size());
    body += inner;
    width = std::max(width, 2 * kMargin + iw);
    height += ih + 10;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"{2}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{3}</svg>\n",
      svg_num(std::ceil(width)), svg_num(std::ceil(height)), viz::xml_escape(viz::kFontStack), body);
}

PointerShow show_pointer(const PointerNet& model, int n, uint64_t seed, int beam, int views) {
  const PointerTask task = model.cfg().task;
  tasks::PointerTaskOptions o;
  o.task = task;
  o.min_n = o.max_n = n;
  o.tsp_exact_max_n = tasks::kHeldKarpMaxN;
  ENGRAM_CHECK(n >= 1 && n <= 1000, "pointer show: n {} outside 1..1000", n);
  PointerShow s;
  s.instance = tasks::make_pointer_instance(o, seed, 0);
  PointerDecodeOptions d;
  d.beam = beam;
  d.attention = true;
  d.views = views;
  s.prediction = predict_pointer(model, std::span(&s.instance, 1), d)[0];
  std::string what = beam == 1 ? "greedy" : fmt::format("beam {}", beam);
  if (views > 1) what += fmt::format(", {} views", views);
  s.svg = pointer_svg(task, s.instance, s.prediction, what);
  s.summary = fmt::format("{} n = {} (seed {}), {}: {}; {}: {}", pointer_task_name(task), n, seed, what,
                          result_text(task, s.instance, s.prediction.output, s.prediction.finished, false),
                          task == PointerTask::kTsp && n > tasks::kHeldKarpMaxN ? "reference" : "optimal",
                          result_text(task, s.instance, s.instance.target, true, true));
  return s;
}

}  // namespace engram::models
