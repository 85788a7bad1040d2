// Losses: fused cross-entropy (log-softmax + NLL), NLL on log-probs, BCE with logits, MSE. Each
// is shape rule + forward + accumulating backward; every one returns a scalar [].
// Dims: R rows (leading axes flattened), C classes, E elements.
#include "engram/core/ops/loss.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engram/core/kernels/parallel.h"

namespace engram::core {

namespace {

using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

// Payload of cross_entropy / nll, in the arena.
struct ClassSaved {
  const int32_t* targets;  // [R]
  const float* lse;        // [R] per-row logsumexp (cross_entropy only)
};

// Validates shapes, options and targets; returns the number of non-ignored rows.
int64_t check_targets(const char* op, const Shape& s, const std::vector<int32_t>& t,
                      const CrossEntropyOptions& opt) {
  ENGRAM_CHECK(s.rank() >= 1 && s.last() >= 1, "{}: needs [..., C] with C >= 1, got {}", op, s);
  const int64_t r = s.rows();
  const int c = s.last();
  ENGRAM_CHECK(static_cast<int64_t>(t.size()) == r, "{}: {} targets for {} rows of {}", op, t.size(), r, s);
  ENGRAM_CHECK(opt.label_smoothing >= 0.0f && opt.label_smoothing < 1.0f, "{}: label_smoothing {} outside [0, 1)",
               op, opt.label_smoothing);
  int64_t count = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (t[i] == opt.ignore_index) continue;
    ENGRAM_CHECK(t[i] >= 0 && t[i] < c, "{}: target {} at row {} outside [0, {})", op, t[i], i, c);
    ++count;
  }
  return count;
}

float loss_scale(const CrossEntropyOptions& opt, int64_t count) {
  if (!opt.mean) return 1.0f;
  return count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
}

// Records the scalar loss; with a gradient, saves targets (+ lse) and f = {eps, scale}, i[0] = ignore.
Var record_class_loss(Var x, double total, float scale, BackwardFn fn, const std::vector<int32_t>& targets,
                      const float* lse, const CrossEntropyOptions& opt) {
  Graph& g = *x.g;
  Tensor out = g.alloc(Shape{});
  out[0] = static_cast<float>(total * scale);
  Var v = g.record(out, fn, {x});
  if (v.needs_grad()) {
    Node& n = g.node(v);
    auto* saved = g.arena().array<ClassSaved>(1);
    int32_t* t = g.arena().array<int32_t>(targets.size());
    if (!targets.empty()) std::memcpy(t, targets.data(), sizeof(int32_t) * targets.size());
    *saved = {t, lse};
    n.aux = saved;
    n.f[0] = opt.label_smoothing;
    n.f[1] = scale;
    n.i[0] = opt.ignore_index;
  }
  return v;
}

}  // namespace

// L = scale * sum_r [lse_r - (1-eps) x_{r,t} - eps/C sum_c x_{r,c}];
// dx_{r,c} += dL scale (exp(x_{r,c} - lse_r) - eps/C - (1-eps) [c == t])
Var cross_entropy(Var logits, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt) {
  const Shape& s = logits.shape();
  const int64_t count = check_targets("cross_entropy", s, targets, opt);
  const int64_t r = s.rows();
  const int c = s.last();
  const float eps = opt.label_smoothing, on = 1.0f - eps, off = eps / static_cast<float>(c);
  Graph& g = *logits.g;
  float* lse = g.arena().floats(r);                                  // [R]
  double* rows = static_cast<double*>(g.arena().allocate(sizeof(double) * r));  // [R] loss per row
  const float* px = logits.data();
  kernels::parallel_rows(r, c, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      lse[i] = 0.0f;
      rows[i] = 0.0;
      if (targets[i] == opt.ignore_index) continue;
      ConstRow xr(px + i * c, c);
      const float m = xr.maxCoeff();
      const float log_z = std::log((xr - m).exp().sum());
      lse[i] = m + log_z;
      // lse - (1-eps) x_t - eps/C sum_c x_c, written around m so large logits do not cancel.
      double row = log_z + static_cast<double>(on) * (m - xr[targets[i]]);
      if (eps > 0.0f) row += static_cast<double>(off) * (m - xr).sum();
      rows[i] = row;
    }
  });
  double total = 0;  // summed in row order: the same whatever the thread count
  for (int64_t i = 0; i < r; ++i) total += rows[i];
  return record_class_loss(logits, total, loss_scale(opt, count), [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const auto& saved = *static_cast<const ClassSaved*>(n.aux);
    const Tensor& x = g.node(n.in[0]).value;
    const int c = x.shape.last();
    const int64_t r = x.shape.rows();
    const float gs = n.grad[0] * n.f[1], on = 1.0f - n.f[0], off = n.f[0] / static_cast<float>(c);
    if (gs == 0.0f) return;
    kernels::parallel_rows(r, c, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int32_t t = saved.targets[i];
        if (t == n.i[0]) continue;
        ConstRow xr(x.data + i * c, c);
        Row dxr(dx + i * c, c);
        dxr += gs * ((xr - saved.lse[i]).exp() - off);
        dxr[t] -= gs * on;
      }
    });
  }, targets, lse, opt);
}

