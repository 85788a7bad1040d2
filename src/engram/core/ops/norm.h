// Normalisation and regularisation ops. Dims: R rows (leading axes flattened), D normalised width.
#pragma once

#include "engram/core/graph.h"
#include "engram/core/rng.h"

namespace engram::core {

// Layer norm over the last axis: (x - mean) / sqrt(var + eps) * gain + bias, with the biased
// variance. x [..., D], gain [D], bias [D] -> [..., D]; gain and/or bias may be an empty Var{}
// (no scale / no shift). eps > 0. Differentiable in x, gain and bias; keeps mean and 1/std [R].
Var layer_norm(Var x, Var gain, Var bias, float eps = 1e-5f);
// Inverted dropout: zero each element with probability p in [0, 1), scale kept ones by 1/(1-p);
// the mask is drawn from `rng` (one uniform per element, row-major). Returns x itself (drawing
// nothing) when p == 0. Whether the model is training is the caller's decision (pass p = 0 or
// skip the call at inference); a grad-disabled graph still applies the mask. Differentiable in x.
Var dropout(Var x, float p, Rng& rng);

}  // namespace engram::core
