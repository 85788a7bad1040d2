// Time-sequence panels (see memory.h): transpose [T, D] to [D, T] and label sparsely.
// Dims: T time steps, D values per step.
#include "engram/viz/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engram/core/error.h"
#include "engram/viz/svg.h"

namespace engram::viz {

namespace {

// Smallest of 1, 2, 5, 10, 20, 50, ... with k * cell >= need.
int label_stride(double cell, double need) {
  for (int base = 1;; base *= 10) {
    for (int m : {1, 2, 5}) {
      if (base * m * cell >= need) return base * m;
    }
    if (base > 100000000) return base;
  }
}

}  // namespace

Heatmap time_heatmap(const TimePanel& p, int cell_px) {
  ENGRAM_CHECK(p.steps > 0 && p.dim > 0, "time panel '{}': needs steps > 0 and dim > 0, got {} x {}",
               p.title, p.steps, p.dim);
  ENGRAM_CHECK(p.values.size() == static_cast<size_t>(p.steps) * p.dim,
               "time panel '{}': {} values for {} steps x {} dims", p.title, p.values.size(),
               p.steps, p.dim);
  Heatmap m;
  m.title = p.title;
  m.rows = p.dim;
  m.cols = p.steps;
  m.vmin = p.vmin;
  m.vmax = p.vmax;
  m.show_values = false;
  m.cell_px = cell_px;
  m.values.resize(p.values.size());
  for (int t = 0; t < p.steps; ++t) {
    for (int d = 0; d < p.dim; ++d) m.values[static_cast<size_t>(d) * p.steps + t] = p.values[static_cast<size_t>(t) * p.dim + d];
  }
  // Label font never exceeds 12 px, so these strides are safe for any cell size.
  const double font = 12;
  const int t_stride = label_stride(cell_px, text_width(std::to_string(p.steps - 1), font) + 6);
  const int d_stride = label_stride(cell_px, font + 2);
  m.col_labels.resize(p.steps);
  m.row_labels.resize(p.dim);
  for (int t = 0; t < p.steps; t += t_stride) m.col_labels[t] = std::to_string(t);
  for (int d = 0; d < p.dim; d += d_stride) m.row_labels[d] = std::to_string(d);
  return m;
}

std::string memory_svg(const std::vector<TimePanel>& panels, int cell_px) {
  ENGRAM_CHECK(!panels.empty(), "memory_svg: no panels given");
  if (cell_px <= 0) {
    int largest = 1;
    for (const auto& p : panels) largest = std::max({largest, p.steps, p.dim});
    cell_px = static_cast<int>(std::clamp(std::floor(400.0 / largest), 4.0, 20.0));
  }
  std::vector<Heatmap> maps;
  for (const auto& p : panels) maps.push_back(time_heatmap(p, cell_px));
  return heatmap_svg(maps);
}

}  // namespace engram::viz
