// Ops for content- and location-based addressing (NTM, memory networks).
// Dims: B batch, N memory slots, M slot width, S shift-kernel size (odd, centred on 0).
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

// Cosine similarity along the last axis with broadcasting of the rows:
// a [..., M], b [..., M] (same shape, or b [.., 1, M]-style broadcast against a [.., N, M]) ->
// [...] = a.b / (max(|a| |b|, eps)). Zero vectors give 0 similarity, finite gradients.
Var cosine_similarity(Var a, Var b, float eps = 1e-8f);
// Memory rows vs one key per batch: memory [B, N, M], key [B, M] -> [B, N].
Var cosine_rows(Var memory, Var key, float eps = 1e-8f);
// Circular convolution of a weighting with a shift kernel: w [B, N], s [B, S] ->
// out[b, i] = sum_j w[b, (i - (j - S/2)) mod N] s[b, j]   (shift by j - S/2 slots)
Var circular_conv(Var w, Var s);
// L2 normalisation along the last axis: x / max(||x||, eps).
Var l2_normalize(Var x, float eps = 1e-12f);
// Sharpening: w^gamma / sum w^gamma along the last axis; w [B, N] > 0, gamma [B, 1] >= 1.
Var sharpen(Var w, Var gamma, float eps = 1e-12f);

}  // namespace engram::core
