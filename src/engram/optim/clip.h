// Gradient clipping over a ParamStore's flat gradient buffer (or any raw float buffer):
// global-norm rescaling (as torch.nn.utils.clip_grad_norm_) and element-wise clip-by-value.
#pragma once

#include <cstdint>

#include "engram/nn/param_store.h"

namespace engram::optim {

// L2 norm sqrt(Σ g²) of n values (partial sums in float lanes, combined in double).
double global_norm(const float* g, int64_t n);

// If ||g|| > max_norm, scales g by max_norm / (||g|| + 1e-6). Returns the norm BEFORE clipping.
// A non-finite norm (inf/NaN gradients) is returned and the gradients are left untouched, so
// the caller can skip the step.
double clip_grad_norm(float* g, int64_t n, float max_norm);
double clip_grad_norm(nn::ParamStore& store, float max_norm);

// g = min(max(g, -clip), clip) element-wise.
void clip_grad_value(float* g, int64_t n, float clip);
void clip_grad_value(nn::ParamStore& store, float clip);

}  // namespace engram::optim
