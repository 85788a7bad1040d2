// Learning curves (see curves.h): JSONL parsing with file:line errors, "nice" axis ticks (1-2-5
// steps, log10 decades), and one small line chart per metric laid out in a grid.
// Dims: P points of a series.
#include "engram/viz/curves.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engram/core/error.h"
#include "engram/viz/svg.h"

namespace engram::viz {

namespace {

// nlohmann's message without its "[json.exception...] parse error at line 1, " prefix.
std::string short_parse_error(const std::string& what) {
  std::string s = what;
  if (auto p = s.find("] "); p != std::string::npos && s.rfind("[json.exception", 0) == 0) s = s.substr(p + 2);
  if (s.rfind("parse error at line 1, ", 0) == 0) s = s.substr(23);
  else if (s.rfind("parse error: ", 0) == 0) s = s.substr(13);
  return s;
}

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

MetricsLog parse_metrics_jsonl(std::string_view text, std::string_view source) {
  MetricsLog log;
  std::map<std::string, size_t> metric_index;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (blank(line)) continue;
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}:{}: not valid JSON ({})", source, line_no, short_parse_error(e.what())));
    }
    ENGRAM_CHECK(j.is_object(), "{}:{}: expected a JSON object, got {}", source, line_no, j.type_name());
    const auto step_it = j.find("step");
    ENGRAM_CHECK(step_it != j.end() && step_it->is_number(), "{}:{}: missing numeric \"step\"",
                 source, line_no);
    const double step = step_it->get<double>();
    std::string event;
    if (const auto it = j.find("event"); it != j.end()) {
      ENGRAM_CHECK(it->is_string(), "{}:{}: \"event\" must be a string, got {}", source, line_no,
                   it->type_name());
      event = it->get<std::string>();
    }
    for (const auto& [key, value] : j.items()) {
      if (key == "step" || key == "epoch" || key == "batch" || key == "event" || !value.is_number()) {
        continue;
      }
      auto [mi, fresh] = metric_index.try_emplace(key, log.size());
      if (fresh) log.push_back(MetricCurves{key, {}});
      auto& series = log[mi->second].series;
      auto si = std::find_if(series.begin(), series.end(),
                             [&](const CurveSeries& s) { return s.event == event; });
      if (si == series.end()) si = series.insert(series.end(), CurveSeries{event, {}});
      si->points.push_back({step, value.get<double>()});
    }
  }
  // Loss curves first, the optimiser's own numbers last (the Trainer writes keys sorted by name).
  auto rank = [](const std::string& m) {
    if (m == "loss") return 0;
    if (m == "ppl") return 1;
    if (m == "lr" || m == "units_per_s" || m == "grad_norm") return 3;
    return 2;
  };
  std::stable_sort(log.begin(), log.end(), [&](const MetricCurves& a, const MetricCurves& b) {
    return rank(a.metric) < rank(b.metric);
  });
  return log;
}

MetricsLog read_metrics_jsonl(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  ENGRAM_CHECK(f.good(), "{}: cannot open", path);
  std::ostringstream buf;
  buf << f.rdbuf();
  ENGRAM_CHECK(!f.bad(), "{}: read failed", path);
  return parse_metrics_jsonl(buf.str(), path);
}

namespace {

constexpr double kLegendBand = 26;
constexpr double kChartTitleBand = 26;
constexpr double kPadLeft = 60, kPadRight = 16, kPadTop = 28, kPadBottom = 40;
constexpr double kTickFont = 10.5;

struct Style {
  std::string colour;
  std::string dash;  // stroke-dasharray or ""
  bool markers = false;
};

Style style_for(const std::string& event, int other_index) {
  static constexpr const char* kOthers[] = {"#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  if (event == "train") return {"#1f77b4", "", false};
  if (event == "valid") return {"#ff7f0e", "6 3", true};
  return {kOthers[other_index % 5], other_index % 2 ? "2 2" : "", true};
}

// 1, 2 or 5 times a power of ten, about range / target.
double nice_step(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

// Tick text with as many decimals as the step needs; thousands as "k", millions as "M".
std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-6) return "0";
  double div = 1;
  const char* suffix = "";
  if (step >= 1e6 * 0.999) div = 1e6, suffix = "M";
  else if (step >= 1e3 * 0.999) div = 1e3, suffix = "k";
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step / div) + 1e-9)));
  return fmt::format("{:.{}f}{}", v / div, decimals, suffix);
}

struct Axis {
  double lo = 0, hi = 1;       // domain (log10 units on a log axis)
  bool log = false;
  std::vector<double> ticks;   // in data units
  std::vector<std::string> labels;
  double map(double v, double a, double b) const {  // data -> pixel in [a, b]
    const double u = log ? std::log10(v) : v;
    return a + (u - lo) / (hi - lo) * (b - a);
  }
};

