// LayerNorm over the last axis: (x - mean) / sqrt(var + eps) * gain + bias, via core::layer_norm.
// Parameters `<path>/gain` [D] (init 1) and `<path>/bias` [D] (init 0).
// Dims: D normalised width.
#pragma once

#include <string>

#include "engram/nn/param_store.h"

namespace engram::nn {

struct LayerNormConfig {
  int dim = 0;        // D
  float eps = 1e-5f;  // added to the variance
};

class LayerNorm : public Module {
 public:
  LayerNorm(ParamStore& store, std::string path, const LayerNormConfig& cfg);

  // x [..., D] -> [..., D]. Differentiable in x, gain and bias.
  Var forward(Graph& g, Var x) const;

  ParamId gain() const { return gain_; }  // [D]
  ParamId bias() const { return bias_; }  // [D]
  int dim() const { return cfg_.dim; }

 private:
  LayerNormConfig cfg_;
  ParamId gain_;  // [D]
  ParamId bias_;  // [D]
};

}  // namespace engram::nn
