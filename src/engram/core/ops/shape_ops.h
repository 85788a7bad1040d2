// Shape ops: reshape (a view), transpose / permute (copies), concat, split, slice. Differentiable.
#pragma once

#include <initializer_list>
#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

Var reshape(Var x, Shape shape);  // same numel; shares x's data (no copy)
Var transpose(Var x, int axis0 = -2, int axis1 = -1);  // swap two axes (copy)
Var permute(Var x, std::initializer_list<int> order);  // out dim i = x dim order[i]
Var concat(const std::vector<Var>& xs, int axis);       // equal shapes except along axis
std::vector<Var> split(Var x, const std::vector<int>& sizes, int axis);  // sizes sum to dim(axis)
Var slice(Var x, int axis, int begin, int end);          // [begin, end) along axis

}  // namespace engram::core
