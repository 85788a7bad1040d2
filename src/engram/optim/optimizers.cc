// Update rules as vectorisable loops over flat float buffers (raw pointers, no allocation).
#include "engram/optim/optimizers.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "engram/core/kernels/parallel.h"

namespace engram::optim {
namespace {

void check_weight_decay(std::string_view kind, float weight_decay) {
  ENGRAM_CHECK(std::isfinite(weight_decay) && weight_decay >= 0, "{}: weight_decay must be >= 0, got {}", kind,
               weight_decay);
}

// eps is a denominator's floor (adam, adagrad, rmsprop: g / (sqrt(v) + eps) with v 0 where a
// gradient has been 0), so it must be > 0.
void check_common(std::string_view kind, float weight_decay, float eps) {
  check_weight_decay(kind, weight_decay);
  ENGRAM_CHECK(std::isfinite(eps) && eps > 0, "{}: eps must be a finite number > 0, got {}", kind, eps);
}

// ---- kernels (raw pointers, no allocation)

void sgd_plain(float* __restrict w, const float* __restrict g, int64_t n, float lr, float wd) {
  for (int64_t i = 0; i < n; ++i) w[i] -= lr * (g[i] + wd * w[i]);
}

void sgd_momentum(float* __restrict w, const float* __restrict g, float* __restrict b, int64_t n, float lr,
                  float wd, float mu, bool nesterov) {
  if (nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g[i] + wd * w[i];
      b[i] = mu * b[i] + gi;
      w[i] -= lr * (gi + mu * b[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g[i] + wd * w[i];
      b[i] = mu * b[i] + gi;
      w[i] -= lr * b[i];
    }
  }
}

// The rules that divide by a square root run over blocks of kBlock values that stay in L1: a
// loop updating the moments, one vectorised sqrt of the block (Eigen's: a plain std::sqrt loop
// is not vectorised by GCC while errno is on), and a loop updating the weights.
constexpr int64_t kBlock = 256;

void sqrt_block(const float* x, float* out, int64_t n) {
  Eigen::Map<Eigen::ArrayXf>(out, n) = Eigen::Map<const Eigen::ArrayXf>(x, n).sqrt();
}

void adam_kernel(float* __restrict w, const float* __restrict g, float* __restrict m, float* __restrict v,
                 int64_t n, float step_size, float b1, float b2, float bc2_sqrt, float eps, float l2, float decay) {
  float root[kBlock];  // sqrt(v) of the block
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t len = std::min(kBlock, n - i0);
    float* __restrict wb = w + i0;
    float* __restrict mb = m + i0;
    float* __restrict vb = v + i0;
    const float* __restrict gb = g + i0;
    for (int64_t i = 0; i < len; ++i) {
      const float gi = gb[i] + l2 * wb[i];
      mb[i] = b1 * mb[i] + (1.0f - b1) * gi;
      vb[i] = b2 * vb[i] + (1.0f - b2) * gi * gi;
    }
    sqrt_block(vb, root, len);
    // decay = 1 - lr*wd for decoupled (AdamW) decay, else 1 (then l2 may be non-zero).
    for (int64_t i = 0; i < len; ++i) wb[i] = wb[i] * decay - step_size * mb[i] / (root[i] / bc2_sqrt + eps);
  }
}

void adagrad_kernel(float* __restrict w, const float* __restrict g, float* __restrict s, int64_t n, float lr,
                    float eps, float wd) {
  float root[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t len = std::min(kBlock, n - i0);
    float* __restrict wb = w + i0;
    float* __restrict sb = s + i0;
    const float* __restrict gb = g + i0;
    for (int64_t i = 0; i < len; ++i) {
      const float gi = gb[i] + wd * wb[i];
      sb[i] += gi * gi;
    }
    sqrt_block(sb, root, len);
    for (int64_t i = 0; i < len; ++i) wb[i] -= lr * (gb[i] + wd * wb[i]) / (root[i] + eps);
  }
}

// sq: running E[g²]; avg: running E[g] (centered only, else null); buf: momentum buffer
// (momentum only, else null).
void rmsprop_kernel(float* __restrict w, const float* __restrict g, float* __restrict sq, float* __restrict avg,
                    float* __restrict buf, int64_t n, const RmspropOptions& o) {
  const float a = o.alpha, lr = o.lr, wd = o.weight_decay, mu = o.momentum;
  const float eps_root = o.eps_in_root ? o.eps : 0.0f, eps = o.eps_in_root ? 0.0f : o.eps;
  float root[kBlock];  // sqrt of the (centered) second moment
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t len = std::min(kBlock, n - i0);
    float* __restrict wb = w + i0;
    float* __restrict sb = sq + i0;
    const float* __restrict gb = g + i0;
    for (int64_t i = 0; i < len; ++i) {
      const float gi = gb[i] + wd * wb[i];
      sb[i] = a * sb[i] + (1.0f - a) * gi * gi;
    }
    if (avg) {
      float* __restrict ab = avg + i0;
      for (int64_t i = 0; i < len; ++i) {
        ab[i] = a * ab[i] + (1.0f - a) * (gb[i] + wd * wb[i]);
        const float var = sb[i] - ab[i] * ab[i];
        root[i] = (var > 0.0f ? var : 0.0f) + eps_root;  // rounding can make the estimate slightly negative
      }
      sqrt_block(root, root, len);
    } else if (eps_root != 0.0f) {
      for (int64_t i = 0; i < len; ++i) root[i] = sb[i] + eps_root;
      sqrt_block(root, root, len);
    } else {
      sqrt_block(sb, root, len);
    }
    if (buf) {
      float* __restrict bb = buf + i0;
      for (int64_t i = 0; i < len; ++i) {
        bb[i] = mu * bb[i] + (gb[i] + wd * wb[i]) / (root[i] + eps);
        wb[i] -= lr * bb[i];
      }
    } else {
      for (int64_t i = 0; i < len; ++i) wb[i] -= lr * (gb[i] + wd * wb[i]) / (root[i] + eps);
    }
  }
}

std::vector<std::string> rmsprop_slots(const RmspropOptions& o) {
  std::vector<std::string> s = {"square_avg"};
  if (o.centered) s.push_back("grad_avg");
  if (o.momentum > 0) s.push_back("momentum_buffer");
  return s;
}

}  // namespace

