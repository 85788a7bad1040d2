// `engram plot METRICS.jsonl -o curves.svg`: learning curves of a training run (the metrics
// JSONL the Trainer writes) as one SVG, one chart per numeric metric. A thin adapter over
// viz/curves.h.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/core/error.h"
#include "engram/io/files.h"
#include "engram/viz/curves.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

struct PlotArgs {
  std::string metrics_path;
  std::string output;
  viz::CurvesOptions options;
};

void run_plot(const PlotArgs& a) {
  const viz::MetricsLog log = viz::read_metrics_jsonl(a.metrics_path);
  ENGRAM_CHECK(!log.empty(), "{}: no numeric metrics to plot (expected lines like "
               "{{\"event\":\"train\",\"step\":100,\"loss\":2.3}})", a.metrics_path);
  viz::CurvesOptions o = a.options;
  if (o.title.empty()) o.title = a.metrics_path;
  std::string svg;
  try {
    svg = viz::curves_svg(log, o);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", a.metrics_path, e.what()));
  }
  io::write_output_file(a.output, svg);
  std::string names;
  if (o.metrics.empty()) {
    for (const auto& m : log) names += (names.empty() ? "" : ", ") + m.metric;
  } else {
    for (const auto& m : o.metrics) names += (names.empty() ? "" : ", ") + m;
  }
  const size_t charts = o.metrics.empty() ? log.size() : o.metrics.size();
  fmt::print("wrote {}: {} chart{} ({})\n", a.output, charts, charts == 1 ? "" : "s", names);
  std::fflush(stdout);
}

}  // namespace

void register_plot(CLI::App& app) {
  auto* cmd = app.add_subcommand("plot", "draw learning curves from a metrics JSONL file as SVG");
  auto a = std::make_shared<PlotArgs>();
  cmd->add_option("metrics_jsonl", a->metrics_path, "metrics JSONL (one JSON object per line)")->required();
  cmd->add_option("-o,--output", a->output, "SVG file to write")->required();
  cmd->add_option("--metrics", a->options.metrics, "charts to draw, in order (default: all)")
      ->delimiter(',');
  cmd->add_option("--columns", a->options.columns, "charts per row")
      ->check(CLI::Range(1, viz::kMaxCurveColumns))
      ->capture_default_str();
  cmd->add_option("--chart-width", a->options.chart_width, "px per chart")
      ->check(CLI::Range(viz::kMinChartWidth, viz::kMaxChartSide))
      ->capture_default_str();
  cmd->add_option("--chart-height", a->options.chart_height, "px per chart")
      ->check(CLI::Range(viz::kMinChartHeight, viz::kMaxChartSide))
      ->capture_default_str();
  cmd->add_option("--title", a->options.title, "figure title (default: the file name)");
  cmd->callback([a] { run_plot(*a); });
}

}  // namespace engram::cli
