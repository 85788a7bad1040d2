// Softmax and log-softmax along the last axis, with an optional mask.
// mask: same numel as x (or [R] rows x last-dim broadcast is NOT supported: give the full shape),
// 1 = keep, 0 = masked out (weight exactly 0, excluded from the normaliser). A row with every
// position masked yields all zeros (softmax) and is an error for log_softmax.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

Var softmax(Var x);                    // [..., C] -> [..., C]
Var softmax(Var x, const float* mask); // mask [..., C] of 0/1, copied into the arena
Var log_softmax(Var x);
Var log_softmax(Var x, const float* mask);

}  // namespace engram::core
