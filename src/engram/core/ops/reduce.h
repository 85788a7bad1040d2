// Reductions along one axis (negative axes count from the end) and over everything.
// Differentiable. The reduced axis is removed from the shape unless keepdim (then it is 1).
// mean and max over an empty axis are errors; sum over one gives zeros.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

Var sum(Var x, int axis, bool keepdim = false);
Var mean(Var x, int axis, bool keepdim = false);
Var max(Var x, int axis, bool keepdim = false);  // gradient flows to the first arg-max
Var sum_all(Var x);   // -> scalar []
Var mean_all(Var x);  // -> scalar []

}  // namespace engram::core
