// Fused score of additive (Bahdanau / "concat") attention.
// Dims: B batch rows, S source positions, A attention width.
#pragma once

#include <cstdint>

#include "engram/core/graph.h"

namespace engram::core {

// keys [B, S, A], query [B, A], v [1, A] (or [A]) ->
//   out[b, s] = sum_a v[a] tanh(keys[b, s, a] + query[b, a])                       [B, S]
// The composed form affine(tanh(add(keys, reshape(query, {B, 1, A}))), v) in one pass over
// [B, S, A] instead of five (and no k = 1 products in backward); it matches the composed form in
// value and gradient (tests/core/attention_score_test.cc). Rows b run over the thread team; the
// tanh values are kept for backward. With key_rows, row b of the query scores the keys of row
// key_rows[b] of keys [Bk, S, A] (beams that share their source's memory), plus `extra` [B, S, A]
// where given (per-row key terms, e.g. coverage features: tanh((keys[key_rows[b], s] + extra[b, s])
// + query[b])); then no gradient flows (decoding only).
Var additive_score(Var keys, Var query, Var v, const int32_t* key_rows = nullptr, Var extra = {});

}  // namespace engram::core
