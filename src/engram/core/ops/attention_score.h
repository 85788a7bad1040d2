// Fused score of additive (Bahdanau / "concat") attention.
// Dims: B batch rows, S source positions, A attention width.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

// keys [B, S, A], query [B, A], v [1, A] (or [A]) ->
//   out[b, s] = sum_a v[a] tanh(keys[b, s, a] + query[b, a])                       [B, S]
// The composed form affine(tanh(add(keys, reshape(query, {B, 1, A}))), v) in one pass over
// [B, S, A] instead of five (and no k = 1 products in backward); it matches the composed form in
// value and gradient (tests/core/attention_score_test.cc). Rows b run over the thread team; the
// tanh values are kept for backward.
Var additive_score(Var keys, Var query, Var v);

}  // namespace engram::core
