// Fused NTM ops: shape rule + forward + accumulating backward side by side. Row kernels work on
// one batch row at a time through Eigen maps (the slot loops vectorise), and keep the
// intermediates of the addressing chain in the arena for backward.
// Dims: B batch, N memory slots, M slot width, S shift-kernel size, P = M + S + 3.
#include "engram/core/ops/ntm_ops.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>

namespace engram::core {

namespace {

using Arr = Eigen::Map<Eigen::ArrayXf>;
using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
using Vec = Eigen::Map<Eigen::VectorXf>;
using ConstVec = Eigen::Map<const Eigen::VectorXf>;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Mat = Eigen::Map<RowMat>;
using ConstMat = Eigen::Map<const RowMat>;

float softplus1(float v) { return std::max(v, 0.0f) + std::log1p(std::exp(-std::fabs(v))); }
float sigmoid1(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Slot shift of kernel entry j: j - S/2, wrapped into [0, N).
int wrap_shift(int j, int s, int n) { return ((j - s / 2) % n + n) % n; }

// What ntm_address keeps for backward, each [B, ...] row-major in the arena.
struct AddressSaved {
  int n, m, s;
  float* act;       // [B, S + 3]: beta, g, gamma, s (S)
  float* sim;       // [B, N] cosine similarities K
  float* mem_norm;  // [B, N] |memory_i|
  float* key_norm;  // [B]
  float* wc;        // [B, N] content weighting
  float* wg;        // [B, N] interpolated
  float* ws;        // [B, N] shifted
};

// out[i] = sum_j s[j] in[(i - shift_j) mod N]
void conv_row(const float* in, const float* s, float* out, int n, int k) {
  std::fill(out, out + n, 0.0f);
  for (int j = 0; j < k; ++j) {
    const int shift = wrap_shift(j, k, n);
    const float sj = s[j];
    for (int i = shift; i < n; ++i) out[i] += sj * in[i - shift];
    for (int i = 0; i < shift; ++i) out[i] += sj * in[i - shift + n];
  }
}

// d += ax x + ay y over m values (distinct buffers, so the loop vectorises).
void add_scaled_pair(float* __restrict d, const float* __restrict x, float ax, const float* __restrict y, float ay,
                     int m) {
  for (int j = 0; j < m; ++j) d[j] += ax * x[j] + ay * y[j];
}

// One row of the forward; writes w and the saved intermediates of row b.
void address_row(const AddressSaved& sv, int64_t b, const float* mem, const float* head, const float* w_prev,
                 float* w, float* tmp) {
  const int n = sv.n, m = sv.m, k = sv.s;
  float* act = sv.act + b * (k + 3);
  const float beta = softplus1(head[m]);
  const float gate = sigmoid1(head[m + 1]);
  const float gamma = 1.0f + softplus1(head[m + 2 + k]);
  act[0] = beta, act[1] = gate, act[2] = gamma;
  Arr s(act + 3, k);
  s = ConstArr(head + m + 2, k);
  s = (s - s.maxCoeff()).exp();
  s *= 1.0f / s.sum();
  // content: K_i = mem_i . key / (max(|mem_i|, eps) max(|key|, eps)); wc = softmax(beta K)
  ConstMat mm(mem, n, m);
  ConstVec key(head, m);
  Arr sim(sv.sim + b * n, n), mn(sv.mem_norm + b * n, n);
  // |mem_i|^2 as a GEMV of the squared rows with ones: vectorises across slots, where a per-row
  // reduction over M ~ 20 would not. `tmp` has room for N M + M floats.
  float *sq = tmp, *ones = tmp + static_cast<int64_t>(n) * m;
  for (int64_t q = 0, nm = static_cast<int64_t>(n) * m; q < nm; ++q) sq[q] = mem[q] * mem[q];
  std::fill(ones, ones + m, 1.0f);
  Vec(sv.mem_norm + b * n, n).noalias() = ConstMat(sq, n, m) * ConstVec(ones, m);
  mn = mn.sqrt();
  const float kn = key.norm();
  sv.key_norm[b] = kn;
  Vec(sv.sim + b * n, n).noalias() = mm * key;
  sim /= mn.max(kNtmCosineEps) * std::max(kn, kNtmCosineEps);
  Arr wc(sv.wc + b * n, n);
  wc = beta * sim;
  wc = (wc - wc.maxCoeff()).exp();
  wc *= 1.0f / wc.sum();
  // interpolation, shift, sharpening
  Arr wg(sv.wg + b * n, n);
  wg = gate * wc + (1.0f - gate) * ConstArr(w_prev, n);
  float* ws = sv.ws + b * n;
  conv_row(wg.data(), act + 3, ws, n, k);
  Arr wr(w, n);
  wr = gamma * (ConstArr(ws, n) + kNtmSharpenEps).log();
  wr = (wr - wr.maxCoeff()).exp();
  wr *= 1.0f / wr.sum();
}

// Backward of one row: dw [N] -> accumulates into dmem [N, M], dhead [P], dprev [N] (each may be
// null). `tmp` has room for 5N + S floats (no allocation here).
void address_row_backward(const AddressSaved& sv, int64_t b, const float* mem, const float* head,
                          const float* w_prev, const float* w, const float* dw, float* dmem, float* dhead,
                          float* dprev, float* tmp) {
  const int n = sv.n, m = sv.m, k = sv.s;
  const float* act = sv.act + b * (k + 3);
  const float beta = act[0], gate = act[1], gamma = act[2];
  const float* s = act + 3;
  ConstArr wr(w, n), dwr(dw, n), ws(sv.ws + b * n, n), wg(sv.wg + b * n, n), wc(sv.wc + b * n, n);
  ConstArr sim(sv.sim + b * n, n), mn(sv.mem_norm + b * n, n);
  Arr dws(tmp, n), dwg(tmp + n, n), dl(tmp + 2 * n, n), dk(tmp + 3 * n, n), inv(tmp + 4 * n, n);
  Arr ds(tmp + 5 * n, k);
  // sharpening: l = gamma log(ws + eps), w = softmax(l)
  dl = wr * (dwr - (wr * dwr).sum());
  dws = dl * gamma / (ws + kNtmSharpenEps);
  const float dgamma = (dl * (ws + kNtmSharpenEps).log()).sum();
  // circular convolution: dwg[i] = sum_j s_j dws[(i + shift_j) mod N]; ds_j = sum_i dws_i wg[i - shift_j]
  dwg.setZero();
  for (int j = 0; j < k; ++j) {
    const int shift = wrap_shift(j, k, n);
    const float sj = s[j];
    float acc = 0.0f;
    for (int i = 0; i < n - shift; ++i) dwg[i] += sj * dws[i + shift];
    for (int i = n - shift; i < n; ++i) dwg[i] += sj * dws[i + shift - n];
    for (int i = shift; i < n; ++i) acc += dws[i] * wg[i - shift];
    for (int i = 0; i < shift; ++i) acc += dws[i] * wg[i - shift + n];
    ds[j] = acc;
  }
  // interpolation: wg = g wc + (1 - g) w_prev
  const float dgate = (dwg * (wc - ConstArr(w_prev, n))).sum();
  if (dprev) Arr(dprev, n) += (1.0f - gate) * dwg;
  // content: wc = softmax(z), z = beta K;  dwc = g dwg;  dz = wc (dwc - wc.dwc)
  const float wc_dwc = gate * (wc * dwg).sum();
  dl = wc * (gate * dwg - wc_dwc);  // dz (dl is free again)
  const float dbeta = (dl * sim).sum();
  if (dhead) {
    ConstArr sa(s, k);
    Arr(dhead + m + 2, k) += sa * (ds - (sa * ds).sum());
    dhead[m] += dbeta * sigmoid1(head[m]);
    dhead[m + 1] += dgate * gate * (1.0f - gate);
    dhead[m + 2 + k] += dgamma * sigmoid1(head[m + 2 + k]);
  }
  // cosine: dK = beta dz, na = max(|mem_i|, eps), nb = max(|key|, eps);
  //   dmem_i += dK_i key / (na nb) - [|mem_i| > eps] dK_i K_i mem_i / na^2
  //   dkey   += sum_i dK_i mem_i / (na nb) - [|key| > eps] (sum_i dK_i K_i) key / nb^2
  const float kn = sv.key_norm[b], nb = std::max(kn, kNtmCosineEps);
  dk = beta * dl;
  inv = dk / (mn.max(kNtmCosineEps) * nb);
  if (dmem) {
    const float* key = head;
    for (int i = 0; i < n; ++i) {
      const float na = std::max(mn[i], kNtmCosineEps);
      const float self = mn[i] > kNtmCosineEps ? dk[i] * sim[i] / (na * na) : 0.0f;
      add_scaled_pair(dmem + static_cast<int64_t>(i) * m, key, inv[i], mem + static_cast<int64_t>(i) * m, -self, m);
    }
  }
  if (dhead) {
    Vec dkey(dhead, m);
    dkey.noalias() += ConstMat(mem, n, m).transpose() * Vec(inv.data(), n);
    if (kn > kNtmCosineEps) dkey -= ((dk * sim).sum() / (nb * nb)) * ConstVec(head, m);
  }
}

}  // namespace

Var ntm_address(Var memory, Var head, Var w_prev) {
  const Shape &sm = memory.shape(), &sh = head.shape(), &sw = w_prev.shape();
  ENGRAM_CHECK(sm.rank() == 3 && sh.rank() == 2 && sw.rank() == 2 && sh[0] == sm[0] && sw[0] == sm[0] &&
                   sw[1] == sm[1],
               "ntm_address: needs memory [B, N, M], head [B, M + S + 3], w_prev [B, N]; got {}, {}, {}", sm, sh,
               sw);
  const int b = sm[0], n = sm[1], m = sm[2], k = sh[1] - m - 3;
  ENGRAM_CHECK(k >= 1 && k % 2 == 1, "ntm_address: head width {} leaves a shift kernel of {} for slot width {} "
               "(need an odd size >= 1)", sh[1], k, m);
  Graph& g = *memory.g;
  auto* sv = g.arena().array<AddressSaved>(1);
  sv->n = n, sv->m = m, sv->s = k;
  float* buf = g.arena().floats(static_cast<size_t>(b) * (5 * n + k + 4));
  sv->act = buf;
  sv->sim = sv->act + b * (k + 3);
  sv->mem_norm = sv->sim + b * n;
  sv->wc = sv->mem_norm + b * n;
  sv->wg = sv->wc + b * n;
  sv->ws = sv->wg + b * n;
  sv->key_norm = sv->ws + b * n;
  Tensor y = g.alloc({b, n});
  const float* pw = w_prev.data();
  float* tmp = g.arena().floats(static_cast<size_t>(n) * m + m);
  for (int r = 0; r < b; ++r) {
    ENGRAM_CHECK((ConstArr(pw + static_cast<int64_t>(r) * n, n) >= 0.0f).all(),
                 "ntm_address: row {} of w_prev {} has a negative or NaN weight", r, sw);
    address_row(*sv, r, memory.data() + static_cast<int64_t>(r) * n * m, head.data() + static_cast<int64_t>(r) * sh[1],
                pw + static_cast<int64_t>(r) * n, y.data + static_cast<int64_t>(r) * n, tmp);
  }
  Var v = g.record(y, [](Graph& g, const Node& nd) {
    const auto& sv = *static_cast<const AddressSaved*>(nd.aux);
    const Tensor& mem = g.node(nd.in[0]).value;
    const Tensor& head = g.node(nd.in[1]).value;
    const Tensor& prev = g.node(nd.in[2]).value;
    float* dmem = g.grad(nd.in[0]);
    float* dhead = g.grad(nd.in[1]);
    float* dprev = g.grad(nd.in[2]);
    const int n = sv.n, m = sv.m, p = head.shape[1];
    float* tmp = g.arena().floats(5 * n + sv.s);
    for (int64_t r = 0, rows = mem.shape[0]; r < rows; ++r)
      address_row_backward(sv, r, mem.data + r * n * m, head.data + r * p, prev.data + r * n,
                           nd.value.data + r * n, nd.grad + r * n, dmem ? dmem + r * n * m : nullptr,
                           dhead ? dhead + r * p : nullptr, dprev ? dprev + r * n : nullptr, tmp);
  }, {memory, head, w_prev});
  g.node(v).aux = sv;
  return v;
}

// r = M^T w;  dw += M dr;  dM += w dr^T
Var memory_read(Var w, Var memory) {
  const Shape &sw = w.shape(), &sm = memory.shape();
  ENGRAM_CHECK(sm.rank() == 3 && sw.rank() == 2 && sw[0] == sm[0] && sw[1] == sm[1],
               "memory_read: needs w [B, N] and memory [B, N, M], got {} and {}", sw, sm);
  const int b = sm[0], n = sm[1], m = sm[2];
  Graph& g = *w.g;
  Tensor y = g.alloc({b, m});
  for (int r = 0; r < b; ++r)
    Vec(y.data + static_cast<int64_t>(r) * m, m).noalias() =
        ConstMat(memory.data() + static_cast<int64_t>(r) * n * m, n, m).transpose() *
        ConstVec(w.data() + static_cast<int64_t>(r) * n, n);
  return g.record(y, [](Graph& g, const Node& nd) {
    const Tensor& wt = g.node(nd.in[0]).value;
    const Tensor& mt = g.node(nd.in[1]).value;
    const int n = mt.shape[1], m = mt.shape[2];
    float* dw = g.grad(nd.in[0]);
    float* dm = g.grad(nd.in[1]);
    for (int64_t r = 0, rows = mt.shape[0]; r < rows; ++r) {
      ConstVec dr(nd.grad + r * m, m);
      if (dw) Vec(dw + r * n, n).noalias() += ConstMat(mt.data + r * n * m, n, m) * dr;
      if (dm) Mat(dm + r * n * m, n, m).noalias() += ConstVec(wt.data + r * n, n) * dr.transpose();
    }
  }, {w, memory});
}

namespace {

// One slot i of the write's backward (distinct buffers, so the loops vectorise):
// dmem_i += dy (1 - w_i e);  t_i = dy (a - m_i e);  de -= w_i dy m_i;  da += w_i dy.
void write_backward_slot(float wi, const float* __restrict dy, const float* __restrict mi, const float* __restrict e,
                         const float* __restrict a, float* __restrict dmi, float* __restrict ti,
                         float* __restrict de, float* __restrict da, int m) {
  if (dmi)
    for (int j = 0; j < m; ++j) dmi[j] += dy[j] * (1.0f - wi * e[j]);
  for (int j = 0; j < m; ++j) {
    ti[j] = dy[j] * (a[j] - mi[j] * e[j]);
    de[j] -= wi * dy[j] * mi[j];
    da[j] += wi * dy[j];
  }
}

}  // namespace

// Y = M o (1 - w e^T) + w a^T;  dM += dY o (1 - w e^T);  dw += (dY o (1 a^T - M o 1 e^T)) 1;
// de -= (dY o M)^T w;  da += dY^T w.   (Terms of an absent erase / add are zero.)
Var memory_write(Var memory, Var w, Var erase, Var add) {
  const Shape &sm = memory.shape(), &sw = w.shape();
  ENGRAM_CHECK(sm.rank() == 3 && sw.rank() == 2 && sw[0] == sm[0] && sw[1] == sm[1],
               "memory_write: needs memory [B, N, M] and w [B, N], got {} and {}", sm, sw);
  const int b = sm[0], n = sm[1], m = sm[2];
  const Shape vec{b, m};
  ENGRAM_CHECK(!erase.valid() || erase.shape() == vec, "memory_write: erase must be {}, got {}", vec, erase.shape());
  ENGRAM_CHECK(!add.valid() || add.shape() == vec, "memory_write: add must be {}, got {}", vec, add.shape());
  ENGRAM_CHECK(erase.valid() || add.valid(), "memory_write: needs an erase or an add vector");
  Graph& g = *memory.g;
  Tensor y = g.alloc(sm);
  const float *pm = memory.data(), *pw = w.data();
  float* zeros = g.arena().floats(m);  // [M] stands in for an absent erase / add
  std::fill(zeros, zeros + m, 0.0f);
  // Plain loops over the slot width: they vectorise without Eigen's per-row alignment peeling,
  // which dominates at M ~ 20.
  for (int r = 0; r < b; ++r) {
    const float* e = erase.valid() ? erase.data() + static_cast<int64_t>(r) * m : zeros;
    const float* a = add.valid() ? add.data() + static_cast<int64_t>(r) * m : zeros;
    for (int i = 0; i < n; ++i) {
      const int64_t off = (static_cast<int64_t>(r) * n + i) * m;
      const float wi = pw[static_cast<int64_t>(r) * n + i];
      const float* mi = pm + off;
      float* yi = y.data + off;
      for (int j = 0; j < m; ++j) yi[j] = mi[j] * (1.0f - wi * e[j]) + wi * a[j];
    }
  }
  BackwardFn fn = [](Graph& g, const Node& nd) {
    const Tensor& mt = g.node(nd.in[0]).value;
    const float* pw = g.node(nd.in[1]).value.data;
    const int e_id = nd.i[0], a_id = nd.i[1];
    const int n = mt.shape[1], m = mt.shape[2];
    float* dmem = g.grad(nd.in[0]);
    float* dw = g.grad(nd.in[1]);
    float* de = g.grad(e_id);
    float* da = g.grad(a_id);
    // Scratch: zeros for an absent input's values, sinks for gradients nobody needs, and
    // t [N, M] = dY o (a - M o e), whose row sums are dw (one GEMV with a ones vector).
    float* scratch = g.arena().floats(static_cast<size_t>(4 * m + n * m));
    float *zeros = scratch, *ones = scratch + m, *sink_e = scratch + 2 * m, *sink_a = scratch + 3 * m;
    float* t = scratch + 4 * m;
    std::fill(zeros, zeros + m, 0.0f);
    std::fill(ones, ones + m, 1.0f);
    for (int64_t r = 0, rows = mt.shape[0]; r < rows; ++r) {
      const float* e = e_id >= 0 ? g.node(e_id).value.data + r * m : zeros;
      const float* a = a_id >= 0 ? g.node(a_id).value.data + r * m : zeros;
      float* der = de ? de + r * m : sink_e;
      float* dar = da ? da + r * m : sink_a;
      for (int i = 0; i < n; ++i) {
        const int64_t off = (r * n + i) * m;
        write_backward_slot(pw[r * n + i], nd.grad + off, mt.data + off, e, a, dmem ? dmem + off : nullptr,
                            t + static_cast<int64_t>(i) * m, der, dar, m);
      }
      if (dw) Vec(dw + r * n, n).noalias() += ConstMat(t, n, m) * ConstVec(ones, m);
    }
  };
  Var v = erase.valid() && add.valid() ? g.record(y, fn, {memory, w, erase, add})
          : erase.valid()              ? g.record(y, fn, {memory, w, erase})
                                       : g.record(y, fn, {memory, w, add});
  g.node(v).i[0] = erase.valid() ? erase.id : -1;
  g.node(v).i[1] = add.valid() ? add.id : -1;
  return v;
}

}  // namespace engram::core
