// Linear: y = x Wᵀ + b over the last axis, weight in PyTorch's [N, K] layout so checkpoints map
// one to one. A Linear can also be built over an existing weight (explicit weight tying, e.g. an
// output projection sharing an Embedding's [V, D] table).
// Dims: K input width, N output width, V vocab, D embedding dim.
#pragma once

#include <optional>
#include <string>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

enum class LinearInit {
  kGlorot,   // weight U(±sqrt(6 / (K + N))), bias 0
  kPyTorch,  // weight and bias U(±1 / sqrt(K)), as torch.nn.Linear
};

struct LinearConfig {
  int in_dim = 0;   // K
  int out_dim = 0;  // N
  bool bias = true;
  LinearInit init = LinearInit::kGlorot;
};

class Linear : public Module {
 public:
  // Adds `<path>/weight` [N, K] and (if cfg.bias) `<path>/bias` [N], initialised from `rng`.
  Linear(ParamStore& store, std::string path, const LinearConfig& cfg, core::Rng& rng);
  // Tied: reuses the existing parameter `weight` [N, K] (no new weight is added; gradients of all
  // its users accumulate in the one ParamStore buffer). Adds `<path>/bias` [N] (zeros) if `bias`.
  Linear(ParamStore& store, std::string path, ParamId weight, bool bias);

  // x [..., K] -> [..., N] = x Wᵀ + b. Differentiable in x, weight and bias.
  Var forward(Graph& g, Var x) const;

  ParamId weight() const { return weight_; }
  std::optional<ParamId> bias() const { return bias_; }
  int in_dim() const { return in_dim_; }
  int out_dim() const { return out_dim_; }
  bool tied() const { return tied_; }

 private:
  ParamId weight_;               // [N, K]
  std::optional<ParamId> bias_;  // [N]
  int in_dim_;                   // K
  int out_dim_;                  // N
  bool tied_;
};

}  // namespace engram::nn
