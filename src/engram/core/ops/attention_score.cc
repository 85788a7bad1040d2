// additive_score: forward, backward (dkeys, dquery per row b; dv from per-row partials summed in
// row order, so the result does not depend on the thread count).
#include "engram/core/ops/attention_score.h"

#include <Eigen/Core>

#include <algorithm>

#include "engram/core/error.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core {

namespace {

using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

}  // namespace

Var additive_score(Var keys, Var query, Var v, const int32_t* key_rows, Var extra) {
  const Shape& sk = keys.shape();
  ENGRAM_CHECK(sk.rank() == 3, "additive_score: keys {} must be [B, S, A]", sk);
  const int s = sk[1], a = sk[2];
  const int b = key_rows ? query.shape()[0] : sk[0];  // query rows
  ENGRAM_CHECK(query.shape().rank() == 2 && query.shape()[0] == b && query.shape()[1] == a,
               "additive_score: query {} must be [B={}, A={}]", query.shape(), b, a);
  if (key_rows) {
    ENGRAM_CHECK(!(keys.g->grad_enabled() && (keys.needs_grad() || query.needs_grad() || v.needs_grad())),
                 "additive_score: scores on keys by row index take no gradient (decoding only)");
    for (int i = 0; i < b; ++i)
      ENGRAM_CHECK(key_rows[i] >= 0 && key_rows[i] < sk[0], "additive_score: row {} reads keys row {} of {}", i,
                   key_rows[i], sk[0]);
  }
  ENGRAM_CHECK(!extra.valid() || key_rows, "additive_score: extra key terms come with key_rows");
  ENGRAM_CHECK(!extra.valid() ||
                   (extra.shape() == Shape({b, s, a}) && !(extra.g->grad_enabled() && extra.needs_grad())),
               "additive_score: extra {} must be [B={}, S={}, A={}] without gradient", extra.shape(), b, s, a);
  ENGRAM_CHECK(v.numel() == a && (v.shape().rank() == 1 || (v.shape().rank() == 2 && v.shape()[0] == 1)),
               "additive_score: v {} must be [1, A={}] or [A]", v.shape(), a);
  Graph& g = *keys.g;
  Tensor out = g.alloc({b, s});  // [B, S]
  // The tanh values are kept for the backward pass only when one can follow.
  const bool keep = g.grad_enabled() && (keys.needs_grad() || query.needs_grad() || v.needs_grad());
  float* t = keep ? g.arena().floats(static_cast<size_t>(b) * s * a) : nullptr;  // [B, S, A] tanh values
  const float *pk = keys.data(), *pq = query.data(), *pv = v.data(), *pe = extra.valid() ? extra.data() : nullptr;
  // One item per (row, source position): a few rows (beam search over one sentence) still split evenly.
  kernels::parallel_for(int64_t{b} * s, std::max<int64_t>(1, (int64_t{1} << 15) / a), [&](int64_t p0, int64_t p1) {
    Eigen::ArrayXf scratch(keep ? 0 : a);
    ConstRow vv(pv, a);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t off = p * a, row = p / s;
      const int64_t key_off = key_rows ? (int64_t{key_rows[row]} * s + p % s) * a : off;
      Row tr(keep ? t + off : scratch.data(), a);
      if (pe)
        tr = ((ConstRow(pk + key_off, a) + ConstRow(pe + off, a)) + ConstRow(pq + row * a, a)).tanh();
      else
        tr = (ConstRow(pk + key_off, a) + ConstRow(pq + row * a, a)).tanh();
      out.data[p] = (tr * vv).sum();
    }
  });
  Var y = g.record(out, [](Graph& g, const Node& n) {
    const Tensor& K = g.node(n.in[0]).value;
    const int b = K.shape[0], s = K.shape[1], a = K.shape[2];
    const float* t = static_cast<const float*>(n.aux);
    const float* pv = g.node(n.in[2]).value.data;
    const float* ds = n.grad;  // [B, S]
    float* dk = g.grad(n.in[0]);
    float* dq = g.grad(n.in[1]);
    float* dv = g.grad(n.in[2]);
    // dv partials per row b, summed below in row order.
    float* dv_rows = dv ? g.arena().floats(static_cast<size_t>(b) * a) : nullptr;  // [B, A]
    kernels::parallel_rows(b, int64_t{s} * a, [&](int64_t b0, int64_t b1) {
      Eigen::ArrayXf du(a);
      for (int64_t i = b0; i < b1; ++i) {
        if (dv_rows) Row(dv_rows + i * a, a).setZero();
        for (int j = 0; j < s; ++j) {
          const int64_t off = (i * s + j) * a;
          const float d = ds[i * s + j];
          ConstRow tr(t + off, a);
          if (dk || dq) {
            du = d * ConstRow(pv, a) * (1.0f - tr.square());  // d score / d (keys + query)
            if (dk) Row(dk + off, a) += du;
            if (dq) Row(dq + i * a, a) += du;
          }
          if (dv_rows) Row(dv_rows + i * a, a) += d * tr;
        }
      }
    });
    if (dv)
      for (int i = 0; i < b; ++i) Row(dv, a) += ConstRow(dv_rows + static_cast<int64_t>(i) * a, a);
  }, {keys, query, v});
  if (y.needs_grad()) g.node(y).aux = t;
  return y;
}

}  // namespace engram::core
