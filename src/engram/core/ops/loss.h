// Losses. Each returns a scalar [] Var and is differentiable in its float inputs (targets are
// constants). Dims: R rows (every axis but the last, flattened), C classes.
#pragma once

#include <cstdint>
#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

struct CrossEntropyOptions {
  float label_smoothing = 0.0f;  // eps in [0, 1): target = (1-eps) one-hot + eps/C uniform
  int32_t ignore_index = -1;     // rows whose target equals this contribute nothing (padding)
  bool mean = true;              // divide by the number of non-ignored rows (else sum); a batch
                                 // with every row ignored gives loss 0 and zero gradient
};
// Fused log-softmax + NLL: logits [R, C] (any leading dims), targets [R] in [0, C) or ignore_index
// (anything else is an engram::Error). Per row: lse - (1-eps) x_t - eps/C sum_c x_c.
// Backward: d logits = (softmax - smoothed target) * dL * (1/count or 1); only the per-row
// logsumexp [R] is kept, no [R, C] log-prob tensor.
Var cross_entropy(Var logits, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt = {});
// NLL from log-probabilities [R, C]: per row -(1-eps) lp_t - eps/C sum_c lp_c, mean (or sum) over
// non-ignored rows. Label smoothing reads every column, so it needs finite log-probs (a masked
// log_softmax has -inf entries): a non-finite smoothed row is an engram::Error.
Var nll(Var log_probs, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt = {});
// Binary cross-entropy with logits, mean over elements: max(x,0) - x t + log(1 + e^-|x|) (stable
// for any |x|). targets: same numel as logits, each in [0, 1]; read during the call, copied.
Var bce_with_logits(Var logits, const float* targets);
// Mean squared error mean((x - target)^2) against a constant target of the same numel (copied).
Var mse(Var x, const float* target);

}  // namespace engram::core
