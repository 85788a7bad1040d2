// viz::tree_svg: a well-formed document with one circle per node, the words below the leaves,
// marks, notes, legend and escaped text; the layout keeps leaves in sentence order; malformed
// trees are errors.
#include <gtest/gtest.h>

#include <string>

#include "engram/core/error.h"
#include "engram/viz/tree.h"
#include "viz/xml_check.h"

namespace engram::viz {
namespace {

using testing::parse_xml;
using testing::XmlElement;

// (root (a b) c <&>) with nodes listed in post-order: a=0, b=1, ab=2, c=3, root=4.
TreeDiagram small_tree() {
  TreeDiagram t;
  t.title = "It <rocks> & rolls";
  t.nodes.resize(5);
  t.nodes[0].word = "It";
  t.nodes[1].word = "really";
  t.nodes[3].word = "rocks&<rolls>";
  t.nodes[2].children = {0, 1};
  t.nodes[4].children = {2, 3};
  for (int i = 0; i < 5; ++i) {
    t.nodes[i].mark = sentiment_mark(i % 5, 5);
    t.nodes[i].fill = sentiment_fill(i % 5, 5);
    t.nodes[i].note = "0.5" + std::to_string(i);
    t.nodes[i].tooltip = "node " + std::to_string(i);
  }
  t.root = 4;
  t.legend = {{sentiment_fill(0, 2), "negative"}, {sentiment_fill(1, 2), "positive"}};
  return t;
}

TEST(TreeSvg, OneCircleEveryNodeWordsInOrderAndEscapedText) {
  const std::string svg = tree_svg(small_tree());
  XmlElement root;
  ASSERT_NO_THROW(root = parse_xml(svg)) << svg;
  EXPECT_EQ(root.name, "svg");
  const auto circles = root.find_all("circle");
  ASSERT_EQ(circles.size(), 5u);
  std::vector<std::string> words;
  double last_x = -1;
  for (const XmlElement* t : root.find_all("text")) {
    if (t->text == "It" || t->text == "really" || t->text == "rocks&<rolls>") {
      words.push_back(t->text);
      const double x = std::stod(t->attr("x"));
      EXPECT_GT(x, last_x) << t->text;
      last_x = x;
    }
  }
  EXPECT_EQ(words, (std::vector<std::string>{"It", "really", "rocks&<rolls>"}));
  bool title = false, legend = false, mark = false;
  for (const XmlElement* t : root.find_all("text")) {
    title = title || t->text == "It <rocks> & rolls";
    legend = legend || t->text == "positive";
    mark = mark || t->text == "++";
  }
  EXPECT_TRUE(title && legend && mark);
  EXPECT_EQ(root.find_all("title").size(), 5u);
  EXPECT_EQ(root.find_all("line").size(), 4u);  // one edge per non-root node
}

TEST(TreeSvg, RejectsWhatIsNotOneTree) {
  TreeDiagram t = small_tree();
  t.nodes[4].children = {2, 3, 0};  // node 0 reached twice
  EXPECT_THROW(tree_svg(t), Error);
  t = small_tree();
  t.nodes[4].children = {2, 7};
  EXPECT_THROW(tree_svg(t), Error);
  t = small_tree();
  t.nodes[4].children = {2};  // node 3 unreachable
  EXPECT_THROW(tree_svg(t), Error);
  t.root = 9;
  EXPECT_THROW(tree_svg(t), Error);
}

TEST(TreeSvg, SentimentColoursRunFromRedThroughWhiteToBlue) {
  EXPECT_EQ(sentiment_fill(2, 5), "#f7f7f7");
  EXPECT_NE(sentiment_fill(0, 5), sentiment_fill(4, 5));
  EXPECT_EQ(sentiment_mark(0, 5), "--");
  EXPECT_EQ(sentiment_mark(1, 2), "+");
  EXPECT_EQ(sentiment_mark(7, 5), "?");
}

}  // namespace
}  // namespace engram::viz
