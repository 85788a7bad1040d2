// Heatmaps as standalone SVG: attention weights (target tokens as rows, source tokens as
// columns), memory attention per hop, NTM read/write weightings over time. Values are drawn as
// shading on a single-hue scale (white -> dark blue) and, when the cells are big enough (>= 24
// px), printed in the cell with 2 decimals (white text on dark cells). Text is UTF-8 and rendered
// with a CJK-capable font stack, so "欢迎 来 北京" shows as written; labels are XML-escaped.
// Dims: R rows, C columns.
#pragma once

#include <string>
#include <vector>

namespace engram::viz {

struct Heatmap {
  std::string title;                     // drawn above the grid (may be empty)
  std::vector<std::string> row_labels;   // R labels (left), or empty for none
  std::vector<std::string> col_labels;   // C labels (top, rotated 45° if wider than a cell), or empty
  std::vector<float> values;             // [R, C] row-major, typically in [0, 1]; NaN = masked (grey)
  int rows = 0, cols = 0;
  bool show_values = true;               // print the value in each cell (2 decimals) if cells >= 24 px
  std::vector<int> marked_cols = {};     // columns to outline (e.g. true supporting facts)
  float vmin = 0.0f, vmax = 1.0f;        // colour scale; values outside are clamped
  int cell_px = 0;                       // cell size in px; 0 = automatic (8..44, from max(R, C))
};

// One SVG document with the heatmap(s) side by side (left to right, grids top-aligned); each may
// have its own size. The colour legend is drawn once at the right when all maps share vmin/vmax,
// else one legend right of each map. Throws engram::Error on inconsistent sizes (values vs
// rows*cols, label counts, marked columns out of range, vmax <= vmin) naming the map.
std::string heatmap_svg(const std::vector<Heatmap>& maps);
inline std::string heatmap_svg(const Heatmap& map) { return heatmap_svg(std::vector<Heatmap>{map}); }

}  // namespace engram::viz
