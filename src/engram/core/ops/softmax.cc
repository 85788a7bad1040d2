// Softmax / log-softmax along the last axis, optionally masked: shape rule, forward, backward.
// Dims: R rows (every leading axis flattened), C last axis. Row kernels are Eigen array
// expressions so the max, exp and sum passes vectorise (std::exp in a plain loop does not).
#include "engram/core/ops/softmax.h"

#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "engram/core/kernels/parallel.h"

namespace engram::core {

namespace {

using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

using kernels::parallel_rows;
// Log-softmax splits its rows from 8k values per thread: a beam's few rows over a large
// vocabulary (5 x 8,000) are worth sharing.
constexpr int64_t kLogSoftmaxValuesPerThread = int64_t{1} << 13;
constexpr float kInf = std::numeric_limits<float>::infinity();

// Masked rows go through plain loops that g++ vectorises (compare + blend) and Eigen reductions
// on float data: Eigen's select() over a bool mask runs one scalar at a time.

// y [C] = x where kept, -inf where masked; returns the max over kept entries (-inf if none).
float masked_copy_max(const float* x, const float* mask, float* y, int c) {
  for (int j = 0; j < c; ++j) y[j] = mask[j] != 0.0f ? x[j] : -kInf;
  return Row(y, c).maxCoeff();
}

// y [C] = softmax(x [C]) over kept positions (mask may be null). False for a row with no kept
// finite entry (all masked): y = 0.
bool softmax_row(const float* x, const float* mask, float* y, int c) {
  ConstRow xr(x, c);
  Row yr(y, c);
  if (!mask) {
    const float m = xr.maxCoeff();  // pass 1: max
    yr = (xr - m).exp();            // pass 2: exp (+ the sum below, from L1)
    yr *= 1.0f / yr.sum();
    return true;
  }
  const float m = masked_copy_max(x, mask, y, c);
  if (m == -kInf) {
    yr.setZero();
    return false;
  }
  yr = (yr - m).exp();  // masked: exp(-inf), ~0 (Eigen's exp floors at 2^-128); zeroed below
  const float inv = 1.0f / yr.sum();
  for (int j = 0; j < c; ++j) y[j] = mask[j] != 0.0f ? y[j] * inv : 0.0f;
  return true;
}

// y [C] = x - logsumexp(x) over kept positions, -inf where masked. False for an all-masked row.
bool log_softmax_row(const float* x, const float* mask, float* y, int c) {
  ConstRow xr(x, c);
  Row yr(y, c);
  if (!mask) {
    const float m = xr.maxCoeff();
    const float log_z = std::log((xr - m).exp().sum());
    yr = (xr - m) - log_z;  // not x - (m + log_z): that rounds log_z to the spacing of |m|
    return true;
  }
  const float m = masked_copy_max(x, mask, y, c);
  if (m == -kInf) return false;
  const float log_z = std::log((yr - m).exp().sum());  // masked terms add < C * 2^-128
  for (int j = 0; j < c; ++j) y[j] = mask[j] != 0.0f ? (x[j] - m) - log_z : -kInf;
  return true;
}

Var softmax_impl(Var x, const float* mask) {
  Graph& g = *x.g;
  const Shape& s = x.shape();
  const int c = s.last();
  const int64_t r = s.rows();
  Tensor y = g.alloc(s);  // [R, C]
  const float* px = x.data();
  parallel_rows(r, c, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) softmax_row(px + i * c, mask ? mask + i * c : nullptr, y.data + i * c, c);
  });
  // dx = y * (dy - sum(dy * y)); masked positions have y = 0, so they get dx = 0 without the mask.
  return g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const int c = n.value.shape.last();
    const int64_t r = n.value.shape.rows();
    parallel_rows(r, c, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ConstRow yr(n.value.data + i * c, c), dyr(n.grad + i * c, c);
        Row dxr(dx + i * c, c);
        const float dot = (dyr * yr).sum();
        dxr += yr * (dyr - dot);
      }
    });
  }, {x});
}

Var log_softmax_impl(Var x, const float* mask) {
  Graph& g = *x.g;
  const Shape& s = x.shape();
  const int c = s.last();
  const int64_t r = s.rows();
  Tensor y = g.alloc(s);  // [R, C]
  // The first row with every position masked, if any (no exception may leave a parallel region).
  std::atomic<int64_t> bad{r};
  const float* px = x.data();
  parallel_rows(r, c, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      if (!log_softmax_row(px + i * c, mask ? mask + i * c : nullptr, y.data + i * c, c)) {
        int64_t cur = bad.load();
        while (i < cur && !bad.compare_exchange_weak(cur, i)) {
        }
      }
  }, kLogSoftmaxValuesPerThread);
  ENGRAM_CHECK(bad.load() == r, "log_softmax: row {} of {} has every position masked (or -inf)", bad.load(), s);
  // dx = dy - exp(y) * sum(dy), both restricted to kept positions (masked: y = -inf, dx = 0).
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const int c = n.value.shape.last();
    const int64_t r = n.value.shape.rows();
    const bool masked = n.i[0] != 0;
    parallel_rows(r, c, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ConstRow yr(n.value.data + i * c, c), dyr(n.grad + i * c, c);
        Row dxr(dx + i * c, c);
        if (!masked) {
          const float sum = dyr.sum();
          dxr += dyr - yr.exp() * sum;
        } else {  // kept iff y > -inf
          const float* y = yr.data();
          const float* dy = dyr.data();
          float* d = dxr.data();
          float sum = 0.0f;
          for (int j = 0; j < c; ++j) sum += y[j] != -kInf ? dy[j] : 0.0f;
          for (int j = 0; j < c; ++j)
            if (y[j] != -kInf) d[j] += dy[j] - std::exp(y[j]) * sum;
        }
      }
    });
  }, {x});
  g.node(v).i[0] = mask != nullptr;
  return v;
}

}  // namespace

Var softmax(Var x) { return softmax_impl(x, nullptr); }

Var softmax(Var x, const float* mask) {
  ENGRAM_CHECK(mask != nullptr, "softmax: null mask (use softmax(x) for none)");
  return softmax_impl(x, mask);
}

Var log_softmax(Var x) { return log_softmax_impl(x, nullptr); }

Var log_softmax(Var x, const float* mask) {
  ENGRAM_CHECK(mask != nullptr, "log_softmax: null mask (use log_softmax(x) for none)");
  return log_softmax_impl(x, mask);
}

}  // namespace engram::core
