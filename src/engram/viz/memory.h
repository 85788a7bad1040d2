// Sequences over time as heatmaps, the way the Neural Turing Machine paper shows a run: inputs,
// outputs, write weighting and read weighting side by side, each with time on the x axis (one
// column per step) and features / memory slots on the y axis. A thin layer over heatmap_svg.
// Dims: T time steps, D values per step (input bits, output bits, or N memory slots).
#pragma once

#include <string>
#include <vector>

#include "engram/viz/heatmap.h"

namespace engram::viz {

struct TimePanel {
  std::string title;          // e.g. "inputs", "write weighting"
  std::vector<float> values;  // [T, D] time-major, one row per step as a model emits it
  int steps = 0;              // T
  int dim = 0;                // D
  float vmin = 0.0f, vmax = 1.0f;
};

// The panel as a heatmap: [D, T] (transposed), columns labelled with the step number and rows
// with the feature / slot index, both thinned out (every 2nd, 5th, 10th, ...) so labels never
// overlap at this cell size. No values printed.
Heatmap time_heatmap(const TimePanel& panel, int cell_px);

// All panels side by side with one cell size chosen for the largest (cell_px = 0: automatic,
// 4..20 px). Throws engram::Error when values.size() != steps * dim.
std::string memory_svg(const std::vector<TimePanel>& panels, int cell_px = 0);

}  // namespace engram::viz
