// NTM memory access (Graves et al. 2014, section 3): a head's addressing chain (content ->
// interpolation -> circular shift -> sharpening), the weighted read and the erase/add write. Each
// comes fused (one tape node, core/ops/ntm_ops.h) and composed from generic ops (the reference
// the fused ops are tested against); `fused` picks one. All differentiable.
// Dims: B batch, N memory slots, M slot width, S shift-kernel size (2 * shift_range + 1),
// P = M + S + 3 raw head parameters.
#pragma once

#include "engram/core/graph.h"

namespace engram::nn {

using core::Var;

// Width of a head's raw addressing parameters [key (M) | beta^ | g^ | s^ (S) | gamma^].
struct HeadLayout {
  int memory_width = 20;  // M
  int shift_range = 1;    // shifts -r .. r
  int shift_size() const { return 2 * shift_range + 1; }      // S
  int size() const { return memory_width + shift_size() + 3; }  // P
};

// memory [B, N, M], head [B, P] raw parameters, w_prev [B, N] -> w [B, N] (rows sum to 1):
// beta = softplus, g = sigmoid, s = softmax, gamma = 1 + softplus of the raw values;
// w = sharpen(circular_conv(g softmax(beta cos(M, key)) + (1 - g) w_prev, s), gamma).
Var address(Var memory, Var head, Var w_prev, bool fused = true);
Var address_composed(Var memory, Var head, Var w_prev);

// r = sum_i w_i M_i: w [B, N], memory [B, N, M] -> [B, M].
Var read(Var w, Var memory, bool fused = true);
Var read_composed(Var w, Var memory);

// M o (1 - w e^T) + w a^T: memory [B, N, M], w [B, N], erase, add [B, M] (either may be Var{}).
Var write(Var memory, Var w, Var erase, Var add, bool fused = true);
Var write_composed(Var memory, Var w, Var erase, Var add);

}  // namespace engram::nn
