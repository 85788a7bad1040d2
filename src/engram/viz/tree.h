// Trees as standalone SVG, drawn top-down like the Stanford sentiment demo: the root on top, each
// node a circle at its depth, filled with a class colour, a short mark inside ("++", "-") and a
// note beside it (e.g. the probability); leaves carry their word below. Leaves are spaced left to
// right in sentence order (each as wide as its word), a parent sits centred over its first and
// last child. Text is UTF-8 (CJK-capable font stack), XML-escaped.
// Dims: N nodes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace engram::viz {

struct TreeDiagramNode {
  std::vector<int> children;  // indices into TreeDiagram::nodes, left to right; empty = a leaf
  std::string word;           // leaves: drawn below the circle
  std::string mark;           // inside the circle (a few characters)
  std::string note;           // beside the circle, small (e.g. "0.87")
  std::string fill = "#f7f7f7";
  std::string tooltip;        // <title> of the node
};

struct TreeDiagram {
  std::string title;                                        // drawn above (may be empty)
  std::vector<TreeDiagramNode> nodes;                       // [N] in any order
  int root = 0;
  std::vector<std::pair<std::string, std::string>> legend;  // (fill, text) swatches drawn below
};

// One SVG document. Throws engram::Error unless nodes form one tree under `root` (indices in
// range, each node reached exactly once).
std::string tree_svg(const TreeDiagram& tree);

// The sentiment colours of the Stanford demo: red (negative) through white (neutral) to blue
// (positive). classes 5: labels 0..4; classes 2: 0 negative, 1 positive. Others: grey.
std::string sentiment_fill(int label, int classes);
// "--", "-", "0", "+", "++" (5 classes) or "-", "+" (2).
std::string sentiment_mark(int label, int classes);

}  // namespace engram::viz
