// Heatmap SVG writer (see heatmap.h): per-map layout (labels, rotated column headers, cells,
// values, marked columns), maps placed side by side with top-aligned grids, and a colour legend.
// Dims: R rows, C columns.
#include "engram/viz/heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engram/core/error.h"
#include "engram/viz/svg.h"

namespace engram::viz {

namespace {

constexpr double kMapGap = 36;       // between maps
constexpr double kLabelGap = 6;      // between labels and the grid
constexpr double kTitleFont = 14;
constexpr double kTitleBand = 24;    // height reserved for titles
constexpr double kMaxLabelFont = 12;
constexpr int kMaxLabelChars = 24;   // longer labels are truncated with "…"
constexpr double kValueMinCell = 24; // smallest cell that prints its value
constexpr double kLegendBar = 12;
constexpr double kLegendFont = 11;
constexpr double kSin45 = 0.70710678;
constexpr const char* kMarkColour = "#e8590c";

struct Layout {
  double cell = 0;          // px per cell (square)
  double label_font = 0;    // px
  double row_label_w = 0;   // width of the row-label column including the gap
  bool rotate = false;      // column labels at -45°
  double header_h = 0;      // height of the column-label band
  double grid_x = 0;        // grid left edge, relative to the map
  double grid_w = 0, grid_h = 0;
  double title_cx = 0;      // title centre, relative to the map
  double width = 0;         // map width (legend excluded)
  std::vector<std::string> rows, cols;  // truncated labels
};

void validate(const Heatmap& m, size_t index) {
  const std::string what = m.title.empty() ? fmt::format("heatmap {}", index)
                                           : fmt::format("heatmap {} ('{}')", index, m.title);
  ENGRAM_CHECK(m.rows > 0 && m.cols > 0, "{}: needs rows > 0 and cols > 0, got {} x {}", what,
               m.rows, m.cols);
  ENGRAM_CHECK(m.values.size() == static_cast<size_t>(m.rows) * m.cols,
               "{}: {} values for {} x {} cells", what, m.values.size(), m.rows, m.cols);
  ENGRAM_CHECK(m.row_labels.empty() || static_cast<int>(m.row_labels.size()) == m.rows,
               "{}: {} row labels for {} rows", what, m.row_labels.size(), m.rows);
  ENGRAM_CHECK(m.col_labels.empty() || static_cast<int>(m.col_labels.size()) == m.cols,
               "{}: {} column labels for {} columns", what, m.col_labels.size(), m.cols);
  for (int c : m.marked_cols) {
    ENGRAM_CHECK(c >= 0 && c < m.cols, "{}: marked column {} out of range [0, {})", what, c, m.cols);
  }
  ENGRAM_CHECK(std::isfinite(m.vmin) && std::isfinite(m.vmax) && m.vmax > m.vmin,
               "{}: colour scale needs vmin < vmax, got [{}, {}]", what, m.vmin, m.vmax);
  ENGRAM_CHECK(m.cell_px >= 0, "{}: cell_px must be >= 0, got {}", what, m.cell_px);
}

Layout layout(const Heatmap& m) {
  Layout l;
  l.cell = m.cell_px > 0 ? m.cell_px
                         : std::clamp(std::floor(560.0 / std::max(m.rows, m.cols)), 8.0, 44.0);
  l.label_font = std::clamp(l.cell - 1, 7.0, kMaxLabelFont);
  double row_w = 0, col_w = 0;
  for (const auto& s : m.row_labels) {
    l.rows.push_back(truncate_label(s, kMaxLabelChars));
    row_w = std::max(row_w, text_width(l.rows.back(), l.label_font));
  }
  for (const auto& s : m.col_labels) {
    l.cols.push_back(truncate_label(s, kMaxLabelChars));
    col_w = std::max(col_w, text_width(l.cols.back(), l.label_font));
  }
  l.row_label_w = row_w > 0 ? row_w + kLabelGap : 0;
  // Upright column labels may use the room of empty neighbours (sparse labels, e.g. every 5th
  // time step); rotate all of them when one does not fit.
  int prev = -1;
  for (int c = 0; c < static_cast<int>(l.cols.size()); ++c) {
    if (l.cols[c].empty()) continue;
    int next = c + 1;
    while (next < static_cast<int>(l.cols.size()) && l.cols[next].empty()) ++next;
    const int left = prev < 0 ? 2 * c + 1 : c - prev;
    const int right = next >= static_cast<int>(l.cols.size()) ? 2 * (next - c) - 1 : next - c;
    const double room = l.cell * std::min(left, right) - 2;
    if (text_width(l.cols[c], l.label_font) > room) l.rotate = true;
    prev = c;
  }
  l.header_h = col_w == 0 ? 4 : l.rotate ? (col_w + l.label_font) * kSin45 + kLabelGap
                                         : l.label_font + kLabelGap;
  l.grid_x = l.row_label_w;
  l.grid_w = l.cell * m.cols;
  l.grid_h = l.cell * m.rows;
  // A rotated label of the last column reaches past the grid's right edge.
  const double overflow = l.rotate ? std::max(0.0, col_w * kSin45 - l.cell / 2 + 4) : 0;
  l.width = l.grid_x + l.grid_w + overflow;
  const double title_w = text_width(m.title, kTitleFont);
  l.title_cx = std::max(l.grid_x + l.grid_w / 2, title_w / 2);
  l.width = std::max(l.width, l.title_cx + title_w / 2);
  return l;
}

// Legend tick text: 3 significant digits ("0", "0.5", "0.001", "12.5").
std::string legend_label(double v) { return v == 0 ? "0" : fmt::format("{:.3g}", v); }

double legend_width(const Heatmap& m) {
  double w = 0;
  for (double v : {double(m.vmin), double(m.vmax), (double(m.vmin) + m.vmax) / 2}) {
    w = std::max(w, text_width(legend_label(v), kLegendFont));
  }
  return kLegendBar + 5 + w;
}

// Vertical bar: vmax at the top, vmin at the bottom, mid-point tick between.
void draw_legend(std::string& out, const Heatmap& m, double x, double y, double h, int id) {
  out += fmt::format(
      "<defs><linearGradient id=\"engram-scale-{}\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">", id);
  for (int i = 0; i < kScaleStops; ++i) {
    out += fmt::format("<stop offset=\"{}\" stop-color=\"{}\"/>",
                       svg_num(double(i) / (kScaleStops - 1)), scale_stop(i));
  }
  out += "</linearGradient></defs>\n";
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#engram-scale-{})\" "
      "stroke=\"#999\" stroke-width=\"0.5\"/>\n",
      svg_num(x), svg_num(y), svg_num(kLegendBar), svg_num(h), id);
  const double vals[3] = {m.vmax, (double(m.vmin) + m.vmax) / 2, m.vmin};
  for (int k = 0; k < 3; ++k) {
    const double ty = y + h * k / 2;
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555\" stroke-width=\"1\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"#333\">{}</text>\n",
        svg_num(x + kLegendBar), svg_num(ty), svg_num(x + kLegendBar + 3), svg_num(ty),
        svg_num(x + kLegendBar + 5), svg_num(ty + kLegendFont * 0.35), svg_num(kLegendFont),
        xml_escape(legend_label(vals[k])));
  }
}

// One map, drawn in a group translated to (x0, 0); grid top at grid_top.
void draw_map(std::string& out, const Heatmap& m, const Layout& l, double x0, double grid_top) {
  out += fmt::format("<g transform=\"translate({},0)\">\n", svg_num(x0));
  if (!m.title.empty()) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" font-weight=\"bold\" "
        "fill=\"#222\">{}</text>\n",
        svg_num(l.title_cx), svg_num(kMargin + kTitleFont), svg_num(kTitleFont),
        xml_escape(m.title));
  }
  std::vector<bool> marked(m.cols, false);
  for (int c : m.marked_cols) marked[c] = true;
  const double f = l.label_font;
  // Column labels: centred above the column, or rotated -45° from the column's bottom centre.
  for (int c = 0; c < static_cast<int>(l.cols.size()); ++c) {
    if (l.cols[c].empty()) continue;
    const double cx = l.grid_x + (c + 0.5) * l.cell;
    const std::string style = marked[c] ? fmt::format(" font-weight=\"bold\" fill=\"{}\"", kMarkColour)
                                        : std::string(" fill=\"#222\"");
    if (l.rotate) {
      const double ax = cx + f * 0.3, ay = grid_top - 4;
      out += fmt::format(
          "<text x=\"{0}\" y=\"{1}\" font-size=\"{2}\" transform=\"rotate(-45 {0} {1})\"{3}>{4}</text>\n",
          svg_num(ax), svg_num(ay), svg_num(f), style, xml_escape(l.cols[c]));
    } else {
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\"{}>{}</text>\n",
          svg_num(cx), svg_num(grid_top - kLabelGap + 1), svg_num(f), style, xml_escape(l.cols[c]));
    }
  }
  for (int r = 0; r < static_cast<int>(l.rows.size()); ++r) {
    if (l.rows[r].empty()) continue;
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"end\" fill=\"#222\">{}</text>\n",
        svg_num(l.grid_x - kLabelGap), svg_num(grid_top + (r + 0.5) * l.cell + f * 0.35),
        svg_num(f), xml_escape(l.rows[r]));
  }
  // Cells (+ tooltip), then values on top.
  const bool print_values = m.show_values && l.cell >= kValueMinCell;
  const double value_font = std::min(11.0, l.cell * 0.34);
  const std::string stroke = l.cell >= 12 ? " stroke=\"#fff\" stroke-width=\"1\"" : "";
  const double range = double(m.vmax) - m.vmin;
  for (int r = 0; r < m.rows; ++r) {
    for (int c = 0; c < m.cols; ++c) {
      const float v = m.values[static_cast<size_t>(r) * m.cols + c];
      const double x = l.grid_x + c * l.cell, y = grid_top + r * l.cell;
      const bool masked = std::isnan(v);
      const double t = masked ? 0 : (v - m.vmin) / range;
      const std::string rl = l.rows.empty() ? fmt::format("row {}", r) : l.rows[r];
      const std::string cl = l.cols.empty() ? fmt::format("col {}", c) : l.cols[c];
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}><title>{} / {}: {}</title></rect>\n",
          svg_num(x), svg_num(y), svg_num(l.cell), svg_num(l.cell),
          masked ? std::string("#e6e6e6") : scale_colour(t), stroke, xml_escape(rl), xml_escape(cl),
          masked ? std::string("masked") : fmt::format("{:.4g}", v));
      if (print_values && !masked) {
        out += fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"{}\">{:.2f}</text>\n",
            svg_num(x + l.cell / 2), svg_num(y + l.cell / 2 + value_font * 0.35),
            svg_num(value_font), dark_text_ok(t) ? "#1a1a1a" : "#ffffff", v);
      }
    }
  }
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\" "
      "stroke-width=\"1\"/>\n",
      svg_num(l.grid_x - 0.5), svg_num(grid_top - 0.5), svg_num(l.grid_w + 1), svg_num(l.grid_h + 1));
  for (int c : m.marked_cols) {
    out += fmt::format(
        "<rect class=\"marked\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"2.5\"/>\n",
        svg_num(l.grid_x + c * l.cell + 1.25), svg_num(grid_top + 1.25), svg_num(l.cell - 2.5),
        svg_num(l.grid_h - 2.5), kMarkColour);
  }
  out += "</g>\n";
}

}  // namespace

