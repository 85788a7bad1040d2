// Shape ops: reshape (a view), transpose / permute (copies), concat, split, slice. Differentiable.
// Views share their input's data (never write into a Var's value); each still has its own grad.
#pragma once

#include <initializer_list>
#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

Var reshape(Var x, Shape shape);  // same numel; shares x's data (no copy)
Var transpose(Var x, int axis0 = -2, int axis1 = -1);  // swap two axes (copy)
Var permute(Var x, std::initializer_list<int> order);  // out dim i = x dim order[i]
Var concat(const std::vector<Var>& xs, int axis);       // equal shapes except along axis
// Consecutive slices of the given sizes (each >= 0, summing to dim(axis)).
std::vector<Var> split(Var x, const std::vector<int>& sizes, int axis);
// [begin, end) along axis, 0 <= begin <= end <= dim(axis); a view when every dim before axis is 1.
Var slice(Var x, int axis, int begin, int end);

}  // namespace engram::core
