// Fused recurrent cell steps and their composed references (built from other ops), which the
// tests prove equal in value and gradient. Dims: B batch, H hidden, G = 4H (LSTM) or 3H (GRU).
// The input projection x W_ih^T + b_ih of a whole sequence is computed by one affine beforehand;
// a step takes that row block `xw` [B, G] and does the recurrent GEMM itself.
// Gate order (as in PyTorch, so weights map one to one): LSTM i, f, g, o; GRU r, z, n.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

struct LstmState {
  Var h;  // [B, H]
  Var c;  // [B, H]
};

// LSTM: gates = xw + h W_hh^T + b_hh; i,f,o = sigmoid; g = tanh; c' = f c + i g; h' = o tanh(c')
// xw [B, 4H], h, c [B, H], w_hh [4H, H], b_hh [4H] (or invalid Var).
LstmState lstm_cell(Var xw, Var h, Var c, Var w_hh, Var b_hh);
LstmState lstm_cell_composed(Var xw, Var h, Var c, Var w_hh, Var b_hh);

// GRU (PyTorch form): hw = h W_hh^T + b_hh; r = sig(xw_r + hw_r); z = sig(xw_z + hw_z);
// n = tanh(xw_n + r * hw_n); h' = (1 - z) n + z h.   xw [B, 3H], w_hh [3H, H], b_hh [3H].
Var gru_cell(Var xw, Var h, Var w_hh, Var b_hh);
Var gru_cell_composed(Var xw, Var h, Var w_hh, Var b_hh);

}  // namespace engram::core
