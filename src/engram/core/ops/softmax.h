// Softmax and log-softmax along the last axis, with an optional mask (the fused masked softmax of
// attention). Dims: R rows (every axis but the last, flattened), C classes / positions.
// mask: same numel as x ([..., C]; no broadcasting), 0 = masked out, anything else = keep. Masked
// positions get probability exactly 0 (log-probability -inf) and are excluded from the normaliser.
// The mask is read during the call only (backward recovers it from the output), so a mask in the
// caller's storage or the arena can be reused for every decoder step without a copy.
// A row with every position masked (or every kept logit -inf) yields all zeros for softmax (and
// zero gradient); for log_softmax it is an engram::Error.
// All four are differentiable in x; masked positions get dx = 0.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

Var softmax(Var x);                         // [..., C] -> [..., C], rows sum to 1
Var softmax(Var x, const float* mask);      // mask [..., C]; masked -> 0, all-masked row -> zeros
Var log_softmax(Var x);                     // [..., C] -> [..., C], x - logsumexp(x)
Var log_softmax(Var x, const float* mask);  // masked -> -inf; all-masked row -> engram::Error

}  // namespace engram::core
