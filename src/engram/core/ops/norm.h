// Normalisation and regularisation ops.
#pragma once

#include "engram/core/graph.h"
#include "engram/core/rng.h"

namespace engram::core {

// Layer norm over the last axis: (x - mean) / sqrt(var + eps) * gain + bias; gain, bias [D].
Var layer_norm(Var x, Var gain, Var bias, float eps = 1e-5f);
// Inverted dropout: zero each element with probability p, scale kept ones by 1/(1-p).
// Identity when p == 0 or the graph is in inference mode. Mask drawn from `rng`.
Var dropout(Var x, float p, Rng& rng);

}  // namespace engram::core
