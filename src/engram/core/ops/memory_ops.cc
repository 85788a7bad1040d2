// Addressing ops of the NTM / memory networks: cosine similarity (content addressing), circular
// convolution (location shift), L2 normalisation and sharpening. Shape rule + forward +
// accumulating backward side by side.
// Dims: B batch, N memory slots, M slot width, S shift-kernel size, R rows (leading axes flattened).
#include "engram/core/ops/memory_ops.h"

#include <Eigen/Core>

#include <cmath>

#include "engram/core/ops/broadcast.h"

namespace engram::core {

namespace {

using ops_detail::Broadcast;
using ops_detail::for_each_broadcast;
using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

// The shape without its last axis.
Shape leading(const Shape& s) {
  int d[kMaxRank];
  for (int i = 0; i + 1 < s.rank(); ++i) d[i] = s[i];
  return Shape::from(d, d + (s.rank() > 0 ? s.rank() - 1 : 0));
}

// Euclidean norm of each of the `rows` rows of width m.
float* row_norms(Graph& g, const float* x, int64_t rows, int m) {
  float* out = g.arena().floats(rows);
  for (int64_t r = 0; r < rows; ++r) out[r] = ConstRow(x + r * m, m).matrix().norm();
  return out;
}

struct CosineSaved {
  Broadcast bc;   // over the leading (row) shapes of a and b
  float* norm_a;  // [rows of a] |a|
  float* norm_b;  // [rows of b] |b|
};

// o = a.b / (na nb), na = max(|a|, eps);
// da += dy (b / (na nb) - [|a| > eps] o a / na^2), db symmetric
Var cosine_impl(Var a, Var b, const Shape& lead_a, const Shape& lead_b, float eps) {
  Graph& g = *a.g;
  const int m = a.shape().last();
  Broadcast bc = ops_detail::broadcast(lead_a, lead_b);
  float* na = row_norms(g, a.data(), lead_a.numel(), m);
  float* nb = row_norms(g, b.data(), lead_b.numel(), m);
  Tensor y = g.alloc(bc.out);
  const float *pa = a.data(), *pb = b.data();
  for_each_broadcast(bc, [&](int64_t ia, int64_t ib, int64_t io) {
    const float dot = ConstRow(pa + ia * m, m).matrix().dot(ConstRow(pb + ib * m, m).matrix());
    y.data[io] = dot / (std::max(na[ia], eps) * std::max(nb[ib], eps));
  });
  Var v = g.record(y, [](Graph& g, const Node& n) {
    const auto& sv = *static_cast<const CosineSaved*>(n.aux);
    const Tensor& at = g.node(n.in[0]).value;
    const Tensor& bt = g.node(n.in[1]).value;
    const int m = at.shape.last();
    const float eps = n.f[0];
    float* da = g.grad(n.in[0]);
    float* db = g.grad(n.in[1]);
    for_each_broadcast(sv.bc, [&](int64_t ia, int64_t ib, int64_t io) {
      const float dy = n.grad[io], o = n.value.data[io];
      if (dy == 0.0f) return;
      const float na = std::max(sv.norm_a[ia], eps), nb = std::max(sv.norm_b[ib], eps);
      const float inv = dy / (na * nb);
      ConstRow ar(at.data + ia * m, m), br(bt.data + ib * m, m);
      if (da) {
        const float ca = sv.norm_a[ia] > eps ? dy * o / (na * na) : 0.0f;
        Row(da + ia * m, m) += inv * br - ca * ar;
      }
      if (db) {
        const float cb = sv.norm_b[ib] > eps ? dy * o / (nb * nb) : 0.0f;
        Row(db + ib * m, m) += inv * ar - cb * br;
      }
    });
  }, {a, b});
  if (v.needs_grad()) {
    auto* saved = g.arena().array<CosineSaved>(1);
    *saved = {bc, na, nb};
    g.node(v).aux = saved;
    g.node(v).f[0] = eps;
  }
  return v;
}

}  // namespace

Var cosine_similarity(Var a, Var b, float eps) {
  const Shape &sa = a.shape(), &sb = b.shape();
  ENGRAM_CHECK(sa.rank() >= 1 && sb.rank() >= 1 && sa.last() == sb.last(),
               "cosine_similarity: last dims differ: {} vs {}", sa, sb);
  ENGRAM_CHECK(eps > 0.0f, "cosine_similarity: eps {} must be positive", eps);
  return cosine_impl(a, b, leading(sa), leading(sb), eps);  // [broadcast(a[:-1], b[:-1])]
}

Var cosine_rows(Var memory, Var key, float eps) {
  const Shape &sm = memory.shape(), &sk = key.shape();
  ENGRAM_CHECK(sm.rank() == 3 && sk.rank() == 2 && sm[0] == sk[0] && sm[2] == sk[1],
               "cosine_rows: needs memory [B, N, M] and key [B, M], got {} and {}", sm, sk);
  ENGRAM_CHECK(eps > 0.0f, "cosine_rows: eps {} must be positive", eps);
  return cosine_impl(memory, key, Shape{sm[0], sm[1]}, Shape{sk[0], 1}, eps);  // [B, N]
}

// out[i] = sum_j s[j] w[(i - shift_j) mod N], shift_j = j - S/2;
// dw[k] += sum_j s[j] dy[(k + shift_j) mod N];  ds[j] += sum_i dy[i] w[(i - shift_j) mod N]
Var circular_conv(Var w, Var s) {
  const Shape &sw = w.shape(), &ss = s.shape();
  ENGRAM_CHECK(sw.rank() >= 1 && ss.rank() == sw.rank() && leading(sw) == leading(ss),
               "circular_conv: needs w [B, N] and s [B, S] with equal leading dims, got {} and {}", sw, ss);
  const int n = sw.last(), k = ss.last();
  ENGRAM_CHECK(k % 2 == 1 && n >= 1, "circular_conv: shift kernel size {} must be odd (centred on 0), N = {}", k, n);
  Graph& g = *w.g;
  const int64_t rows = sw.rows();
  Tensor y = g.alloc_zero(sw);  // [B, N]
  for (int64_t r = 0; r < rows; ++r) {
    const float* wr = w.data() + r * n;
    const float* sr = s.data() + r * k;
    float* yr = y.data + r * n;
    for (int j = 0; j < k; ++j) {
      const int shift = ((j - k / 2) % n + n) % n;  // in [0, N)
      const float sj = sr[j];
      for (int i = shift; i < n; ++i) yr[i] += sj * wr[i - shift];
      for (int i = 0; i < shift; ++i) yr[i] += sj * wr[i - shift + n];
    }
  }
  return g.record(y, [](Graph& g, const Node& nd) {
    const Tensor& wt = g.node(nd.in[0]).value;
    const Tensor& st = g.node(nd.in[1]).value;
    const int n = wt.shape.last(), k = st.shape.last();
    float* dw = g.grad(nd.in[0]);
    float* ds = g.grad(nd.in[1]);
    for (int64_t r = 0, rows = wt.shape.rows(); r < rows; ++r) {
      const float* wr = wt.data + r * n;
      const float* sr = st.data + r * k;
      const float* dy = nd.grad + r * n;
      for (int j = 0; j < k; ++j) {
        const int shift = ((j - k / 2) % n + n) % n;
        if (dw) {
          float* dwr = dw + r * n;
          const float sj = sr[j];
          for (int i = 0; i < n - shift; ++i) dwr[i] += sj * dy[i + shift];
          for (int i = n - shift; i < n; ++i) dwr[i] += sj * dy[i + shift - n];
        }
        if (ds) {
          float acc = 0.0f;
          for (int i = shift; i < n; ++i) acc += dy[i] * wr[i - shift];
          for (int i = 0; i < shift; ++i) acc += dy[i] * wr[i - shift + n];
          ds[r * k + j] += acc;
        }
      }
    }
  }, {w, s});
}

// y = x / n, n = max(|x|, eps);  dx += (dy - [|x| > eps] y (y.dy)) / n
Var l2_normalize(Var x, float eps) {
  const Shape& sx = x.shape();
  ENGRAM_CHECK(sx.rank() >= 1, "l2_normalize: needs [..., D], got a scalar");
  ENGRAM_CHECK(eps > 0.0f, "l2_normalize: eps {} must be positive", eps);
  Graph& g = *x.g;
  const int d = sx.last();
  const int64_t rows = sx.rows();
  float* norms = row_norms(g, x.data(), rows, d);  // [R]
  Tensor y = g.alloc(sx);
  for (int64_t r = 0; r < rows; ++r)
    Row(y.data + r * d, d) = ConstRow(x.data() + r * d, d) / std::max(norms[r], eps);
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const float* norms = static_cast<const float*>(n.aux);
    const float eps = n.f[0];
    const int d = n.value.shape.last();
    for (int64_t r = 0, rows = n.value.shape.rows(); r < rows; ++r) {
      ConstRow yr(n.value.data + r * d, d), dyr(n.grad + r * d, d);
      const float inv = 1.0f / std::max(norms[r], eps);
      const float dot = norms[r] > eps ? (yr * dyr).sum() : 0.0f;
      Row(dx + r * d, d) += inv * (dyr - dot * yr);
    }
  }, {x});
  g.node(v).aux = norms;
  g.node(v).f[0] = eps;
  return v;
}