// L = scale * sum_r -[(1-eps) lp_{r,t} + eps/C sum_c lp_{r,c}];
// dlp_{r,c} -= dL scale (eps/C + (1-eps) [c == t])
Var nll(Var log_probs, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt) {
  const Shape& s = log_probs.shape();
  const int64_t count = check_targets("nll", s, targets, opt);
  const int64_t r = s.rows();
  const int c = s.last();
  const float eps = opt.label_smoothing, on = 1.0f - eps, off = eps / static_cast<float>(c);
  double total = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (targets[i] == opt.ignore_index) continue;
    ConstRow lp(log_probs.data() + i * c, c);
    double row = -static_cast<double>(on) * lp[targets[i]];
    if (eps > 0.0f) {
      const float sum = lp.sum();
      ENGRAM_CHECK(std::isfinite(sum), "nll: label smoothing over row {} with non-finite log-probs (masked?)", i);
      row -= static_cast<double>(off) * sum;
    }
    total += row;
  }
  return record_class_loss(log_probs, total, loss_scale(opt, count), [](Graph& g, const Node& n) {
    float* dlp = g.grad(n.in[0]);
    if (!dlp) return;
    const auto& saved = *static_cast<const ClassSaved*>(n.aux);
    const Shape& s = g.node(n.in[0]).value.shape;
    const int c = s.last();
    const int64_t r = s.rows();
    const float gs = n.grad[0] * n.f[1], on = 1.0f - n.f[0], off = n.f[0] / static_cast<float>(c);
    for (int64_t i = 0; i < r; ++i) {
      const int32_t t = saved.targets[i];
      if (t == n.i[0]) continue;
      if (off != 0.0f) Row(dlp + i * c, c) -= gs * off;
      dlp[i * c + t] -= gs * on;
    }
  }, targets, nullptr, opt);
}

// L = 1/E sum_e [max(x,0) - x t + log1p(e^-|x|)];  dx += dL/E (sigmoid(x) - t)
Var bce_with_logits(Var logits, const float* targets) {
  ENGRAM_CHECK(targets != nullptr, "bce_with_logits: null targets");
  const int64_t e = logits.numel();
  ENGRAM_CHECK(e > 0, "bce_with_logits: empty logits {}", logits.shape());
  const float* x = logits.data();
  double total = 0;
  for (int64_t i = 0; i < e; ++i) {
    const float t = targets[i];
    ENGRAM_CHECK(t >= 0.0f && t <= 1.0f, "bce_with_logits: target {} at {} outside [0, 1]", t, i);
    total += std::max(x[i], 0.0f) - x[i] * t + std::log1p(std::exp(-std::fabs(x[i])));
  }
  Graph& g = *logits.g;
  Tensor out = g.alloc(Shape{});
  out[0] = static_cast<float>(total / static_cast<double>(e));
  Var v = g.record(out, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const Tensor& xt = g.node(n.in[0]).value;
    const float* t = static_cast<const float*>(n.aux);
    const float gs = n.grad[0] * n.f[0];
    for (int64_t i = 0, e = xt.numel(); i < e; ++i) {
      const float xi = xt.data[i];
      const float z = std::exp(-std::fabs(xi));  // stable sigmoid
      const float sig = xi >= 0.0f ? 1.0f / (1.0f + z) : z / (1.0f + z);
      dx[i] += gs * (sig - t[i]);
    }
  }, {logits});
  if (v.needs_grad()) {
    float* t = g.arena().floats(e);
    std::memcpy(t, targets, sizeof(float) * e);
    g.node(v).aux = t;
    g.node(v).f[0] = 1.0f / static_cast<float>(e);
  }
  return v;
}

// L = 1/E sum_e (x - t)^2;  dx += dL 2/E (x - t)
Var mse(Var x, const float* target) {
  ENGRAM_CHECK(target != nullptr, "mse: null target");
  const int64_t e = x.numel();
  ENGRAM_CHECK(e > 0, "mse: empty input {}", x.shape());
  const float* px = x.data();
  double total = 0;
  for (int64_t i = 0; i < e; ++i) {
    const double d = static_cast<double>(px[i]) - target[i];
    total += d * d;
  }
  Graph& g = *x.g;
  Tensor out = g.alloc(Shape{});
  out[0] = static_cast<float>(total / static_cast<double>(e));
  Var v = g.record(out, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const Tensor& xt = g.node(n.in[0]).value;
    const float* t = static_cast<const float*>(n.aux);
    const float gs = 2.0f * n.grad[0] * n.f[0];
    for (int64_t i = 0, e = xt.numel(); i < e; ++i) dx[i] += gs * (xt.data[i] - t[i]);
  }, {x});
  if (v.needs_grad()) {
    float* t = g.arena().floats(e);
    std::memcpy(t, target, sizeof(float) * e);
    g.node(v).aux = t;
    g.node(v).f[0] = 1.0f / static_cast<float>(e);
  }
  return v;
}

}  // namespace engram::core
