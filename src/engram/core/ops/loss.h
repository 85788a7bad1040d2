// Losses. Each returns a scalar [] Var and is differentiable in its float inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

struct CrossEntropyOptions {
  float label_smoothing = 0.0f;  // eps: target distribution (1-eps) one-hot + eps/C uniform
  int32_t ignore_index = -1;     // targets equal to this are masked out (padding)
  bool mean = true;              // divide by the number of non-ignored targets (else sum)
};
// Fused log-softmax + NLL: logits [R, C] (any leading dims), targets [R].
// Backward: d logits = (softmax - smoothed target) * dL per row; no [R, C] log-prob tensor kept.
Var cross_entropy(Var logits, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt = {});
// NLL from log-probabilities [R, C]: mean (or sum) of -logp[r, t_r] over non-ignored rows.
Var nll(Var log_probs, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt = {});
// Binary cross-entropy with logits, mean over elements: targets same numel as logits, in [0, 1].
Var bce_with_logits(Var logits, const float* targets);
// Mean squared error against a constant target of the same numel.
Var mse(Var x, const float* target);

}  // namespace engram::core
