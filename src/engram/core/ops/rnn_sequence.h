// Fused whole-sequence recurrences: one tape node runs every step of one layer and direction.
// Same maths as unrolling lstm_cell / gru_cell (ops/rnn_cell.h) with length masking, but the
// backward computes dW_hh with ONE GEMM over all T*B rows (instead of T small ones) and the input
// gradient lands in one [T, B, G] block. Tests prove it equals the unrolled cells in value and
// gradient. Dims: T time, B batch, H hidden, G gates (4H LSTM, 3H GRU).
//
// Masking by lengths (B values in [0, T], empty = all T): at a step t >= length[b], sequence b's
// state is carried unchanged and its output is 0. With reverse = true the steps run t = T-1..0, so
// each sequence's reverse pass starts at its own last real step.
#pragma once

#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

struct RnnSequence {
  Var out;  // [T, B, H] h_t at each step t (0 at padded steps)
  Var h;    // [B, H] final h (after the last real step of each sequence)
  Var c;    // [B, H] final c (LSTM); invalid for GRU
};

// xw [T, B, 4H] (input projections incl. b_ih), h0, c0 [B, H], w_hh [4H, H], b_hh [4H] or invalid.
RnnSequence lstm_sequence(Var xw, Var h0, Var c0, Var w_hh, Var b_hh, const std::vector<int>& lengths = {},
                          bool reverse = false);
// xw [T, B, 3H], h0 [B, H], w_hh [3H, H], b_hh [3H] or invalid.
RnnSequence gru_sequence(Var xw, Var h0, Var w_hh, Var b_hh, const std::vector<int>& lengths = {},
                         bool reverse = false);

}  // namespace engram::core
