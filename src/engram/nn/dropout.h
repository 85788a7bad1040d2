// Dropout: inverted dropout over core::dropout with an explicit training flag and a caller-owned
// Rng (no hidden state, so graphs in several threads stay independent and runs reproducible).
// Shapes: any; out has the shape of x.
#pragma once

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

class Dropout {
 public:
  // p in [0, 1): probability of zeroing an element.
  explicit Dropout(float p);

  // training: zero each element with probability p (mask drawn from `rng`), scale the kept ones by
  // 1/(1-p). Not training (or p == 0): returns x itself, drawing nothing. Differentiable in x.
  Var forward(Graph& g, Var x, core::Rng& rng, bool training) const;

  float p() const { return p_; }

 private:
  float p_;
};

}  // namespace engram::nn