// y = softmax(l), l = gamma log(w + eps);  dl = y (dy - y.dy);
// dw += dl gamma / (w + eps);  dgamma += sum_i dl_i log(w_i + eps)
Var sharpen(Var w, Var gamma, float eps) {
  const Shape &sw = w.shape(), &sg = gamma.shape();
  ENGRAM_CHECK(sw.rank() >= 1 && sg.numel() == sw.rows(),
               "sharpen: needs w [B, N] and gamma [B, 1] (one per row), got {} and {}", sw, sg);
  ENGRAM_CHECK(eps > 0.0f, "sharpen: eps {} must be positive", eps);
  Graph& g = *w.g;
  const int n = sw.last();
  const int64_t rows = sw.rows();
  Tensor y = g.alloc(sw);  // [B, N]
  for (int64_t r = 0; r < rows; ++r) {
    ConstRow wr(w.data() + r * n, n);
    ENGRAM_CHECK((wr >= 0.0f).all(), "sharpen: row {} of w {} has a negative or NaN weight", r, sw);
    Row yr(y.data + r * n, n);
    yr = gamma.data()[r] * (wr + eps).log();
    yr = (yr - yr.maxCoeff()).exp();
    yr *= 1.0f / yr.sum();
  }
  Var v = g.record(y, [](Graph& g, const Node& nd) {
    const Tensor& wt = g.node(nd.in[0]).value;
    const float* gam = g.node(nd.in[1]).value.data;
    float* dw = g.grad(nd.in[0]);
    float* dg = g.grad(nd.in[1]);
    const float eps = nd.f[0];
    const int n = wt.shape.last();
    for (int64_t r = 0, rows = wt.shape.rows(); r < rows; ++r) {
      ConstRow yr(nd.value.data + r * n, n), dyr(nd.grad + r * n, n), wr(wt.data + r * n, n);
      const auto dl = yr * (dyr - (yr * dyr).sum());  // [N], an unevaluated expression
      if (dw) Row(dw + r * n, n) += dl * gam[r] / (wr + eps);
      if (dg) dg[r] += (dl * (wr + eps).log()).sum();
    }
  }, {w, gamma});
  g.node(v).f[0] = eps;
  return v;
}

}  // namespace engram::core
