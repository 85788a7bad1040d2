// Dropout module: argument checks and the training switch around core::dropout.
#include "engram/nn/dropout.h"

#include "engram/core/ops.h"

namespace engram::nn {

Dropout::Dropout(float p) : p_(p) { ENGRAM_CHECK(p >= 0.0f && p < 1.0f, "dropout probability {} outside [0, 1)", p); }

Var Dropout::forward(Graph& g, Var x, core::Rng& rng, bool training) const {
  ENGRAM_CHECK(x.g == &g, "dropout: input belongs to another graph");
  if (!training || p_ == 0.0f) return x;
  return core::dropout(x, p_, rng);  // same shape as x
}

}  // namespace engram::nn
