// Tree SVG writer (see tree.h): depth-first layout without recursion (trees may be deep), edges
// drawn under the nodes, a legend of the class colours at the bottom.
// Dims: N nodes, L leaves.
#include "engram/viz/tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engram/core/error.h"
#include "engram/viz/svg.h"

namespace engram::viz {

namespace {

constexpr double kRadius = 11, kLevel = 52, kWordFont = 12, kMarkFont = 10, kNoteFont = 9;
constexpr double kMinGap = 34;  // horizontal room of a leaf without a long word

// The fill of a mark: white text on dark fills.
bool dark_fill(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return false;
  const int r = std::stoi(fill.substr(1, 2), nullptr, 16), g = std::stoi(fill.substr(3, 2), nullptr, 16),
            b = std::stoi(fill.substr(5, 2), nullptr, 16);
  return 0.299 * r + 0.587 * g + 0.114 * b < 128;
}

}  // namespace

std::string sentiment_fill(int label, int classes) {
  static const char* fine[5] = {"#b2182b", "#ef8a62", "#f7f7f7", "#67a9cf", "#2166ac"};
  static const char* binary[2] = {"#d6604d", "#4393c3"};
  if (classes == 5 && label >= 0 && label < 5) return fine[label];
  if (classes == 2 && label >= 0 && label < 2) return binary[label];
  return "#bdbdbd";
}

std::string sentiment_mark(int label, int classes) {
  static const char* fine[5] = {"--", "-", "0", "+", "++"};
  static const char* binary[2] = {"-", "+"};
  if (classes == 5 && label >= 0 && label < 5) return fine[label];
  if (classes == 2 && label >= 0 && label < 2) return binary[label];
  return "?";
}

std::string tree_svg(const TreeDiagram& tree) {
  const int n = static_cast<int>(tree.nodes.size());
  ENGRAM_CHECK(n > 0 && tree.root >= 0 && tree.root < n, "tree_svg: root {} outside {} nodes", tree.root, n);
  // Depth-first from the root: depth, pre-order (for leaf order) and a check that it is a tree.
  std::vector<int> depth(n, -1), order;
  order.reserve(n);
  std::vector<int> stack = {tree.root};
  depth[tree.root] = 0;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    order.push_back(v);
    const auto& ch = tree.nodes[v].children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) {
      ENGRAM_CHECK(*it >= 0 && *it < n, "tree_svg: node {} has child {} outside {} nodes", v, *it, n);
      ENGRAM_CHECK(depth[*it] < 0, "tree_svg: node {} is reached twice (not a tree)", *it);
      depth[*it] = depth[v] + 1;
      stack.push_back(*it);
    }
  }
  ENGRAM_CHECK(static_cast<int>(order.size()) == n, "tree_svg: {} of {} nodes are not under the root", n - order.size(), n);
  // x: leaves left to right in pre-order, each as wide as its word; parents centred over their
  // first and last child (reverse pre-order visits children before parents).
  std::vector<double> x(n, 0);
  double cursor = kMargin;
  for (int v : order)
    if (tree.nodes[v].children.empty()) {
      const double w = std::max(kMinGap, text_width(tree.nodes[v].word, kWordFont) + 10);
      x[v] = cursor + w / 2;
      cursor += w;
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto& ch = tree.nodes[*it].children;
    if (!ch.empty()) x[*it] = (x[ch.front()] + x[ch.back()]) / 2;
  }
  const int max_depth = *std::max_element(depth.begin(), depth.end());
  const double top = kMargin + (tree.title.empty() ? 0 : 24) + kRadius;
  auto y_of = [&](int v) { return top + depth[v] * kLevel; };
  const double words_bottom = top + max_depth * kLevel + kRadius + 6 + kWordFont + 4;
  double width = cursor + kMargin + 30;  // room for the last note
  std::string body;
  if (!tree.title.empty())
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">{}</text>\n",
                        svg_num(kMargin), svg_num(kMargin + 14), xml_escape(tree.title));
  body += "<g stroke=\"#888\" stroke-width=\"1.2\">\n";
  for (int v = 0; v < n; ++v)
    for (int c : tree.nodes[v].children)
      body += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", svg_num(x[v]), svg_num(y_of(v)),
                          svg_num(x[c]), svg_num(y_of(c)));
  body += "</g>\n";
  for (int v : order) {
    const TreeDiagramNode& nd = tree.nodes[v];
    const double cx = x[v], cy = y_of(v);
    body += "<g>";
    if (!nd.tooltip.empty()) body += fmt::format("<title>{}</title>", xml_escape(nd.tooltip));
    body += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"#555\" stroke-width=\"1\"/>",
                        svg_num(cx), svg_num(cy), svg_num(kRadius), xml_escape(nd.fill));
    if (!nd.mark.empty())
      body += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
          svg_num(cx), svg_num(cy + kMarkFont * 0.35), svg_num(kMarkFont), dark_fill(nd.fill) ? "#ffffff" : "#222222",
          xml_escape(nd.mark));
    if (!nd.note.empty())
      body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"#555\">{}</text>", svg_num(cx + kRadius + 2),
                          svg_num(cy - kRadius + 3), svg_num(kNoteFont), xml_escape(nd.note));
    if (nd.children.empty() && !nd.word.empty())
      body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"#111\">{}</text>",
                          svg_num(cx), svg_num(cy + kRadius + 4 + kWordFont), svg_num(kWordFont), xml_escape(nd.word));
    body += "</g>\n";
  }
  double height = words_bottom;
  if (!tree.legend.empty()) {
    double lx = kMargin;
    const double ly = words_bottom + 10;
    for (const auto& [fill, text] : tree.legend) {
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\" stroke=\"#555\"/>"
                          "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#333\">{}</text>\n",
                          svg_num(lx), svg_num(ly), xml_escape(fill), svg_num(lx + 16), svg_num(ly + 10), xml_escape(text));
      lx += 16 + text_width(text, 11) + 14;
    }
    width = std::max(width, lx + kMargin);
    height = ly + 12;
  }
  height += kMargin;
  width = std::max(width, kMargin * 2 + text_width(tree.title, 14));
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"{2}\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      svg_num(std::ceil(width)), svg_num(std::ceil(height)), xml_escape(kFontStack));
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace engram::viz
