// The update rules: SGD (+momentum, Nesterov), Adam (bias-corrected, L2 or decoupled weight
// decay), Adagrad and RMSProp (momentum, centered). Each follows PyTorch's formula (torch.optim,
// noted per class), so learning rates and epsilons carry over; t is the 1-based step number.
#pragma once

#include "engram/optim/optimizer.h"

namespace engram::optim {

struct SgdOptions {
  float lr = 0.01f;
  float momentum = 0.0f;      // 0 = plain SGD (no momentum buffer is kept)
  bool nesterov = false;      // needs momentum > 0
  float weight_decay = 0.0f;  // L2: g += weight_decay * w
};

// g' = g + wd*w;  b = mu*b + g';  d = nesterov ? g' + mu*b : b;  w -= lr*d  (b starts at 0).
class Sgd final : public Optimizer {
 public:
  explicit Sgd(nn::ParamStore& store, SgdOptions options = {});
  std::string_view kind() const override { return "sgd"; }
  const SgdOptions& options() const { return options_; }

 private:
  void update(float* w, const float* g, int64_t n) override;
  SgdOptions options_;
};

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  bool decoupled_weight_decay = false;  // true = AdamW: w *= 1 - lr*wd; false = L2: g += wd*w
};

// m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g²;
// w -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
class Adam final : public Optimizer {
 public:
  explicit Adam(nn::ParamStore& store, AdamOptions options = {});
  std::string_view kind() const override { return "adam"; }
  const AdamOptions& options() const { return options_; }

 private:
  void update(float* w, const float* g, int64_t n) override;
  AdamOptions options_;
};

struct AdagradOptions {
  float lr = 0.01f;
  float eps = 1e-10f;
  float weight_decay = 0.0f;
  float initial_accumulator = 0.0f;
};

// g' = g + wd*w;  s += g'²;  w -= lr * g' / (sqrt(s) + eps).
class Adagrad final : public Optimizer {
 public:
  explicit Adagrad(nn::ParamStore& store, AdagradOptions options = {});
  std::string_view kind() const override { return "adagrad"; }
  const AdagradOptions& options() const { return options_; }

 private:
  void update(float* w, const float* g, int64_t n) override;
  AdagradOptions options_;
};

struct RmspropOptions {
  float lr = 0.01f;
  float alpha = 0.99f;        // smoothing of the squared-gradient average
  float eps = 1e-8f;
  float momentum = 0.0f;      // the NTM paper uses 0.9 (with lr 1e-4)
  bool centered = false;      // divide by the estimated variance instead of the raw second moment
  float weight_decay = 0.0f;
  bool eps_in_root = false;   // d = sqrt(v + eps) (Graves 2013, TensorFlow) instead of sqrt(v) + eps
};

// g' = g + wd*w;  s = a*s + (1-a)*g'²;  centered: m = a*m + (1-a)*g', v = s - m², else v = s;
// d = sqrt(v) + eps (PyTorch), or sqrt(v + eps) with eps_in_root (Graves 2013 eq. 38-41, the form
// the NTM paper trained with: centered, momentum 0.9, eps 1e-4 under the root);
// momentum: b = mu*b + g'/d, w -= lr*b;  else w -= lr*g'/d.
class RmsProp final : public Optimizer {
 public:
  explicit RmsProp(nn::ParamStore& store, RmspropOptions options = {});
  std::string_view kind() const override { return "rmsprop"; }
  const RmspropOptions& options() const { return options_; }

 private:
  void update(float* w, const float* g, int64_t n) override;
  RmspropOptions options_;
};

}  // namespace engram::optim
