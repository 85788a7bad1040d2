// Fused Neural Turing Machine ops (Graves et al. 2014): one head's whole addressing chain, the
// weighted read and the erase/add write, each one tape node instead of 10-20 small ones. Each has
// a composed reference built from the generic ops in nn/memory/addressing.cc; the tests prove
// them equal in value and gradient. All differentiable in every Var argument.
// Dims: B batch, N memory slots, M slot width, S shift-kernel size (odd, centred on shift 0),
// P = M + S + 3 raw head parameters.
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

// Epsilons shared with the composed reference (cosine_rows, sharpen).
constexpr float kNtmCosineEps = 1e-8f;
constexpr float kNtmSharpenEps = 1e-12f;

// One head's weighting from its raw (pre-activation) parameters, laid out per row as
//   head [B, P] = [ key (M) | beta^ | g^ | s^ (S) | gamma^ ]
// with beta = softplus(beta^), g = sigmoid(g^), s = softmax(s^), gamma = 1 + softplus(gamma^):
//   wc = softmax(beta cos(memory_i, key))              content weighting      [B, N]
//   wg = g wc + (1 - g) w_prev                          interpolation          [B, N]
//   ws = circular_conv(wg, s)                           shift by -S/2 .. S/2   [B, N]
//   w  = (ws + eps)^gamma / sum_i (ws_i + eps)^gamma    sharpening             [B, N]
// memory [B, N, M], head [B, P] with P - M - 3 >= 1 odd, w_prev [B, N] (rows >= 0) -> w [B, N].
// A zero key or memory row has similarity 0 (as cosine_rows). Keeps wc, wg, ws, the
// similarities and the norms ([B, 4N + 1] floats) for backward.
Var ntm_address(Var memory, Var head, Var w_prev);

// Weighted read r_b = sum_i w[b, i] memory[b, i, :]:  w [B, N], memory [B, N, M] -> [B, M].
Var memory_read(Var w, Var memory);

// Erase/add write M' = M o (1 - w e^T) + w a^T, per batch row:
// memory [B, N, M], w [B, N], erase [B, M] (in [0, 1]) and add [B, M] -> [B, N, M].
// erase or add may be an empty Var{} (erase-only / add-only), so several write heads compose as
// the paper's "all erases, then all adds": M o prod_h (1 - w_h e_h^T) + sum_h w_h a_h^T.
Var memory_write(Var memory, Var w, Var erase, Var add);

}  // namespace engram::core
