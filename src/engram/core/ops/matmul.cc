// matmul / affine / bmm: shape rules, sgemm forward, accumulating sgemm backward (beta = 1).
#include "engram/core/ops/matmul.h"

#include <algorithm>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core {

using kernels::sgemm;

// C = op(A) op(B).  dA += dC op(B)^T (or its transpose), dB += op(A)^T dC (or its transpose).
Var matmul(Var a, Var b, bool ta, bool tb) {
  const Shape &sa = a.shape(), &sb = b.shape();
  ENGRAM_CHECK(sa.rank() == 2 && sb.rank() == 2, "matmul needs rank-2 inputs, got {} and {}", sa, sb);
  const int m = ta ? sa[1] : sa[0], k = ta ? sa[0] : sa[1];
  const int kb = tb ? sb[1] : sb[0], n = tb ? sb[0] : sb[1];
  ENGRAM_CHECK(k == kb, "matmul inner dims differ: {}{} x {}{}", sa, ta ? "^T" : "", sb, tb ? "^T" : "");
  Graph& g = *a.g;
  Tensor c = g.alloc({m, n});
  sgemm(ta, tb, m, n, k, 1.0f, a.data(), sa[1], b.data(), sb[1], 0.0f, c.data, n);
  Var v = g.record(c, [](Graph& g, const Node& nd) {
    const Tensor& A = g.node(nd.in[0]).value;
    const Tensor& B = g.node(nd.in[1]).value;
    const bool ta = nd.i[0], tb = nd.i[1];
    const int m = nd.value.shape[0], n = nd.value.shape[1], k = ta ? A.shape[0] : A.shape[1];
    if (float* da = g.grad(nd.in[0])) {
      if (!ta)  // dA [m,k] += dC [m,n] op(B)^T
        sgemm(false, !tb, m, k, n, 1.0f, nd.grad, n, B.data, B.shape[1], 1.0f, da, k);
      else      // dA [k,m] += op(B) [k,n] dC^T
        sgemm(tb, true, k, m, n, 1.0f, B.data, B.shape[1], nd.grad, n, 1.0f, da, m);
    }
    if (float* db = g.grad(nd.in[1])) {
      if (!tb)  // dB [k,n] += op(A)^T dC
        sgemm(!ta, false, k, n, m, 1.0f, A.data, A.shape[1], nd.grad, n, 1.0f, db, n);
      else      // dB [n,k] += dC^T op(A)
        sgemm(true, ta, n, k, m, 1.0f, nd.grad, n, A.data, A.shape[1], 1.0f, db, k);
    }
  }, {a, b});
  g.node(v).i[0] = ta;
  g.node(v).i[1] = tb;
  return v;
}

// y [R, N] = x [R, K] w^T + bias.  dx += dy w;  dw += dy^T x;  dbias += sum_r dy
Var affine(Var x, Var w, Var bias) {
  const Shape &sx = x.shape(), &sw = w.shape();
  ENGRAM_CHECK(sw.rank() == 2 && sx.rank() >= 1 && sx.last() == sw[1],
               "affine: x {} does not match weight {} (expects [..., K] and [N, K])", sx, sw);
  const int k = sw[1], n = sw[0];
  const int r = static_cast<int>(sx.rows());
  if (bias.valid())
    ENGRAM_CHECK(bias.numel() == n, "affine: bias {} does not match weight {}", bias.shape(), sw);
  Graph& g = *x.g;
  Shape so = sx;
  so[so.rank() - 1] = n;
  Tensor y = g.alloc(so);
  weight_product(g, r, n, k, x.data(), w.data(), 0.0f, y.data, bias.valid() ? bias.data() : nullptr);
  BackwardFn fn = [](Graph& g, const Node& nd) {
    const Tensor& X = g.node(nd.in[0]).value;
    const Tensor& W = g.node(nd.in[1]).value;
    const int n = W.shape[0], k = W.shape[1], r = static_cast<int>(X.shape.rows());
    if (float* dx = g.grad(nd.in[0])) sgemm(false, false, r, k, n, 1.0f, nd.grad, n, W.data, k, 1.0f, dx, k);
    g.weight_grad(nd.in[1], n, k, r, nd.grad, n, X.data, k);  // dw += dy^T x
    if (float* db = g.grad(nd.in[2]))
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < n; ++j) db[j] += nd.grad[static_cast<int64_t>(i) * n + j];
  };
  return bias.valid() ? g.record(y, fn, {x, w, bias}) : g.record(y, fn, {x, w});
}

