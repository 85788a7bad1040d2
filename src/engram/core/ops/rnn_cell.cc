// Fused LSTM / GRU cell steps (one tape node per step) and their composed references built only
// from other ops. Dims: B batch, H hidden, G gates (4H LSTM, 3H GRU).
//
// Fused LSTM node: value [2, B, H] = (h' | c'), two contiguous [B, H] halves. lstm_cell returns
// h' and c' as zero-copy view nodes whose data points into that value and whose gradient buffer
// ALIASES the matching half of the fused node's gradient (allocated when the views are made), so
// consumers of h' and c' accumulate straight into the fused node: the views need no backward.
// Saved for backward (arena, Node::aux): activated gates [B, 4H] and tanh(c') [B, H].
// Fused GRU node: value h' [B, H]; saved r, z, hn = h W_hn^T + b_hn [B, 3H] and n [B, H].
// Inputs beyond Node::in[3] (w_hh, b_hh) are kept as node ids in Node::i[0], i[1] (-1 = none).
#include "engram/core/ops/rnn_cell.h"

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"
#include "engram/core/kernels/rnn.h"
#include "engram/core/ops/elementwise.h"
#include "engram/core/ops/matmul.h"
#include "engram/core/ops/shape_ops.h"

namespace engram::core {

namespace {

using kernels::sgemm;
// Shape checks shared by both cells: xw [B, G], h [B, H], w_hh [G, H], b_hh [G] with G = k H.
void check_cell(const char* name, int k, Var xw, Var h, Var w_hh, Var b_hh) {
  const Shape &sx = xw.shape(), &sh = h.shape(), &sw = w_hh.shape();
  ENGRAM_CHECK(sh.rank() == 2, "{}: h must be [B, H], got {}", name, sh);
  const int b = sh[0], hid = sh[1];
  ENGRAM_CHECK(sx.rank() == 2 && sx[0] == b && sx[1] == k * hid, "{}: xw {} must be [B, {}H] = [{}, {}]", name, sx,
               k, b, k * hid);
  ENGRAM_CHECK(sw.rank() == 2 && sw[0] == k * hid && sw[1] == hid, "{}: w_hh {} must be [{}, {}]", name, sw, k * hid,
               hid);
  if (b_hh.valid())
    ENGRAM_CHECK(b_hh.numel() == k * hid, "{}: b_hh {} must have {} elements", name, b_hh.shape(), k * hid);
}

// A zero-copy view of `numel(shape)` values of `parent` starting at `offset` (Graph::view: the
// gradient aliases the parent's, so gradients reaching the view land in the parent directly).
Var alias_view(Graph& g, Var parent, int64_t offset, Shape shape) { return g.view(parent, offset, shape); }

// ---- LSTM

// Backward of the fused LSTM step. With tc = tanh(c'):
//   do = dh' tc;  dc~ = dc' + dh' o (1 - tc^2);  di = dc~ g;  df = dc~ c;  dg = dc~ i;  dc += dc~ f
//   da = (di i(1-i), df f(1-f), dg (1-g^2), do o(1-o))            [B, 4H] pre-activation grads
//   dxw += da;  db_hh += sum_b da;  dh += da W_hh;  dW_hh += da^T h
void lstm_backward(Graph& g, const Node& n) {
  const int b = n.value.shape[1], hid = n.value.shape[2], gw = 4 * hid;
  const int64_t bh = static_cast<int64_t>(b) * hid;
  const float* act = static_cast<const float*>(n.aux);  // [B, 4H] i, f, g, o
  const float* tcs = act + bh * 4;                        // [B, H] tanh(c')
  const float* c_prev = g.node(n.in[2]).value.data;       // [B, H]
  const float* dh_out = n.grad;                           // [B, H]
  const float* dc_out = n.grad + bh;                      // [B, H]
  float* dxw = g.grad(n.in[0]);
  float* dh = g.grad(n.in[1]);
  float* dc = g.grad(n.in[2]);
  float* db = g.grad(n.i[1]);
  float* da = g.arena().floats(bh * 4);  // [B, 4H]
  kernels::parallel_rows(b, gw, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t rh = r * hid, rg = r * gw;
      float* d = da + rg;
      kernels::lstm_backward_row(act + rg, tcs + rh, c_prev + rh, dh_out + rh, dc_out + rh, d,
                                 dc ? dc + rh : nullptr, hid);
      if (dxw)
        for (int j = 0; j < gw; ++j) dxw[rg + j] += d[j];
    }
  });
  if (db)  // summed in row order: the same whatever the thread count
    for (int r = 0; r < b; ++r)
      for (int j = 0; j < gw; ++j) db[j] += da[static_cast<int64_t>(r) * gw + j];
  if (dh) {  // dh [B, H] += da [B, 4H] W_hh [4H, H]
    const float* w = g.node(n.i[0]).value.data;
    sgemm(false, false, b, hid, gw, 1.0f, da, gw, w, hid, 1.0f, dh, hid);
  }
  // dW_hh [4H, H] += da^T [4H, B] h [B, H]
  g.weight_grad(n.i[0], gw, hid, b, da, gw, g.node(n.in[1]).value.data, hid);
}

