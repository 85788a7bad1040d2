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

// The clipping a training run applies to each batch's gradient, in this order: each component
// to +-per_value, each parameter's gradient to L2 norm per_param, the whole gradient to L2 norm
// global_norm (0 = that step off). The Trainer applies it (train/trainer.h); tasks never clip.
struct ClipConfig {
  float global_norm = 0.0f;  // as torch.nn.utils.clip_grad_norm_ over every parameter
  float per_param = 0.0f;    // each parameter on its own (MemN2N's authors' code: 40)
  float per_value = 0.0f;    // element-wise (the NTM paper: 10)

  template <class V>
  void visit(V& v) {
    v("global_norm", global_norm, "rescale the whole gradient to this L2 norm when above it (0 = off)");
    v("per_param", per_param, "rescale each parameter's gradient to this L2 norm when above it (0 = off)");
    v("per_value", per_value, "clip each gradient component to +-per_value (0 = off)");
  }
};

// Checks cfg (every value finite and >= 0); errors name the key.
void check_clip_config(const ClipConfig& cfg);
// Applies cfg to store's gradients (see ClipConfig for the order).
void clip_gradients(nn::ParamStore& store, const ClipConfig& cfg);

// g = min(max(g, -clip), clip) element-wise.
void clip_grad_value(float* g, int64_t n, float clip);
void clip_grad_value(nn::ParamStore& store, float clip);

}  // namespace engram::optim
