// Linear: parameters, initialisation and the affine forward.
// Dims: K input width, N output width.
#include "engram/nn/linear.h"

#include <cmath>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

Linear::Linear(ParamStore& store, std::string path, const LinearConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), in_dim_(cfg.in_dim), out_dim_(cfg.out_dim), tied_(false) {
  ENGRAM_CHECK(cfg.in_dim > 0 && cfg.out_dim > 0, "linear '{}': in_dim {} and out_dim {} must be positive",
               this->path(), cfg.in_dim, cfg.out_dim);
  weight_ = add_param("weight", {out_dim_, in_dim_});
  if (cfg.bias) bias_ = add_param("bias", {out_dim_});
  switch (cfg.init) {
    case LinearInit::kGlorot:
      init::glorot_uniform(store, weight_, rng);
      break;  // bias stays 0
    case LinearInit::kPyTorch: {
      const float a = 1.0f / std::sqrt(static_cast<float>(in_dim_));
      init::uniform(store, weight_, rng, -a, a);
      if (bias_) init::uniform(store, *bias_, rng, -a, a);
      break;
    }
  }
}

Linear::Linear(ParamStore& store, std::string path, ParamId weight, bool bias)
    : Module(store, std::move(path)), weight_(weight), tied_(true) {
  ENGRAM_CHECK(weight >= 0 && weight < store.count(), "linear '{}': tied weight id {} not in the store", this->path(),
               weight);
  const Shape& s = store.shape(weight);
  ENGRAM_CHECK(s.rank() == 2, "linear '{}': tied weight '{}' is {}, expected [N, K]", this->path(), store.name(weight),
               s);
  out_dim_ = s[0];
  in_dim_ = s[1];
  if (bias) bias_ = add_param("bias", {out_dim_});
}

Var Linear::forward(Graph& g, Var x) const {
  ENGRAM_CHECK(x.shape().rank() >= 1 && x.shape().last() == in_dim_, "linear '{}': input {} does not end in K={}",
               path(), x.shape(), in_dim_);
  Var w = param(g, weight_);                     // [N, K]
  Var b = bias_ ? param(g, *bias_) : Var{};      // [N]
  return core::affine(x, w, b);                  // [..., N]
}

}  // namespace engram::nn
