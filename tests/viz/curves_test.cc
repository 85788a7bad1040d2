// Learning curves: JSONL parsing (metric and event order, ignored fields, file:line errors) and the
// SVG charts (well-formed, one chart per metric, train vs valid series, log axis, tick labels).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "engram/core/error.h"
#include "engram/viz/curves.h"
#include "viz/xml_check.h"

namespace engram::viz {
namespace {

using testing::parse_xml;
using testing::XmlElement;

constexpr const char* kLog =
    "{\"event\":\"train\",\"step\":100,\"epoch\":0,\"loss\":6.9,\"ppl\":992.3,\"lr\":0.001,\"note\":\"warm\"}\n"
    "{\"event\":\"train\",\"step\":200,\"epoch\":0,\"loss\":4.1,\"ppl\":60.3,\"lr\":0.001,\"done\":false}\n"
    "\n"
    "{\"event\":\"valid\",\"step\":200,\"bleu\":3.5,\"ppl\":70.1}\r\n"
    "{\"event\":\"train\",\"step\":300,\"loss\":2.2,\"ppl\":9.0,\"lr\":null}\n"
    "{\"event\":\"valid\",\"step\":400,\"bleu\":12.25,\"ppl\":8.5}\n";

std::string error_of(std::string_view text) {
  try {
    parse_metrics_jsonl(text, "run/metrics.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Curves, ParsesMetricsAndEventsInOrderOfAppearance) {
  const MetricsLog log = parse_metrics_jsonl(kLog, "m.jsonl");
  std::vector<std::string> names;
  for (const auto& m : log) names.push_back(m.metric);
  EXPECT_EQ(names, (std::vector<std::string>{"loss", "ppl", "bleu", "lr"}));  // no step/epoch/strings; lr last
  const auto& ppl = log[1];
  ASSERT_EQ(ppl.series.size(), 2u);
  EXPECT_EQ(ppl.series[0].event, "train");
  EXPECT_EQ(ppl.series[1].event, "valid");
  ASSERT_EQ(ppl.series[0].points.size(), 3u);
  EXPECT_EQ(ppl.series[0].points[2].step, 300);
  EXPECT_DOUBLE_EQ(ppl.series[0].points[2].value, 9.0);
  EXPECT_EQ(ppl.series[1].points.size(), 2u);
  EXPECT_EQ(log[3].series[0].points.size(), 2u);  // lr: null skipped
  EXPECT_DOUBLE_EQ(log[2].series[0].points[1].value, 12.25);
  // A line without "event" forms its own series; "batch" is a counter, not a metric.
  const MetricsLog plain = parse_metrics_jsonl("{\"step\":1,\"x\":2,\"batch\":7}", "p");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].series[0].event, "");
}

TEST(Curves, MalformedLinesNameFileAndLine) {
  EXPECT_EQ(error_of("{\"step\":1,\"loss\":2}\n{\"step\":2,\"loss\":}\n").rfind("run/metrics.jsonl:2: not valid JSON (", 0), 0u)
      << error_of("{\"step\":1}\n{\"step\":2,\"loss\":}\n");
  EXPECT_EQ(error_of("\n\n[1,2]\n"), "run/metrics.jsonl:3: expected a JSON object, got array");
  EXPECT_EQ(error_of("{\"loss\":1}"), "run/metrics.jsonl:1: missing numeric \"step\"");
  EXPECT_EQ(error_of("{\"step\":\"10\",\"loss\":1}"), "run/metrics.jsonl:1: missing numeric \"step\"");
  EXPECT_EQ(error_of("{\"step\":10,\"event\":3,\"loss\":1}"),
            "run/metrics.jsonl:1: \"event\" must be a string, got number");
  // Text after the object: the parser's own reason, cut to "column N: ...", inside the brackets.
  const std::string trailing = error_of("{\"step\":10,\"loss\":1} trailing");
  EXPECT_EQ(trailing.rfind("run/metrics.jsonl:1: not valid JSON (column ", 0), 0u) << trailing;
  EXPECT_NE(trailing.find("expected end of input"), std::string::npos) << trailing;
  EXPECT_EQ(trailing.back(), ')') << trailing;
  // Messages stay one line.
  EXPECT_EQ(error_of("{\"step\":2,").find('\n'), std::string::npos);
  try {
    read_metrics_jsonl("/nonexistent/metrics.jsonl");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/metrics.jsonl: cannot open");
  }
}

TEST(Curves, SvgHasOneChartPerMetricWithTrainAndValidSeries) {
  CurvesOptions o;
  o.title = "run 欢迎";
  const std::string svg = curves_svg(parse_metrics_jsonl(kLog, "m.jsonl"), o);
  XmlElement root;
  ASSERT_NO_THROW(root = parse_xml(svg)) << svg;
  std::vector<const XmlElement*> charts;
  for (const auto* g : root.find_all("g")) {
    if (g->attr("class") == "chart") charts.push_back(g);
  }
  ASSERT_EQ(charts.size(), 4u);
  std::vector<std::string> titles;
  for (const auto* c : charts) titles.push_back(c->find_all("text")[0]->text);
  // ppl spans 8.5 .. 992 (> 2 decades): log axis.
  EXPECT_EQ(titles, (std::vector<std::string>{"loss", "ppl (log)", "bleu", "lr"}));
  const auto lines = charts[1]->find_all("polyline");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]->attr("data-event"), "train");
  EXPECT_EQ(lines[1]->attr("data-event"), "valid");
  EXPECT_NE(lines[0]->attr("stroke"), lines[1]->attr("stroke"));
  EXPECT_EQ(lines[0]->attr("stroke-dasharray"), "");
  EXPECT_NE(lines[1]->attr("stroke-dasharray"), "");
  EXPECT_EQ(charts[1]->find_all("circle").size(), 2u);  // valid points get dots
  // Points: 3 train points in the ppl chart, x increasing.
  const std::string points = lines[0]->attr("points");
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 3);
  std::vector<std::string> all;
  for (const auto* t : root.find_all("text")) all.push_back(t->text);
  for (const char* s : {"run 欢迎", "train", "valid", "step"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), s), all.end()) << s;
  }
}

