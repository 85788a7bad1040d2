// Heatmap SVG: well-formed XML, labels (CJK and XML-special) intact, values and their text colour,
// marked columns, side-by-side maps and legends, size checks, and the SVG helpers it builds on.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "engram/core/error.h"
#include "engram/viz/heatmap.h"
#include "engram/viz/memory.h"
#include "engram/viz/svg.h"
#include "viz/xml_check.h"

namespace engram::viz {
namespace {

using testing::parse_xml;
using testing::XmlElement;

// The seed article's example: "欢迎 来 北京" -> "Welcome to Beijing <eos>".
Heatmap beijing() {
  Heatmap m;
  m.title = "attention";
  m.row_labels = {"Welcome", "to", "Beijing", "<eos>"};
  m.col_labels = {"欢迎", "来", "北京"};
  m.rows = 4, m.cols = 3;
  m.values = {0.8f, 0.1f, 0.1f, 0.1f, 0.8f, 0.1f, 0.1f, 0.1f, 0.8f, 0.3f, 0.2f, 0.5f};
  return m;
}

std::vector<std::string> texts(const XmlElement& root) {
  std::vector<std::string> out;
  for (const auto* t : root.find_all("text")) out.push_back(t->text);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Cell rects are the ones carrying a <title> tooltip, in row-major order.
std::vector<const XmlElement*> cells(const XmlElement& root) {
  std::vector<const XmlElement*> out;
  for (const auto* r : root.find_all("rect")) {
    if (!r->children.empty() && r->children[0].name == "title") out.push_back(r);
  }
  return out;
}

TEST(Heatmap, AttentionExampleIsWellFormedWithLabelsAndValues) {
  const std::string svg = heatmap_svg(beijing());
  XmlElement root;
  ASSERT_NO_THROW(root = parse_xml(svg)) << svg;
  EXPECT_EQ(root.name, "svg");
  EXPECT_EQ(root.attr("xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_NE(root.attr("font-family").find("'Noto Sans CJK SC'"), std::string::npos);
  EXPECT_GT(std::stod(root.attr("width")), 100);
  const auto t = texts(root);
  for (const char* label : {"欢迎", "来", "北京", "Welcome", "to", "Beijing", "<eos>", "attention"}) {
    EXPECT_TRUE(has(t, label)) << label;
  }
  EXPECT_NE(svg.find("&lt;eos&gt;"), std::string::npos);  // escaped in the raw document
  EXPECT_EQ(std::count(t.begin(), t.end(), "0.80"), 3);
  EXPECT_EQ(std::count(t.begin(), t.end(), "0.10"), 6);
  EXPECT_TRUE(has(t, "0.50"));
  const auto c = cells(root);
  ASSERT_EQ(c.size(), 12u);
  EXPECT_EQ(c[0]->children[0].text, "Welcome / 欢迎: 0.8");
  // Legend: one gradient, ticks 0, 0.5, 1.
  EXPECT_EQ(root.find_all("linearGradient").size(), 1u);
  EXPECT_TRUE(has(t, "0") && has(t, "0.5") && has(t, "1"));
}

TEST(Heatmap, ValueTextFlipsToWhiteOnDarkCells) {
  Heatmap m;
  m.rows = 1, m.cols = 2;
  m.values = {0.0f, 1.0f};
  const XmlElement root = parse_xml(heatmap_svg(m));
  std::map<std::string, std::string> fill_of;
  for (const auto* t : root.find_all("text")) fill_of[t->text] = t->attr("fill");
  EXPECT_EQ(fill_of["0.00"], "#1a1a1a");
  EXPECT_EQ(fill_of["1.00"], "#ffffff");
  const auto c = cells(root);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]->attr("fill"), scale_colour(0));
  EXPECT_EQ(c[1]->attr("fill"), scale_colour(1));
}

TEST(Heatmap, SmallCellsOrShowValuesOffPrintNoValues) {
  Heatmap m = beijing();
  m.cell_px = 16;  // below the 24 px threshold
  EXPECT_FALSE(has(texts(parse_xml(heatmap_svg(m))), "0.80"));
  m = beijing();
  m.show_values = false;
  EXPECT_FALSE(has(texts(parse_xml(heatmap_svg(m))), "0.80"));
}

TEST(Heatmap, XmlSpecialAndInvalidBytesStayWellFormed) {
  Heatmap m;
  m.title = "A&B <hop 2> \"q\" 'x'";
  m.row_labels = {"a<b", std::string("bad\xff\x01") + "byte"};
  m.col_labels = {"&amp;", "]]>"};
  m.rows = 2, m.cols = 2;
  m.values = {0.1f, 0.2f, 0.3f, 0.4f};
  const std::string svg = heatmap_svg(m);
  XmlElement root;
  ASSERT_NO_THROW(root = parse_xml(svg)) << svg;
  const auto t = texts(root);
  EXPECT_TRUE(has(t, m.title));
  EXPECT_TRUE(has(t, "a<b"));
  EXPECT_TRUE(has(t, "&amp;"));  // literally, after one decoding
  EXPECT_TRUE(has(t, "]]>"));
  EXPECT_TRUE(has(t, "bad\uFFFD\uFFFDbyte"));
}

TEST(Heatmap, CjkLabelsSurviveByteForByte) {
  Heatmap m;
  m.rows = 1, m.cols = 3;
  m.row_labels = {"北京欢迎你"};
  m.col_labels = {"東京", "서울", "Zürich"};
  m.values = {0.2f, 0.3f, 0.5f};
  const std::string svg = heatmap_svg(m);
  for (const auto& s : {"北京欢迎你", "東京", "서울", "Zürich"}) {
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  }
  EXPECT_NO_THROW(parse_xml(svg));
}

TEST(Heatmap, MarkedColumnsAreOutlinedOverTheirCells) {
  Heatmap m = beijing();
  m.marked_cols = {1};
  const XmlElement root = parse_xml(heatmap_svg(m));
  std::vector<const XmlElement*> marked;
  for (const auto* r : root.find_all("rect")) {
    if (r->attr("class") == "marked") marked.push_back(r);
  }
  ASSERT_EQ(marked.size(), 1u);
  const auto c = cells(root);
  const double cell_x = std::stod(c[1]->attr("x")), cell_w = std::stod(c[1]->attr("width"));
  const double mx = std::stod(marked[0]->attr("x")), mw = std::stod(marked[0]->attr("width"));
  EXPECT_GT(mx, cell_x);
  EXPECT_LT(mx + mw, cell_x + cell_w);
  EXPECT_NEAR(std::stod(marked[0]->attr("height")), 4 * cell_w - 2.5, 1e-6);  // the whole column
  EXPECT_EQ(marked[0]->attr("fill"), "none");
  // The marked column's label is emphasised (each label is found exactly once).
  int marked_labels = 0, plain_labels = 0;
  for (const auto* t : root.find_all("text")) {
    if (t->text == "来") {
      ++marked_labels;
      EXPECT_EQ(t->attr("font-weight"), "bold");
    }
    if (t->text == "欢迎") {
      ++plain_labels;
      EXPECT_EQ(t->attr("font-weight"), "");
    }
  }
  EXPECT_EQ(marked_labels, 1);
  EXPECT_EQ(plain_labels, 1);
}

TEST(Heatmap, LongColumnLabelsAreRotatedShortOnesNot) {
  Heatmap m = beijing();
  auto label_transforms = [](const Heatmap& h) {
    std::vector<std::string> out;
    const XmlElement root = parse_xml(heatmap_svg(h));
    for (const auto* t : root.find_all("text")) {
      if (t->text == h.col_labels[0]) out.push_back(t->attr("transform"));
    }
    return out;
  };
  EXPECT_EQ(label_transforms(m), std::vector<std::string>{""});
  m.col_labels = {"a_long_source_token", "b", "c"};
  const auto tr = label_transforms(m);
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].rfind("rotate(-45", 0), 0u) << tr[0];
}

TEST(Heatmap, MapsSideBySideWithSharedOrSeparateLegends) {
  Heatmap a = beijing(), b = beijing();
  b.title = "hop 2";
  XmlElement root = parse_xml(heatmap_svg({a, b}));
  std::vector<double> xs;
  for (const auto* g : root.find_all("g")) {
    const std::string tr = g->attr("transform");
    if (tr.rfind("translate(", 0) == 0) xs.push_back(std::stod(tr.substr(10)));
  }
  ASSERT_EQ(xs.size(), 2u);
  EXPECT_LT(xs[0], xs[1]);
  EXPECT_EQ(root.find_all("linearGradient").size(), 1u);
  EXPECT_EQ(cells(root).size(), 24u);
  b.vmax = 2;
  root = parse_xml(heatmap_svg({a, b}));
  EXPECT_EQ(root.find_all("linearGradient").size(), 2u);
  EXPECT_TRUE(has(texts(root), "2"));
}

TEST(Heatmap, NanCellsAreMaskedGrey) {
  Heatmap m = beijing();
  m.values[11] = NAN;
  const XmlElement root = parse_xml(heatmap_svg(m));
  const auto c = cells(root);
  EXPECT_EQ(c[11]->attr("fill"), "#e6e6e6");
  EXPECT_EQ(c[11]->children[0].text, "<eos> / 北京: masked");
  EXPECT_FALSE(has(texts(root), "nan"));
}

TEST(Heatmap, InconsistentSizesAreErrors) {
  auto message = [](const Heatmap& m) {
    try {
      heatmap_svg(m);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Heatmap m = beijing();
  m.values.pop_back();
  EXPECT_EQ(message(m), "heatmap 0 ('attention'): 11 values for 4 x 3 cells");
  m = beijing();
  m.col_labels.push_back("extra");
  EXPECT_EQ(message(m), "heatmap 0 ('attention'): 4 column labels for 3 columns");
  m = beijing();
  m.row_labels.pop_back();
  EXPECT_EQ(message(m), "heatmap 0 ('attention'): 3 row labels for 4 rows");
  m = beijing();
  m.marked_cols = {3};
  EXPECT_EQ(message(m), "heatmap 0 ('attention'): marked column 3 out of range [0, 3)");
  m = beijing();
  m.vmin = 1;
  EXPECT_EQ(message(m), "heatmap 0 ('attention'): colour scale needs vmin < vmax, got [1, 1]");
  EXPECT_THROW(heatmap_svg(std::vector<Heatmap>{}), Error);
}

TEST(SvgHelpers, WidthsCountCjkAsWide) {
  EXPECT_DOUBLE_EQ(text_width("北京", 10), 20);
  EXPECT_LT(text_width("ab", 10), 12);
  EXPECT_LT(text_width("il", 10), text_width("mw", 10));
  EXPECT_TRUE(is_wide_char(U'欢'));
  EXPECT_TRUE(is_wide_char(U'서'));
  EXPECT_FALSE(is_wide_char(U'é'));
}

TEST(SvgHelpers, TruncateKeepsWholeCodePoints) {
  EXPECT_EQ(truncate_label("北京欢迎你", 3), "北京…");
  EXPECT_EQ(truncate_label("北京", 3), "北京");
  EXPECT_EQ(truncate_label("abcdef", 4), "abc…");
}

TEST(SvgHelpers, ScaleGetsDarkerMonotonically) {
  auto lum = [](const std::string& hex) {
    const int r = std::stoi(hex.substr(1, 2), nullptr, 16), g = std::stoi(hex.substr(3, 2), nullptr, 16),
              b = std::stoi(hex.substr(5, 2), nullptr, 16);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  double prev = 1e9;
  for (int i = 0; i <= 20; ++i) {
    const double l = lum(scale_colour(i / 20.0));
    EXPECT_LT(l, prev) << i;
    prev = l;
  }
  EXPECT_EQ(scale_colour(-3), scale_colour(0));  // clamped
  EXPECT_EQ(scale_colour(7), scale_colour(1));
  EXPECT_TRUE(dark_text_ok(0.1));
  EXPECT_FALSE(dark_text_ok(0.9));
  EXPECT_EQ(svg_num(12.0), "12");
  EXPECT_EQ(svg_num(-0.001), "0");
  EXPECT_EQ(svg_num(3.456), "3.46");
}

TEST(MemorySvg, PanelsAreTransposedToTimeOnColumns) {
  TimePanel p{"write weighting", {}, 3, 2};
  p.values = {0.f, 1.f, 0.5f, 0.25f, 0.75f, 0.125f};  // [T=3, D=2]
  const Heatmap h = time_heatmap(p, 20);
  EXPECT_EQ(h.rows, 2);
  EXPECT_EQ(h.cols, 3);
  for (int t = 0; t < 3; ++t) {
    for (int d = 0; d < 2; ++d) EXPECT_EQ(h.values[d * 3 + t], p.values[t * 2 + d]);
  }
  EXPECT_EQ(h.col_labels, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_FALSE(h.show_values);
}

TEST(MemorySvg, SparseLabelsAndWellFormedDocument) {
  TimePanel in{"inputs", std::vector<float>(40 * 8, 0.5f), 40, 8};
  TimePanel w{"write weighting", std::vector<float>(40 * 128, 0.01f), 40, 128};
  const std::string svg = memory_svg({in, w});
  XmlElement root;
  ASSERT_NO_THROW(root = parse_xml(svg));
  EXPECT_EQ(cells(root).size(), 40u * 8 + 40u * 128);
  const auto t = texts(root);
  EXPECT_TRUE(has(t, "inputs") && has(t, "write weighting"));
  const Heatmap h = time_heatmap(w, 4);  // 4 px cells: step labels thinned out
  EXPECT_EQ(h.col_labels[0], "0");
  EXPECT_EQ(h.col_labels[1], "");
  int labelled = 0;
  for (const auto& s : h.col_labels) labelled += !s.empty();
  EXPECT_LT(labelled, 10);
  TimePanel bad{"reads", std::vector<float>(5), 2, 3};
  try {
    memory_svg({bad});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "time panel 'reads': 5 values for 2 steps x 3 dims");
  }
}

}  // namespace
}  // namespace engram::viz
