// Gradient clipping kernels.
#include "engram/optim/clip.h"

#include <cmath>
#include <utility>

namespace engram::optim {

double global_norm(const float* g, int64_t n) {
  // 16 float lanes per block of 1024 values (vectorisable), each block summed into a double.
  constexpr int kLanes = 16;
  constexpr int64_t kBlock = 1024;
  double total = 0.0;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float acc[kLanes] = {};
    for (int64_t j = 0; j < kBlock; j += kLanes)
      for (int l = 0; l < kLanes; ++l) acc[l] += g[i + j + l] * g[i + j + l];
    double block = 0.0;
    for (float a : acc) block += a;
    total += block;
  }
  for (; i < n; ++i) total += static_cast<double>(g[i]) * g[i];
  return std::sqrt(total);
}

double clip_grad_norm(float* g, int64_t n, float max_norm) {
  ENGRAM_CHECK(max_norm > 0, "clip_grad_norm: max_norm must be > 0, got {}", max_norm);
  const double norm = global_norm(g, n);
  if (!std::isfinite(norm) || norm <= max_norm) return norm;
  const float scale = static_cast<float>(max_norm / (norm + 1e-6));
  for (int64_t i = 0; i < n; ++i) g[i] *= scale;
  return norm;
}

double clip_grad_norm(nn::ParamStore& store, float max_norm) {
  return clip_grad_norm(store.grads(), store.numel(), max_norm);
}

void clip_grad_value(float* g, int64_t n, float clip) {
  ENGRAM_CHECK(clip >= 0, "clip_grad_value: clip must be >= 0, got {}", clip);
  for (int64_t i = 0; i < n; ++i) g[i] = g[i] < -clip ? -clip : (g[i] > clip ? clip : g[i]);
}

void clip_grad_value(nn::ParamStore& store, float clip) { clip_grad_value(store.grads(), store.numel(), clip); }

void check_clip_config(const ClipConfig& c) {
  for (auto [name, v] : {std::pair{"global_norm", c.global_norm}, {"per_param", c.per_param}, {"per_value", c.per_value}})
    ENGRAM_CHECK(std::isfinite(v) && v >= 0, "train.clip.{} must be a number >= 0 (0 = off), got {}", name, v);
}

void clip_gradients(nn::ParamStore& store, const ClipConfig& c) {
  if (c.per_value > 0) clip_grad_value(store, c.per_value);
  if (c.per_param > 0)
    for (nn::ParamId id = 0; id < store.count(); ++id)
      clip_grad_norm(store.grad(id).data, store.shape(id).numel(), c.per_param);
  if (c.global_norm > 0) clip_grad_norm(store, c.global_norm);
}

}  // namespace engram::optim