// ---- GRU

// Backward of the fused GRU step. With hn = h W_hn^T + b_hn:
//   dz = dh' (h - n);  dn = dh' (1 - z);  dh += dh' z;  dan = dn (1 - n^2)
//   dar = dan hn r(1-r);  daz = dz z(1-z)
//   dxw += (dar, daz, dan);  dhw = (dar, daz, dan r);  db_hh += sum_b dhw
//   dh += dhw W_hh;  dW_hh += dhw^T h
void gru_backward(Graph& g, const Node& n) {
  const int b = n.value.shape[0], hid = n.value.shape[1], gw = 3 * hid;
  const int64_t bh = static_cast<int64_t>(b) * hid;
  const float* saved = static_cast<const float*>(n.aux);  // [B, 3H] r, z, hn
  const float* ns = saved + bh * 3;                         // [B, H] n
  const float* h = g.node(n.in[1]).value.data;             // [B, H]
  float* dxw = g.grad(n.in[0]);
  float* dh = g.grad(n.in[1]);
  float* db = g.grad(n.i[1]);
  float* dhw = g.arena().floats(bh * 3);  // [B, 3H]
  float* dgx = g.arena().floats(bh * 3);  // [B, 3H] input-side gradients
  kernels::parallel_rows(b, gw, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t rh = r * hid, rg = r * gw;
      kernels::gru_backward_row(saved + rg, ns + rh, h + rh, n.grad + rh, dhw + rg, dgx + rg, dh ? dh + rh : nullptr,
                                hid);
      if (dxw)
        for (int j = 0; j < gw; ++j) dxw[rg + j] += dgx[rg + j];
    }
  });
  if (db)  // summed in row order: the same whatever the thread count
    for (int r = 0; r < b; ++r)
      for (int j = 0; j < gw; ++j) db[j] += dhw[static_cast<int64_t>(r) * gw + j];
  if (dh) {  // dh [B, H] += dhw [B, 3H] W_hh [3H, H]
    const float* w = g.node(n.i[0]).value.data;
    sgemm(false, false, b, hid, gw, 1.0f, dhw, gw, w, hid, 1.0f, dh, hid);
  }
  g.weight_grad(n.i[0], gw, hid, b, dhw, gw, h, hid);  // dW_hh [3H, H] += dhw^T [3H, B] h [B, H]
}

}  // namespace

// Forward: a = xw + h W_hh^T + b_hh [B, 4H] by one sgemm and one fused pass that also applies the
// gate non-linearities in place and forms c' = f c + i g, h' = o tanh(c').
LstmState lstm_cell(Var xw, Var h, Var c, Var w_hh, Var b_hh) {
  check_cell("lstm_cell", 4, xw, h, w_hh, b_hh);
  ENGRAM_CHECK(c.shape() == h.shape(), "lstm_cell: c {} must match h {}", c.shape(), h.shape());
  Graph& g = *xw.g;
  const int b = h.shape()[0], hid = h.shape()[1], gw = 4 * hid;
  const int64_t bh = static_cast<int64_t>(b) * hid;
  Tensor out = g.alloc({2, b, hid});         // [2, B, H] = (h' | c')
  float* act = g.arena().floats(bh * 5);     // [B, 4H] gates, then [B, H] tanh(c')
  weight_product(g, b, gw, hid, h.data(), w_hh.data(), 0.0f, act);
  const float* bias = b_hh.valid() ? b_hh.data() : nullptr;
  const float *pxw = xw.data(), *pc = c.data();
  kernels::parallel_rows(b, gw, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* a = act + r * gw;
      const float* x = pxw + r * gw;
      if (bias)
        for (int j = 0; j < gw; ++j) a[j] += x[j] + bias[j];
      else
        for (int j = 0; j < gw; ++j) a[j] += x[j];
      const int64_t rh = r * hid;
      kernels::lstm_forward_row(a, pc + rh, out.data + rh, out.data + bh + rh, act + bh * 4 + rh, hid);
    }
  });
  Var v = b_hh.valid() ? g.record(out, lstm_backward, {xw, h, c, w_hh, b_hh})
                       : g.record(out, lstm_backward, {xw, h, c, w_hh});
  Node& nd = g.node(v);
  nd.i[0] = w_hh.id;
  nd.i[1] = b_hh.valid() ? b_hh.id : -1;
  if (nd.needs_grad) nd.aux = act;
  return {alias_view(g, v, 0, {b, hid}), alias_view(g, v, bh, {b, hid})};
}

