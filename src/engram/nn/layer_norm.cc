// LayerNorm module: parameters (gain 1, bias 0) and the call to core::layer_norm.
// Dims: D normalised width.
#include "engram/nn/layer_norm.h"

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

LayerNorm::LayerNorm(ParamStore& store, std::string path, const LayerNormConfig& cfg)
    : Module(store, std::move(path)), cfg_(cfg) {
  ENGRAM_CHECK(cfg.dim > 0 && cfg.eps > 0.0f, "layer norm '{}': dim {} and eps {} must be positive", this->path(),
               cfg.dim, cfg.eps);
  gain_ = add_param("gain", {cfg.dim});
  bias_ = add_param("bias", {cfg.dim});
  init::constant(store, gain_, 1.0f);
  init::constant(store, bias_, 0.0f);
}

Var LayerNorm::forward(Graph& g, Var x) const {
  ENGRAM_CHECK(x.shape().rank() >= 1 && x.shape().last() == cfg_.dim, "layer norm '{}': input {} does not end in D={}",
               path(), x.shape(), cfg_.dim);
  return core::layer_norm(x, param(g, gain_), param(g, bias_), cfg_.eps);  // [..., D]
}

}  // namespace engram::nn