std::string heatmap_svg(const std::vector<Heatmap>& maps) {
  ENGRAM_CHECK(!maps.empty(), "heatmap_svg: no heatmaps given");
  std::vector<Layout> layouts;
  bool shared_scale = true;
  double title_band = 0, header_band = 0, max_grid_h = 0;
  for (size_t i = 0; i < maps.size(); ++i) {
    validate(maps[i], i);
    layouts.push_back(layout(maps[i]));
    shared_scale = shared_scale && maps[i].vmin == maps[0].vmin && maps[i].vmax == maps[0].vmax;
    if (!maps[i].title.empty()) title_band = kTitleBand;
    header_band = std::max(header_band, layouts.back().header_h);
    max_grid_h = std::max(max_grid_h, layouts.back().grid_h);
  }
  const double grid_top = kMargin + title_band + header_band;
  const double legend_h = std::clamp(max_grid_h, 80.0, 240.0);
  const double content_h = std::max(max_grid_h, legend_h);

  std::string body;
  double x = kMargin;
  for (size_t i = 0; i < maps.size(); ++i) {
    draw_map(body, maps[i], layouts[i], x, grid_top);
    x += layouts[i].width;
    if (!shared_scale) {
      const double h = std::clamp(layouts[i].grid_h, 80.0, 240.0);
      draw_legend(body, maps[i], x + 12, grid_top, h, static_cast<int>(i));
      x += 12 + legend_width(maps[i]);
    }
    if (i + 1 < maps.size()) x += kMapGap;
  }
  if (shared_scale) {
    draw_legend(body, maps[0], x + 20, grid_top, legend_h, 0);
    x += 20 + legend_width(maps[0]);
  }
  const double width = std::ceil(x + kMargin);
  const double height = std::ceil(grid_top + content_h + kMargin);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"{2}\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      svg_num(width), svg_num(height), xml_escape(kFontStack));
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace engram::viz