// ---- SGD

Sgd::Sgd(nn::ParamStore& store, SgdOptions options)
    : Optimizer(store, options.lr, options.momentum > 0 ? std::vector<std::string>{"momentum_buffer"}
                                                        : std::vector<std::string>{}),
      options_(options) {
  check_weight_decay(kind(), options.weight_decay);
  ENGRAM_CHECK(options.momentum >= 0 && options.momentum < 1, "sgd: momentum must be in [0, 1), got {}",
               options.momentum);
  ENGRAM_CHECK(!options.nesterov || options.momentum > 0, "sgd: nesterov needs momentum > 0");
}

void Sgd::update(float* w, const float* g, int64_t n) {
  if (options_.momentum > 0)
    sgd_momentum(w, g, slot(0), n, step_lr(), options_.weight_decay, options_.momentum, options_.nesterov);
  else
    sgd_plain(w, g, n, step_lr(), options_.weight_decay);
}

// ---- Adam

Adam::Adam(nn::ParamStore& store, AdamOptions options)
    : Optimizer(store, options.lr, {"exp_avg", "exp_avg_sq"}), options_(options) {
  check_common(kind(), options.weight_decay, options.eps);
  ENGRAM_CHECK(options.beta1 >= 0 && options.beta1 < 1, "adam: beta1 must be in [0, 1), got {}", options.beta1);
  ENGRAM_CHECK(options.beta2 >= 0 && options.beta2 < 1, "adam: beta2 must be in [0, 1), got {}", options.beta2);
}

void Adam::update(float* w, const float* g, int64_t n) {
  const double t = static_cast<double>(steps());
  const double bc1 = 1.0 - std::pow(static_cast<double>(options_.beta1), t);
  const double bc2 = 1.0 - std::pow(static_cast<double>(options_.beta2), t);
  const float step_size = static_cast<float>(step_lr() / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const bool decoupled = options_.decoupled_weight_decay;
  const float l2 = decoupled ? 0.0f : options_.weight_decay;
  const float decay = decoupled ? 1.0f - step_lr() * options_.weight_decay : 1.0f;
  float* m = slot(0);
  float* v = slot(1);
  // Over the thread team in whole blocks (each element's update is independent of the split).
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  core::kernels::parallel_for(blocks, 256, [&](int64_t b, int64_t e) {
    const int64_t i0 = b * kBlock, len = std::min(n, e * kBlock) - i0;
    adam_kernel(w + i0, g + i0, m + i0, v + i0, len, step_size, options_.beta1, options_.beta2, bc2_sqrt,
                options_.eps, l2, decay);
  });
}

// ---- Adagrad

Adagrad::Adagrad(nn::ParamStore& store, AdagradOptions options)
    : Optimizer(store, options.lr, {"sum"}), options_(options) {
  check_common(kind(), options.weight_decay, options.eps);
  ENGRAM_CHECK(std::isfinite(options.initial_accumulator) && options.initial_accumulator >= 0,
               "adagrad: initial_accumulator must be >= 0, got {}",
               options.initial_accumulator);
  fill_slot(0, options.initial_accumulator);
}

void Adagrad::update(float* w, const float* g, int64_t n) {
  adagrad_kernel(w, g, slot(0), n, step_lr(), options_.eps, options_.weight_decay);
}

// ---- RMSProp

RmsProp::RmsProp(nn::ParamStore& store, RmspropOptions options)
    : Optimizer(store, options.lr, rmsprop_slots(options)), options_(options) {
  check_common(kind(), options.weight_decay, options.eps);
  ENGRAM_CHECK(options.alpha >= 0 && options.alpha < 1, "rmsprop: alpha must be in [0, 1), got {}", options.alpha);
  ENGRAM_CHECK(options.momentum >= 0 && options.momentum < 1, "rmsprop: momentum must be in [0, 1), got {}",
               options.momentum);
}

void RmsProp::update(float* w, const float* g, int64_t n) {
  RmspropOptions o = options_;
  o.lr = step_lr();
  int k = 1;
  float* avg = options_.centered ? slot(k++) : nullptr;
  float* buf = options_.momentum > 0 ? slot(k++) : nullptr;
  rmsprop_kernel(w, g, slot(0), avg, buf, n, o);
}

}  // namespace engram::optim
