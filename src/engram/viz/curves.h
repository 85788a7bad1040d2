// Learning curves as SVG from a metrics JSONL file (what the Trainer writes: one JSON object per
// line, e.g. {"event":"train","step":100,"loss":2.3,"ppl":9.9,"lr":0.001} and
// {"event":"valid","step":1000,"bleu":21.3,"ppl":8.1}). Every numeric field other than the
// counters "step", "epoch" and "batch" is a metric; each metric gets one small line chart
// (x = step) with one series per event (train: solid line, valid: dashed line with dots, others
// in further colours).
// Dims: P points of a series.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engram::viz {

struct CurvePoint {
  double step = 0;
  double value = 0;
};

struct CurveSeries {
  std::string event;               // "train", "valid", ... ("" when the line had no "event")
  std::vector<CurvePoint> points;  // [P] in file order
};

struct MetricCurves {
  std::string metric;               // "loss", "bleu", ...
  std::vector<CurveSeries> series;  // one per event, in order of first appearance
};

// Metrics in chart order: loss, ppl, then the others in order of first appearance, then the
// optimiser's numbers (lr, units_per_s, grad_norm).
using MetricsLog = std::vector<MetricCurves>;

// Parses JSONL text; `source` names it in errors ("metrics.jsonl:12: not valid JSON (...)").
// Blank lines are skipped; a line that is not a JSON object, lacks a numeric "step", or has a
// non-string "event" is an engram::Error naming source:line. Non-numeric fields (strings, bools,
// null) are ignored.
MetricsLog parse_metrics_jsonl(std::string_view text, std::string_view source);
// Reads and parses a file (error names the path if it cannot be read).
MetricsLog read_metrics_jsonl(const std::string& path);

// The sizes curves_svg accepts (docs/limits.md): charts per row, and each chart's side in px.
inline constexpr int kMaxCurveColumns = 100;
inline constexpr int kMinChartWidth = 160, kMinChartHeight = 120, kMaxChartSide = 10'000;

struct CurvesOptions {
  std::vector<std::string> metrics;  // charts to draw, in this order; empty = all in the log
  int columns = 2;                   // charts per row
  int chart_width = 380;             // px per chart
  int chart_height = 240;            // px per chart
  std::string title;                 // figure title (may be empty)
};

// One SVG document: a legend of the events and a grid of charts. A metric whose values are all
// positive and span more than two decades (e.g. perplexity) gets a log10 y axis. Throws
// engram::Error when there is nothing to draw, a requested metric is absent (listing those
// present) or a size is outside the bounds above.
std::string curves_svg(const MetricsLog& log, const CurvesOptions& options = {});

}  // namespace engram::viz