TEST(Curves, WideRangesGetALogAxisAndStepsUseThousands) {
  std::string text;
  for (int s = 1000; s <= 6000; s += 1000) {
    text += "{\"event\":\"train\",\"step\":" + std::to_string(s) + ",\"ppl\":" +
            std::to_string(std::pow(10.0, 6 - s / 1000)) + "}\n";  // 1e5 .. 1
  }
  const XmlElement root = parse_xml(curves_svg(parse_metrics_jsonl(text, "t")));
  std::vector<std::string> all;
  for (const auto* t : root.find_all("text")) all.push_back(t->text);
  auto has = [&](const char* s) { return std::find(all.begin(), all.end(), s) != all.end(); };
  EXPECT_TRUE(has("ppl (log)"));
  EXPECT_TRUE(has("1k") && has("10k") && has("100k"));  // decades on y
  EXPECT_TRUE(has("2k") && has("6k"));                  // steps on x
}

TEST(Curves, MetricSelectionAndErrors) {
  const MetricsLog log = parse_metrics_jsonl(kLog, "m.jsonl");
  CurvesOptions o;
  o.metrics = {"bleu", "loss"};
  const XmlElement root = parse_xml(curves_svg(log, o));
  std::vector<std::string> titles;
  for (const auto* g : root.find_all("g")) {
    if (g->attr("class") == "chart") titles.push_back(g->find_all("text")[0]->text);
  }
  EXPECT_EQ(titles, (std::vector<std::string>{"bleu", "loss"}));
  o.metrics = {"chrf"};
  try {
    curves_svg(log, o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no metric 'chrf' in the log (it has: loss, ppl, bleu, lr)");
  }
  EXPECT_THROW(curves_svg(MetricsLog{}), Error);
  o.metrics.clear();
  o.columns = 0;
  EXPECT_THROW(curves_svg(log, o), Error);
}

// A chart size past the bounds is refused: 2^31 / 2 px per chart wrapped the SVG's int width negative.
TEST(Curves, HugeSizesAreRefusedNeverOverflowed) {
  const MetricsLog log = parse_metrics_jsonl(
      "{\"event\":\"train\",\"step\":1,\"loss\":2}\n{\"event\":\"train\",\"step\":1,\"ppl\":7}\n", "m");
  CurvesOptions o;
  for (auto set : {+[](CurvesOptions& c) { c.chart_width = 1'073'741'824; },
                   +[](CurvesOptions& c) { c.chart_height = 2'000'000'000; },
                   +[](CurvesOptions& c) { c.chart_width = kMaxChartSide + 1; },
                   +[](CurvesOptions& c) { c.columns = kMaxCurveColumns + 1; }}) {
    o = CurvesOptions{};
    set(o);
    try {
      curves_svg(log, o);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("curves: need 1 ... 100 columns and charts of 160 ... 10000"),
                std::string::npos) << e.what();
    }
  }
  o = CurvesOptions{};
  o.chart_width = o.chart_height = kMaxChartSide;
  const std::string svg = curves_svg(log, o);
  EXPECT_NE(svg.find("width=\"20032\""), std::string::npos) << svg.substr(0, 300);
}

TEST(Curves, SinglePointAndConstantSeriesStillDraw) {
  const MetricsLog log = parse_metrics_jsonl("{\"event\":\"train\",\"step\":5,\"lr\":0.5}\n", "one");
  XmlElement root;
  ASSERT_NO_THROW(root = parse_xml(curves_svg(log)));
  EXPECT_EQ(root.find_all("circle").size(), 1u);
  // A constant series (zero value range) still draws its line, at finite coordinates.
  const MetricsLog flat = parse_metrics_jsonl(
      "{\"event\":\"train\",\"step\":5,\"lr\":0.5}\n{\"event\":\"train\",\"step\":10,\"lr\":0.5}\n"
      "{\"event\":\"train\",\"step\":15,\"lr\":0.5}\n",
      "flat");
  XmlElement flat_root;
  ASSERT_NO_THROW(flat_root = parse_xml(curves_svg(flat)));
  for (const XmlElement* doc : {&root, &flat_root}) {
    for (const auto* p : doc->find_all("polyline")) {
      EXPECT_EQ(p->attr("points").find("nan"), std::string::npos);
      EXPECT_EQ(p->attr("points").find("inf"), std::string::npos);
    }
  }
  const auto lines = flat_root.find_all("polyline");
  ASSERT_EQ(lines.size(), 1u);
  const std::string points = lines[0]->attr("points");  // "x,y x,y x,y": one y for all three
  std::vector<std::string> ys;
  for (size_t at = 0; (at = points.find(',', at)) != std::string::npos; ++at)
    ys.push_back(points.substr(at + 1, points.find(' ', at) - at - 1));
  ASSERT_EQ(ys.size(), 3u) << points;
  EXPECT_EQ(ys[0], ys[1]) << points;
  EXPECT_EQ(ys[1], ys[2]) << points;
}

TEST(Curves, ReadsAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("engram_curves_" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(path) << kLog;
  EXPECT_EQ(read_metrics_jsonl(path.string()).size(), 4u);
  std::ofstream(path) << "{\"step\":1,\"loss\":1}\nnot json\n";
  try {
    read_metrics_jsonl(path.string());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":2: not valid JSON", 0), 0u) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace engram::viz
