// Reductions: sum / mean / max along one axis and sum / mean over every element.
// A reduction along `axis` views x as [O, N, I]: O = product of the dims before the axis, N the
// reduced dim, I = product of the dims after it; the result is [O, I] (keepdim puts back a 1).
#include "engram/core/ops/reduce.h"

#include <Eigen/Core>

namespace engram::core {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct AxisView {
  int axis;       // normalised (non-negative) axis
  int64_t outer;  // O
  int64_t n;      // N
  int64_t inner;  // I
};

AxisView axis_view(const Shape& s, int axis) {
  AxisView v{s.norm_axis(axis), 1, 0, 1};
  for (int i = 0; i < v.axis; ++i) v.outer *= s[i];
  v.n = s[v.axis];
  for (int i = v.axis + 1; i < s.rank(); ++i) v.inner *= s[i];
  return v;
}

Shape reduced_shape(const Shape& s, int axis, bool keepdim) {
  int dims[kMaxRank];
  int r = 0;
  for (int i = 0; i < s.rank(); ++i) {
    if (i != axis) dims[r++] = s[i];
    else if (keepdim) dims[r++] = 1;
  }
  return Shape::from(dims, dims + r);
}

// y [O, I] = sum_k x [O, k, I]: contiguous row adds, or a vectorised row sum when I == 1.
void sum_kernel(const float* x, const AxisView& v, float* y) {
  if (v.inner == 1) {
    Eigen::Map<Eigen::VectorXf>(y, v.outer) = Eigen::Map<const RowMatrix>(x, v.outer, v.n).rowwise().sum();
    return;
  }
  for (int64_t o = 0; o < v.outer; ++o) {
    float* yo = y + o * v.inner;
    const float* xo = x + o * v.n * v.inner;
    for (int64_t i = 0; i < v.inner; ++i) yo[i] = 0.0f;
    for (int64_t k = 0; k < v.n; ++k) {
      const float* xk = xo + k * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) yo[i] += xk[i];
    }
  }
}

// dx [O, k, I] += s dy [O, I] for every k (s = 1 for sum, 1/N for mean).
void broadcast_add(const float* dy, const AxisView& v, float s, float* dx) {
  for (int64_t o = 0; o < v.outer; ++o) {
    const float* dyo = dy + o * v.inner;
    float* dxo = dx + o * v.n * v.inner;
    for (int64_t k = 0; k < v.n; ++k) {
      float* dxk = dxo + k * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) dxk[i] += s * dyo[i];
    }
  }
}

// Shared by sum and mean: y = s * sum_k x;  dx += s dy (broadcast along the axis). f[0] = s.
Var scaled_sum(Var x, int axis, bool keepdim, bool mean) {
  const Shape& sx = x.shape();
  const AxisView v = axis_view(sx, axis);
  ENGRAM_CHECK(!mean || v.n > 0, "mean over empty axis {} of {}", axis, sx);
  const float s = mean ? 1.0f / static_cast<float>(v.n) : 1.0f;
  Graph& g = *x.g;
  Tensor y = g.alloc(reduced_shape(sx, v.axis, keepdim));
  sum_kernel(x.data(), v, y.data);
  if (mean)
    for (int64_t i = 0, n = y.numel(); i < n; ++i) y.data[i] *= s;
  Var out = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    broadcast_add(n.grad, axis_view(g.node(n.in[0]).value.shape, n.i[0]), n.f[0], dx);
  }, {x});
  g.node(out).i[0] = v.axis;
  g.node(out).f[0] = s;
  return out;
}

// y = s * sum_i x_i (vectorised);  dx += s dy.  f[0] = s.
Var scaled_sum_all(Var x, bool mean) {
  const int64_t count = x.numel();
  ENGRAM_CHECK(!mean || count > 0, "mean_all of an empty tensor {}", x.shape());
  const float s = mean ? 1.0f / static_cast<float>(count) : 1.0f;
  Graph& g = *x.g;
  Tensor y = g.alloc(Shape{});
  y.data[0] = s * Eigen::Map<const Eigen::VectorXf>(x.data(), count).sum();
  Var out = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const float d = n.f[0] * n.grad[0];
    for (int64_t i = 0, count = g.node(n.in[0]).value.numel(); i < count; ++i) dx[i] += d;
  }, {x});
  g.node(out).f[0] = s;
  return out;
}

}  // namespace

// y [O, I] = sum_k x [O, k, I];  dx [O, k, I] += dy [O, I]
Var sum(Var x, int axis, bool keepdim) { return scaled_sum(x, axis, keepdim, false); }

// y = sum_k x / N;  dx += dy / N
Var mean(Var x, int axis, bool keepdim) { return scaled_sum(x, axis, keepdim, true); }

// y [O, I] = max_k x [O, k, I];  dx [O, argmax, I] += dy [O, I]  (first arg-max, kept in aux)
Var max(Var x, int axis, bool keepdim) {
  const Shape& sx = x.shape();
  const AxisView v = axis_view(sx, axis);
  ENGRAM_CHECK(v.n > 0, "max over empty axis {} of {}", axis, sx);
  Graph& g = *x.g;
  Tensor y = g.alloc(reduced_shape(sx, v.axis, keepdim));
  int32_t* arg = g.arena().array<int32_t>(v.outer * v.inner);  // [O, I]
  const float* px = x.data();
  for (int64_t o = 0; o < v.outer; ++o) {
    const float* xo = px + o * v.n * v.inner;
    float* yo = y.data + o * v.inner;
    int32_t* ao = arg + o * v.inner;
    if (v.inner == 1) {  // a vectorised max, then the first position holding it (0 if NaN)
      const float m = Eigen::Map<const Eigen::VectorXf>(xo, v.n).maxCoeff();
      int64_t best = 0;
      while (best < v.n && !(xo[best] == m)) ++best;
      yo[0] = m;
      ao[0] = best < v.n ? static_cast<int32_t>(best) : 0;
      continue;
    }
    for (int64_t i = 0; i < v.inner; ++i) {
      yo[i] = xo[i];
      ao[i] = 0;
    }
    for (int64_t k = 1; k < v.n; ++k) {
      const float* xk = xo + k * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) {
        const bool better = xk[i] > yo[i];
        yo[i] = better ? xk[i] : yo[i];
        ao[i] = better ? static_cast<int32_t>(k) : ao[i];
      }
    }
  }
  Var out = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const AxisView v = axis_view(g.node(n.in[0]).value.shape, n.i[0]);
    const int32_t* arg = static_cast<const int32_t*>(n.aux);
    for (int64_t o = 0; o < v.outer; ++o) {
      float* dxo = dx + o * v.n * v.inner;
      const float* dyo = n.grad + o * v.inner;
      const int32_t* ao = arg + o * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) dxo[ao[i] * v.inner + i] += dyo[i];
    }
  }, {x});
  g.node(out).i[0] = v.axis;
  g.node(out).aux = arg;
  return out;
}

// y = sum_i x_i;  dx += dy
Var sum_all(Var x) { return scaled_sum_all(x, false); }

// y = sum_i x_i / numel;  dx += dy / numel
Var mean_all(Var x) { return scaled_sum_all(x, true); }

}  // namespace engram::core
