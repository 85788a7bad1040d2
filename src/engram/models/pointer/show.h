// `engram pointer show`: one instance drawn as SVG — the points with the predicted tour / hull /
// order beside the optimal one, and the pointer's attention (output steps × input points) as a
// heatmap (viz/heatmap.h) below them.
//   hull, TSP: points in the unit square (y up), the polygon or closed tour through them, city 1
//              (index 0) marked; sorting: each value at (value, output rank), joined in output order
//              (a correct sort climbs monotonically).
// Dims: n points, R output steps.
#pragma once

#include <cstdint>
#include <string>

#include "engram/models/pointer/eval.h"

namespace engram::models {

// The picture of `instance` (its target is the reference) and its prediction (with attention).
// `what` names the decoding ("greedy", "beam 5") in the predicted panel's title.
std::string pointer_svg(PointerTask task, const data::tasks::PointerInstance& instance,
                        const PointerPrediction& prediction, const std::string& what);

struct PointerShow {
  data::tasks::PointerInstance instance;  // target: the optimal (Held-Karp up to n = 20) / exact label
  PointerPrediction prediction;
  std::string svg;
  std::string summary;  // one line: the instance, the result, the reference
};
// Instance `seed` of n points (the eval test stream's generator), decoded with `beam` over `views`
// readings (PointerDecodeOptions::views; the kept one's attention in the instance's order), drawn.
PointerShow show_pointer(const PointerNet& model, int n, uint64_t seed, int beam, int views = 1);

}  // namespace engram::models