Axis make_axis(double mn, double mx, bool allow_log, int target) {
  Axis ax;
  if (allow_log && mn > 0 && mx / mn > 100) {
    ax.log = true;
    ax.lo = std::floor(std::log10(mn));
    ax.hi = std::ceil(std::log10(mx));
    for (double e = ax.lo; e <= ax.hi + 1e-9; e += 1) {
      const double v = std::pow(10.0, e);
      ax.ticks.push_back(v);
      ax.labels.push_back(tick_label(v, v));
    }
    return ax;
  }
  if (mx == mn) {
    const double pad = mn == 0 ? 1 : std::abs(mn) * 0.1;
    mn -= pad, mx += pad;
  }
  const double step = nice_step(mx - mn, target);
  ax.lo = std::floor(mn / step + 1e-9) * step;
  ax.hi = std::ceil(mx / step - 1e-9) * step;
  for (double v = ax.lo; v <= ax.hi + step * 1e-6; v += step) {
    ax.ticks.push_back(v);
    ax.labels.push_back(tick_label(v, step));
  }
  return ax;
}

// One chart at (x0, y0) of size w x h; the x axis (steps) is shared by all charts of the figure.
void draw_chart(std::string& out, const MetricCurves& m, const std::vector<std::string>& events,
                const Axis& xa, double x0, double y0, double w, double h) {
  double ymin = INFINITY, ymax = -INFINITY;
  for (const auto& s : m.series) {
    for (const auto& p : s.points) ymin = std::min(ymin, p.value), ymax = std::max(ymax, p.value);
  }
  const Axis ya = make_axis(ymin, ymax, true, 4);
  const double left = x0 + kPadLeft, right = x0 + w - kPadRight;
  const double top = y0 + kPadTop, bottom = y0 + h - kPadBottom;
  out += fmt::format("<g class=\"chart\">\n<text x=\"{}\" y=\"{}\" font-size=\"13\" font-weight=\"bold\" "
                     "fill=\"#222\">{}{}</text>\n",
                     svg_num(left), svg_num(y0 + 17), xml_escape(m.metric), ya.log ? " (log)" : "");
  for (size_t i = 0; i < ya.ticks.size(); ++i) {
    const double y = ya.map(ya.ticks[i], bottom, top);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#e6e6e6\" stroke-width=\"1\"/>"
        "<text x=\"{3}\" y=\"{4}\" font-size=\"{5}\" text-anchor=\"end\" fill=\"#444\">{6}</text>\n",
        svg_num(left), svg_num(right), svg_num(y), svg_num(left - 6), svg_num(y + kTickFont * 0.35),
        svg_num(kTickFont), xml_escape(ya.labels[i]));
  }
  for (size_t i = 0; i < xa.ticks.size(); ++i) {
    const double x = xa.map(xa.ticks[i], left, right);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\" stroke-width=\"1\"/>"
        "<text x=\"{0}\" y=\"{3}\" font-size=\"{4}\" text-anchor=\"middle\" fill=\"#444\">{5}</text>\n",
        svg_num(x), svg_num(bottom), svg_num(bottom + 4), svg_num(bottom + 6 + kTickFont),
        svg_num(kTickFont), xml_escape(xa.labels[i]));
  }
  out += fmt::format(
      "<path d=\"M{0} {1}V{2}H{3}\" fill=\"none\" stroke=\"#444\" stroke-width=\"1\"/>"
      "<text x=\"{4}\" y=\"{5}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444\">step</text>\n",
      svg_num(left), svg_num(top), svg_num(bottom), svg_num(right), svg_num((left + right) / 2),
      svg_num(bottom + 32));
  for (const auto& s : m.series) {
    const auto idx = std::find(events.begin(), events.end(), s.event) - events.begin();
    int others = 0;
    for (long k = 0; k < idx; ++k) others += events[k] != "train" && events[k] != "valid";
    const Style st = style_for(s.event, others);
    std::vector<CurvePoint> pts = s.points;
    std::stable_sort(pts.begin(), pts.end(),
                     [](const CurvePoint& a, const CurvePoint& b) { return a.step < b.step; });
    std::string d;
    for (const auto& p : pts) {
      d += fmt::format("{}{},{}", d.empty() ? "" : " ", svg_num(xa.map(p.step, left, right)),
                       svg_num(ya.map(p.value, bottom, top)));
    }
    out += fmt::format("<polyline class=\"series\" data-event=\"{}\" points=\"{}\" fill=\"none\" "
                       "stroke=\"{}\" stroke-width=\"1.6\" stroke-linejoin=\"round\"{}/>\n",
                       xml_escape(s.event), d, st.colour,
                       st.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", st.dash));
    if ((st.markers && pts.size() <= 200) || pts.size() == 1) {
      for (const auto& p : pts) {
        out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.6\" fill=\"{}\"/>",
                           svg_num(xa.map(p.step, left, right)), svg_num(ya.map(p.value, bottom, top)),
                           st.colour);
      }
      out += "\n";
    }
  }
  out += "</g>\n";
}

}  // namespace