// Reference: the same step from affine, split, sigmoid, tanh, mul and add.
LstmState lstm_cell_composed(Var xw, Var h, Var c, Var w_hh, Var b_hh) {
  check_cell("lstm_cell_composed", 4, xw, h, w_hh, b_hh);
  ENGRAM_CHECK(c.shape() == h.shape(), "lstm_cell_composed: c {} must match h {}", c.shape(), h.shape());
  const int hid = h.shape()[1];
  Var a = add(xw, affine(h, w_hh, b_hh));               // [B, 4H]
  std::vector<Var> parts = split(a, {hid, hid, hid, hid}, 1);  // 4 x [B, H]
  Var i = sigmoid(parts[0]), f = sigmoid(parts[1]), gg = tanh(parts[2]), o = sigmoid(parts[3]);
  Var c_new = add(mul(f, c), mul(i, gg));               // [B, H]
  return {mul(o, tanh(c_new)), c_new};
}

// Forward: hw = h W_hh^T [B, 3H] by one sgemm; one fused pass adds xw and b_hh, applies the gates
// and forms h' = (1 - z) n + z h, keeping r, z, hn (in place) and n for backward.
Var gru_cell(Var xw, Var h, Var w_hh, Var b_hh) {
  check_cell("gru_cell", 3, xw, h, w_hh, b_hh);
  Graph& g = *xw.g;
  const int b = h.shape()[0], hid = h.shape()[1], gw = 3 * hid;
  const int64_t bh = static_cast<int64_t>(b) * hid;
  Tensor out = g.alloc({b, hid});            // [B, H]
  float* saved = g.arena().floats(bh * 4);   // [B, 3H] r, z, hn, then [B, H] n
  weight_product(g, b, gw, hid, h.data(), w_hh.data(), 0.0f, saved);
  const float* bias = b_hh.valid() ? b_hh.data() : nullptr;
  const float *pxw = xw.data(), *ph = h.data();
  kernels::parallel_rows(b, gw, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* s = saved + r * gw;
      const float* x = pxw + r * gw;
      if (bias) {
        for (int j = 0; j < 2 * hid; ++j) s[j] += x[j] + bias[j];
        for (int j = 2 * hid; j < gw; ++j) s[j] += bias[j];
      } else {
        for (int j = 0; j < 2 * hid; ++j) s[j] += x[j];
      }
      const int64_t rh = r * hid;
      kernels::gru_forward_row(s, x + 2 * hid, ph + rh, saved + bh * 3 + rh, out.data + rh, hid);
    }
  });
  Var v = b_hh.valid() ? g.record(out, gru_backward, {xw, h, w_hh, b_hh}) : g.record(out, gru_backward, {xw, h, w_hh});
  Node& nd = g.node(v);
  nd.i[0] = w_hh.id;
  nd.i[1] = b_hh.valid() ? b_hh.id : -1;
  if (nd.needs_grad) nd.aux = saved;
  return v;
}

// Reference: the same step from affine, split, sigmoid, tanh, mul, add and one_minus.
Var gru_cell_composed(Var xw, Var h, Var w_hh, Var b_hh) {
  check_cell("gru_cell_composed", 3, xw, h, w_hh, b_hh);
  const int hid = h.shape()[1];
  std::vector<Var> xs = split(xw, {hid, hid, hid}, 1);                         // 3 x [B, H]
  std::vector<Var> hs = split(affine(h, w_hh, b_hh), {hid, hid, hid}, 1);      // 3 x [B, H]
  Var r = sigmoid(add(xs[0], hs[0]));
  Var z = sigmoid(add(xs[1], hs[1]));
  Var n = tanh(add(xs[2], mul(r, hs[2])));
  return add(mul(one_minus(z), n), mul(z, h));  // [B, H]
}

}  // namespace engram::core
