// Layer norm and inverted dropout: shape rule + forward + accumulating backward side by side.
// Dims: R rows (leading axes flattened), D normalised width.
#include "engram/core/ops/norm.h"

#include <Eigen/Core>

#include <cmath>

namespace engram::core {

namespace {

using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

}  // namespace

// xhat = (x - mu) r, r = 1/sqrt(var + eps), y = xhat gain + bias;
// dxhat = dy gain;  dx += r (dxhat - mean(dxhat) - xhat mean(dxhat xhat));
// dgain += sum_rows dy xhat;  dbias += sum_rows dy
Var layer_norm(Var x, Var gain, Var bias, float eps) {
  const Shape& sx = x.shape();
  ENGRAM_CHECK(sx.rank() >= 1 && sx.last() >= 1, "layer_norm: needs [..., D] with D >= 1, got {}", sx);
  const int d = sx.last();
  ENGRAM_CHECK(!gain.valid() || gain.numel() == d, "layer_norm: gain {} does not match D = {} of {}",
               gain.valid() ? gain.shape() : Shape{}, d, sx);
  ENGRAM_CHECK(!bias.valid() || bias.numel() == d, "layer_norm: bias {} does not match D = {} of {}",
               bias.valid() ? bias.shape() : Shape{}, d, sx);
  ENGRAM_CHECK(eps > 0.0f, "layer_norm: eps {} must be positive", eps);
  Graph& g = *x.g;
  const int64_t rows = sx.rows();
  float* stats = g.arena().floats(2 * rows);  // [R] means, then [R] 1/std
  Tensor y = g.alloc(sx);
  const float* pg = gain.valid() ? gain.data() : nullptr;
  const float* pb = bias.valid() ? bias.data() : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    ConstRow xr(x.data() + r * d, d);
    Row yr(y.data + r * d, d);
    const float mu = xr.mean();
    yr = xr - mu;
    const float rstd = 1.0f / std::sqrt(yr.square().mean() + eps);
    yr *= rstd;
    if (pg) yr *= ConstRow(pg, d);
    if (pb) yr += ConstRow(pb, d);
    stats[r] = mu;
    stats[rows + r] = rstd;
  }
  BackwardFn fn = [](Graph& g, const Node& n) {
    const Tensor& xt = g.node(n.in[0]).value;
    const int d = xt.shape.last();
    const int64_t rows = xt.shape.rows();
    const float* stats = static_cast<const float*>(n.aux);
    const float* pg = n.in[1] >= 0 ? g.node(n.in[1]).value.data : nullptr;
    float* dx = g.grad(n.in[0]);
    float* dgain = g.grad(n.in[1]);
    float* dbias = g.grad(n.in[2]);
    for (int64_t r = 0; r < rows; ++r) {
      ConstRow xr(xt.data + r * d, d), dyr(n.grad + r * d, d);
      const float mu = stats[r], rstd = stats[rows + r];
      const auto xhat = (xr - mu) * rstd;
      if (dgain) Row(dgain, d) += dyr * xhat;
      if (dbias) Row(dbias, d) += dyr;
      if (!dx) continue;
      Row dxr(dx + r * d, d);
      if (pg) {
        const auto dxhat = dyr * ConstRow(pg, d);
        const float m1 = dxhat.mean(), m2 = (dxhat * xhat).mean();
        dxr += rstd * (dxhat - m1 - xhat * m2);
      } else {
        const float m1 = dyr.mean(), m2 = (dyr * xhat).mean();
        dxr += rstd * (dyr - m1 - xhat * m2);
      }
    }
  };
  Var v;
  if (gain.valid() && bias.valid()) v = g.record(y, fn, {x, gain, bias});
  else if (gain.valid()) v = g.record(y, fn, {x, gain});
  else if (bias.valid()) v = g.record(y, fn, {x, bias});
  else v = g.record(y, fn, {x});
  Node& n = g.node(v);
  n.in[1] = gain.valid() ? gain.id : -1;  // fixed slots: in[1] gain, in[2] bias
  n.in[2] = bias.valid() ? bias.id : -1;
  n.aux = stats;
  return v;
}

// y = x m, m_i = [u_i >= p] / (1 - p);  dx += dy m
Var dropout(Var x, float p, Rng& rng) {
  ENGRAM_CHECK(p >= 0.0f && p < 1.0f, "dropout: probability {} outside [0, 1)", p);
  Graph& g = *x.g;
  if (p == 0.0f) return x;
  const int64_t e = x.numel();
  float* mask = g.arena().floats(e);  // [..] 0 or 1/(1-p)
  const float keep = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < e; ++i) mask[i] = rng.uniform() >= p ? keep : 0.0f;
  Tensor y = g.alloc(x.shape());
  for (int64_t i = 0; i < e; ++i) y.data[i] = x.data()[i] * mask[i];
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const float* mask = static_cast<const float*>(n.aux);
    for (int64_t i = 0, e = n.value.numel(); i < e; ++i) dx[i] += n.grad[i] * mask[i];
  }, {x});
  g.node(v).aux = mask;
  return v;
}

}  // namespace engram::core
