// Per-row LSTM / GRU gate kernels on raw pointers, shared by the fused cell step
// (ops/rnn_cell.cc) and the fused whole-sequence recurrence (ops/rnn_sequence.cc).
// Dims: H hidden; gate order as PyTorch (LSTM i, f, g, o; GRU r, z, n).
#pragma once

namespace engram::core::kernels {

// LSTM forward of one row. a [4H]: in = pre-activations (xw + h W_hh^T + b), out = activated
// gates i, f, g, o; c_prev [H]; writes c' = f c + i g, tc = tanh(c'), h' = o tc.
void lstm_forward_row(float* a, const float* c_prev, float* h_out, float* c_out, float* tc, int hid);

// LSTM backward of one row, from the activated gates `a` [4H], tc [H], c_prev [H] and the
// incoming dh [H], dc [H] (gradients of h', c'): writes the pre-activation gradient da [4H] and
// ADDS dc_prev [H] += dc_total f (dc_prev may be null).
void lstm_backward_row(const float* a, const float* tc, const float* c_prev, const float* dh, const float* dc,
                       float* da, float* dc_prev, int hid);

// GRU forward of one row. s [3H]: in = (xw_r + hw_r + b_r, xw_z + hw_z + b_z, hw_n + b_hn),
// out = (r, z, hn) with r, z activated and hn kept; x_n [H] = xw_n (incl. b_in);
// writes n = tanh(x_n + r hn) [H] and h' = (1 - z) n + z h_prev.
void gru_forward_row(float* s, const float* x_n, const float* h_prev, float* n, float* h_out, int hid);

// GRU backward of one row from saved s = (r, z, hn), n, h_prev and dy = dL/dh':
// dgh [3H] = gradient of the hidden-side pre-activations (r, z, hn) — for dW_hh, db_hh, dh W_hh;
// dgx [3H] = gradient of the input-side pre-activations (xw_r, xw_z, xw_n);
// ADDS dh_prev [H] += dy z (the direct path; the W_hh path is the caller's GEMM). dh_prev may be null.
void gru_backward_row(const float* s, const float* n, const float* h_prev, const float* dy, float* dgh, float* dgx,
                      float* dh_prev, int hid);

}  // namespace engram::core::kernels