// Batched: C[i] = op(A[i]) op(B[i]) for i < Bt.
Var bmm(Var a, Var b, bool ta, bool tb, const int32_t* b_batch) {
  const Shape &sa = a.shape(), &sb = b.shape();
  ENGRAM_CHECK(sa.rank() == 3 && sb.rank() == 3 && (b_batch || sa[0] == sb[0]),
               "bmm needs [Bt, M, K] and [Bt, K, N], got {} and {}", sa, sb);
  const int bt = sa[0];
  if (b_batch) {
    ENGRAM_CHECK(!(a.g->grad_enabled() && (a.needs_grad() || b.needs_grad())),
                 "bmm: products on b's matrices by index take no gradient (decoding only)");
    for (int i = 0; i < bt; ++i)
      ENGRAM_CHECK(b_batch[i] >= 0 && b_batch[i] < sb[0], "bmm: product {} takes b's matrix {} of {}", i, b_batch[i],
                   sb[0]);
  }
  const int m = ta ? sa[2] : sa[1], k = ta ? sa[1] : sa[2];
  const int kb = tb ? sb[2] : sb[1], n = tb ? sb[1] : sb[2];
  ENGRAM_CHECK(k == kb, "bmm inner dims differ: {} x {}", sa, sb);
  Graph& g = *a.g;
  Tensor c = g.alloc({bt, m, n});
  const int64_t a_step = static_cast<int64_t>(sa[1]) * sa[2], b_step = static_cast<int64_t>(sb[1]) * sb[2];
  // The Bt products are independent: split over the thread team (each then single-threaded).
  const float *pa = a.data(), *pb = b.data();
  kernels::parallel_rows(bt, static_cast<int64_t>(m) * n * k, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      sgemm(ta, tb, m, n, k, 1.0f, pa + i * a_step, sa[2], pb + (b_batch ? b_batch[i] : i) * b_step, sb[2], 0.0f,
            c.data + i * m * n, n);
  });
  Var v = g.record(c, [](Graph& g, const Node& nd) {
    const Tensor& A = g.node(nd.in[0]).value;
    const Tensor& B = g.node(nd.in[1]).value;
    const bool ta = nd.i[0], tb = nd.i[1];
    const int bt = A.shape[0], m = nd.value.shape[1], n = nd.value.shape[2];
    const int k = ta ? A.shape[1] : A.shape[2];
    const int64_t a_step = static_cast<int64_t>(A.shape[1]) * A.shape[2];
    const int64_t b_step = static_cast<int64_t>(B.shape[1]) * B.shape[2];
    const int lda = A.shape[2], ldb = B.shape[2];
    float* da = g.grad(nd.in[0]);
    float* db = g.grad(nd.in[1]);
    kernels::parallel_rows(bt, static_cast<int64_t>(m) * n * k, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const float* dc = nd.grad + i * m * n;
        const float* Ai = A.data + i * a_step;
        const float* Bi = B.data + i * b_step;
        if (da) {
          if (!ta) sgemm(false, !tb, m, k, n, 1.0f, dc, n, Bi, ldb, 1.0f, da + i * a_step, lda);
          else sgemm(tb, true, k, m, n, 1.0f, Bi, ldb, dc, n, 1.0f, da + i * a_step, lda);
        }
        if (db) {
          if (!tb) sgemm(!ta, false, k, n, m, 1.0f, Ai, lda, dc, n, 1.0f, db + i * b_step, ldb);
          else sgemm(true, ta, n, k, m, 1.0f, dc, n, Ai, lda, 1.0f, db + i * b_step, ldb);
        }
      }
    });
  }, {a, b});
  g.node(v).i[0] = ta;
  g.node(v).i[1] = tb;
  return v;
}

void weight_product(const Graph& g, int rows, int n, int k, const float* x, const float* w, float beta, float* y,
                    const float* bias) {
  ENGRAM_CHECK(!bias || beta == 0.0f, "weight_product: a bias replaces beta * y (beta {} must be 0)", beta);
  if (const int8_t* wq = g.int8_packed(w, n, k)) {
    kernels::gemm_int8_packed(rows, n, k, x, k, wq, beta, y, n, bias);  // bias in its epilogue
    return;
  }
  if (const uint16_t* wb = g.bf16_weight(w)) {
    bf16_weight_product(rows, n, k, x, wb, g.bf16_packed(w, n, k), beta, y, bias);
    return;
  }
  if (const float* wf = rows <= kernels::kPackedRows ? g.f32_packed(w, n, k) : nullptr) {
    kernels::sgemm_small_m_packed(rows, n, k, 1.0f, x, k, wf, beta, y, n, bias);
    return;
  }
  if (bias) {  // y = bias, then the product accumulates onto it
    for (int i = 0; i < rows; ++i) std::copy(bias, bias + n, y + static_cast<int64_t>(i) * n);
    beta = 1.0f;
  }
  sgemm(false, true, rows, n, k, 1.0f, x, k, w, k, beta, y, n);
}

void bf16_weight_product(int rows, int n, int k, const float* x, const uint16_t* wb, const uint16_t* packed,
                         float beta, float* y, const float* bias) {
  ENGRAM_CHECK(!bias || beta == 0.0f, "weight_product: a bias replaces beta * y (beta {} must be 0)", beta);
  if (packed && rows <= kernels::kSmallRows) {
    kernels::gemm_small_m_bf16_packed(rows, n, k, 1.0f, x, k, packed, beta, y, n, bias);  // bias in its epilogue
    return;
  }
  const uint16_t* wd = rows > kernels::kSmallRows ? kernels::packed_bf16_dnnl(packed, n, k) : nullptr;
  if (wd) {
    kernels::gemm_bf16_reordered(rows, n, k, x, k, wb, k, wd, beta, y, n, bias);  // bias in the primitive
    return;
  }
  if (bias) {  // y = bias, then the product accumulates onto it
    for (int i = 0; i < rows; ++i) std::copy(bias, bias + n, y + static_cast<int64_t>(i) * n);
    beta = 1.0f;
  }
  if (rows <= kernels::kSmallRows)
    kernels::gemm_small_m_bf16(rows, n, k, 1.0f, x, k, wb, k, beta, y, n);
  else
    kernels::gemm_bf16(rows, n, k, x, k, wb, k, beta, y, n);
}

}  // namespace engram::core
