// Ops for content- and location-based addressing (NTM, memory networks). All differentiable in
// every Var argument.
// Dims: B batch, N memory slots, M slot width, S shift-kernel size (odd, centred on shift 0).
#pragma once

#include "engram/core/graph.h"

namespace engram::core {

// Cosine similarity along the last axis: a [..., M], b [..., M] -> out = a.b / (na nb) with
// na = max(|a|, eps), nb = max(|b|, eps) (as PyTorch). The last dims must be equal; the leading
// dims (shape minus the last axis) broadcast by numpy rules, aligned at the right, and form the
// output shape. Examples: a [B, N, M], b [B, N, M] -> [B, N]; a [B, N, M], b [B, 1, M] -> [B, N];
// a [N, M], b [M] -> [N]; a [M], b [M] -> scalar []. A zero vector gives similarity 0 and a finite
// gradient (b / (eps nb) for a = 0). Row norms [rows of a] + [rows of b] are kept for backward.
Var cosine_similarity(Var a, Var b, float eps = 1e-8f);
// Memory rows vs one key per batch: memory [B, N, M], key [B, M] -> [B, N]
// (= cosine_similarity(memory, key viewed as [B, 1, M]), without the reshape).
Var cosine_rows(Var memory, Var key, float eps = 1e-8f);
// Circular convolution of a weighting with a shift kernel: w [B, N], s [B, S], S odd ->
//   out[b, i] = sum_j w[b, (i - (j - S/2)) mod N] s[b, j]
// i.e. kernel entry j shifts by j - S/2 slots with wrap-around: s one-hot at j = S/2 + 1 (shift +1)
// moves weight from slot i to slot i + 1 (and from N-1 to 0). Any equal leading dims work in
// place of [B]; S may exceed N (shifts wrap).
Var circular_conv(Var w, Var s);
// L2 normalisation along the last axis: x / max(||x||, eps). [..., D] -> [..., D].
Var l2_normalize(Var x, float eps = 1e-12f);
// Sharpening along the last axis: (w + eps)^gamma / sum (w + eps)^gamma, computed stably as
// softmax(gamma log(w + eps)). w [B, N] >= 0 (a negative or NaN weight is an engram::Error);
// gamma [B, 1] or [B] (one per row of w; the NTM uses gamma >= 1, any finite value works).
Var sharpen(Var w, Var gamma, float eps = 1e-12f);

}  // namespace engram::core