std::string curves_svg(const MetricsLog& log, const CurvesOptions& o) {
  ENGRAM_CHECK(o.columns >= 1 && o.columns <= kMaxCurveColumns && o.chart_width >= kMinChartWidth &&
                   o.chart_width <= kMaxChartSide && o.chart_height >= kMinChartHeight && o.chart_height <= kMaxChartSide,
               "curves: need 1 ... {} columns and charts of {} ... {} x {} ... {} px, got {} columns of {} x {}",
               kMaxCurveColumns, kMinChartWidth, kMaxChartSide, kMinChartHeight, kMaxChartSide, o.columns,
               o.chart_width, o.chart_height);
  std::vector<const MetricCurves*> charts;
  if (o.metrics.empty()) {
    for (const auto& m : log) charts.push_back(&m);
  } else {
    for (const auto& name : o.metrics) {
      auto it = std::find_if(log.begin(), log.end(), [&](const MetricCurves& m) { return m.metric == name; });
      if (it == log.end()) {
        std::string have;
        for (const auto& m : log) have += (have.empty() ? "" : ", ") + m.metric;
        ENGRAM_CHECK(false, "no metric '{}' in the log (it has: {})", name, have.empty() ? "none" : have);
      }
      charts.push_back(&*it);
    }
  }
  ENGRAM_CHECK(!charts.empty(), "no numeric metrics to plot");
  std::vector<std::string> events;  // train, valid, then others by first appearance
  for (const auto* m : charts) {
    for (const auto& s : m->series) {
      if (std::find(events.begin(), events.end(), s.event) == events.end()) events.push_back(s.event);
    }
  }
  auto rank = [](const std::string& e) { return e == "train" ? 0 : e == "valid" ? 1 : 2; };
  std::stable_sort(events.begin(), events.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  const int cols = std::min<int>(o.columns, static_cast<int>(charts.size()));
  const int rows = (static_cast<int>(charts.size()) + cols - 1) / cols;
  const double title_h = o.title.empty() ? 0 : kChartTitleBand;
  const double width = 2 * kMargin + static_cast<double>(cols) * o.chart_width;  // in double: no int overflow
  const double height = 2 * kMargin + title_h + kLegendBand + static_cast<double>(rows) * o.chart_height;
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"{2}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      svg_num(width), svg_num(height), xml_escape(kFontStack));
  if (!o.title.empty()) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\" fill=\"#222\">{}</text>\n",
                       svg_num(kMargin), svg_num(kMargin + 16), xml_escape(o.title));
  }
  // Legend: one sample line (with a dot where the series has markers) per event.
  double lx = kMargin + kPadLeft;
  const double ly = kMargin + title_h + 14;
  int others = 0;
  for (const auto& e : events) {
    const Style st = style_for(e, others);
    others += e != "train" && e != "valid";
    const std::string name = e.empty() ? "(no event)" : e;
    out += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>",
                       svg_num(lx), svg_num(lx + 26), svg_num(ly), st.colour,
                       st.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", st.dash));
    if (st.markers) {
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.6\" fill=\"{}\"/>", svg_num(lx + 13), svg_num(ly),
                         st.colour);
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#222\">{}</text>\n", svg_num(lx + 32),
                       svg_num(ly + 4), xml_escape(name));
    lx += 32 + text_width(name, 12) + 22;
  }
  double xmin = INFINITY, xmax = -INFINITY;
  for (const auto* m : charts) {
    for (const auto& s : m->series) {
      for (const auto& p : s.points) xmin = std::min(xmin, p.step), xmax = std::max(xmax, p.step);
    }
  }
  const Axis xa = make_axis(xmin, xmax, false, 5);
  for (size_t i = 0; i < charts.size(); ++i) {
    const double x0 = kMargin + (i % cols) * o.chart_width;
    const double y0 = kMargin + title_h + kLegendBand + (i / cols) * o.chart_height;
    draw_chart(out, *charts[i], events, xa, x0, y0, o.chart_width, o.chart_height);
  }
  out += "</svg>\n";
  return out;
}

}  // namespace engram::viz
