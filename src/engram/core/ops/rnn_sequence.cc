// Fused whole-sequence LSTM / GRU (see rnn_sequence.h). One node per layer direction:
// value = (out [T, B, H] | h_T [B, H] | c_T [B, H] for LSTM), exposed as three Graph::view nodes
// whose gradients alias the node's. Saved for backward (arena): per processing step k the
// activated gates [B, G], tanh(c') or n [B, H], and the states h, c before each step [T+1, B, H].
// Backward walks k = T-1..0 with one [B, G] x [G, H] GEMM per step for dh, then ONE GEMM
// dW_hh += dG^T [G, T*B] x H_prev [T*B, H] and one column sum for db_hh.
#include "engram/core/ops/rnn_sequence.h"

#include <algorithm>
#include <cstring>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/rnn.h"
#include "engram/core/ops/matmul.h"

namespace engram::core {

namespace {

using kernels::sgemm;

struct SeqSaved {
  int steps, batch, hid, gates;
  bool lstm, reverse;
  const int* lengths;  // [B] or nullptr (every sequence T long)
  float* acts;         // [T, B, G] by processing step k: activated gates (LSTM) / r, z, hn (GRU)
  float* aux;          // [T, B, H] by k: tanh(c') (LSTM) / n (GRU)
  float* hs;           // [T+1, B, H] by k: h before step k; hs[T] = final
  float* cs;           // [T+1, B, H] LSTM only, as hs
  int time_of(int k) const { return reverse ? steps - 1 - k : k; }
  bool active(int t, int b) const { return !lengths || t < lengths[b]; }
  bool any_active(int t) const {
    if (!lengths) return true;
    for (int b = 0; b < batch; ++b)
      if (t < lengths[b]) return true;
    return false;
  }
};

void copy_row(float* dst, const float* src, int n) { std::memcpy(dst, src, sizeof(float) * n); }

void sequence_backward(Graph& g, const Node& n) {
  const SeqSaved& sv = *static_cast<const SeqSaved*>(n.aux);
  const int T = sv.steps, B = sv.batch, H = sv.hid, G = sv.gates;
  const int64_t bh = static_cast<int64_t>(B) * H, bg = static_cast<int64_t>(B) * G;
  const float* dout = n.grad;              // [T, B, H]
  const float* dh_final = n.grad + T * bh;  // [B, H]
  const float* dc_final = dh_final + bh;    // [B, H] LSTM
  float* dxw = g.grad(n.in[0]);
  float* dh0 = g.grad(n.in[1]);
  float* dc0 = sv.lstm ? g.grad(n.in[2]) : nullptr;
  float* dw = g.grad(n.i[0]);
  float* db = g.grad(n.i[1]);
  const float* w = g.node(n.i[0]).value.data;  // [G, H]
  Arena& ar = g.arena();
  float* dh = ar.floats(bh);       // [B, H] dL/dh entering the current step from above
  float* dh_next = ar.floats(bh);  // [B, H]
  float* carry = ar.floats(bh);    // [B, H] the part of dh_prev not through W_hh
  float* dc = sv.lstm ? ar.floats(bh) : nullptr;
  float* dc_next = sv.lstm ? ar.floats(bh) : nullptr;
  float* dgh = ar.floats(static_cast<int64_t>(T) * bg);  // [T, B, G] hidden-side pre-activation grads, by k
  float* dgx = ar.floats(G);                              // [G] GRU input-side grads of one row
  float* dtot = ar.floats(H);                             // [H] dh + dout of one row
  copy_row(dh, dh_final, static_cast<int>(bh));
  if (sv.lstm) copy_row(dc, dc_final, static_cast<int>(bh));
  for (int k = T - 1; k >= 0; --k) {
    const int t = sv.time_of(k);
    float* dg = dgh + k * bg;
    if (!sv.any_active(t)) {  // nothing ran: gradients pass through unchanged
      std::memset(dg, 0, sizeof(float) * bg);
      continue;
    }
    for (int b = 0; b < B; ++b) {
      const int64_t rh = static_cast<int64_t>(b) * H, rg = static_cast<int64_t>(b) * G;
      if (!sv.active(t, b)) {
        std::memset(dg + rg, 0, sizeof(float) * G);
        copy_row(carry + rh, dh + rh, H);
        if (sv.lstm) copy_row(dc_next + rh, dc + rh, H);
        continue;
      }
      const float* dor = dout + static_cast<int64_t>(t) * bh + rh;
      for (int j = 0; j < H; ++j) dtot[j] = dh[rh + j] + dor[j];
      const float* act = sv.acts + k * bg + rg;
      const float* aux = sv.aux + k * bh + rh;
      float* dxr = dxw ? dxw + (static_cast<int64_t>(t) * B + b) * G : nullptr;
      if (sv.lstm) {
        std::memset(dc_next + rh, 0, sizeof(float) * H);
        kernels::lstm_backward_row(act, aux, sv.cs + k * bh + rh, dtot, dc + rh, dg + rg, dc_next + rh, H);
        std::memset(carry + rh, 0, sizeof(float) * H);
        if (dxr)
          for (int j = 0; j < G; ++j) dxr[j] += dg[rg + j];
      } else {
        std::memset(carry + rh, 0, sizeof(float) * H);
        kernels::gru_backward_row(act, aux, sv.hs + k * bh + rh, dtot, dg + rg, dgx, carry + rh, H);
        if (dxr)
          for (int j = 0; j < G; ++j) dxr[j] += dgx[j];
      }
    }
    // dh_prev = dG_k [B, G] W_hh [G, H] + carry
    sgemm(false, false, B, H, G, 1.0f, dg, G, w, H, 0.0f, dh_next, H);
    for (int64_t i = 0; i < bh; ++i) dh_next[i] += carry[i];
    std::swap(dh, dh_next);
    if (sv.lstm) std::swap(dc, dc_next);
  }
  if (dh0)
    for (int64_t i = 0; i < bh; ++i) dh0[i] += dh[i];
  if (dc0)
    for (int64_t i = 0; i < bh; ++i) dc0[i] += dc[i];
  if (dw)  // dW_hh [G, H] += dG^T [G, T*B] H_prev [T*B, H]
    sgemm(true, false, G, H, T * B, 1.0f, dgh, G, sv.hs, H, 1.0f, dw, H);
  if (db)
    for (int64_t r = 0; r < static_cast<int64_t>(T) * B; ++r)
      for (int j = 0; j < G; ++j) db[j] += dgh[r * G + j];
}

RnnSequence run_sequence(const char* name, bool lstm, Var xw, Var h0, Var c0, Var w_hh, Var b_hh,
                         const std::vector<int>& lengths, bool reverse) {
  const int k_gates = lstm ? 4 : 3;
  const Shape sx = xw.shape(), sh = h0.shape(), sw = w_hh.shape();
  ENGRAM_CHECK(sh.rank() == 2, "{}: h0 must be [B, H], got {}", name, sh);
  const int B = sh[0], H = sh[1], G = k_gates * H;
  ENGRAM_CHECK(sx.rank() == 3 && sx[1] == B && sx[2] == G, "{}: xw {} must be [T, {}, {}]", name, sx, B, G);
  ENGRAM_CHECK(sw.rank() == 2 && sw[0] == G && sw[1] == H, "{}: w_hh {} must be [{}, {}]", name, sw, G, H);
  if (b_hh.valid()) ENGRAM_CHECK(b_hh.numel() == G, "{}: b_hh {} must have {} elements", name, b_hh.shape(), G);
  if (lstm) ENGRAM_CHECK(c0.valid() && c0.shape() == sh, "{}: c0 must be {} like h0", name, sh);
  const int T = sx[0];
  ENGRAM_CHECK(lengths.empty() || static_cast<int>(lengths.size()) == B, "{}: {} lengths for a batch of {}", name,
               lengths.size(), B);
  for (int len : lengths) ENGRAM_CHECK(len >= 0 && len <= T, "{}: length {} outside [0, {}]", name, len, T);

  Graph& g = *xw.g;
  Arena& ar = g.arena();
  const int64_t bh = static_cast<int64_t>(B) * H, bg = static_cast<int64_t>(B) * G;
  const int64_t total = T * bh + bh + (lstm ? bh : 0);
  Tensor value = g.alloc({static_cast<int>(total)});  // out | h_T | c_T
  auto* sv = ar.array<SeqSaved>(1);
  int* lens = nullptr;
  if (!lengths.empty()) {
    lens = ar.array<int>(B);
    std::copy(lengths.begin(), lengths.end(), lens);
  }
  *sv = SeqSaved{T, B, H, G, lstm, reverse, lens, ar.floats(T * bg), ar.floats(T * bh),
                 ar.floats((T + 1) * bh), lstm ? ar.floats((T + 1) * bh) : nullptr};
  copy_row(sv->hs, h0.data(), static_cast<int>(bh));
  if (lstm) copy_row(sv->cs, c0.data(), static_cast<int>(bh));
  float* out = value.data;
  const float* x_all = xw.data();
  const float* w = w_hh.data();
  const float* bias = b_hh.valid() ? b_hh.data() : nullptr;
  for (int k = 0; k < T; ++k) {
    const int t = sv->time_of(k);
    const float* hp = sv->hs + k * bh;
    float* hn = sv->hs + (k + 1) * bh;
    const float* cp = lstm ? sv->cs + k * bh : nullptr;
    float* cn = lstm ? sv->cs + (k + 1) * bh : nullptr;
    float* out_t = out + t * bh;
    if (!sv->any_active(t)) {
      copy_row(hn, hp, static_cast<int>(bh));
      if (lstm) copy_row(cn, cp, static_cast<int>(bh));
      std::memset(out_t, 0, sizeof(float) * bh);
      continue;
    }
    float* a = sv->acts + k * bg;
    weight_product(g, B, G, H, hp, w, 0.0f, a);  // h W_hh^T [B, G]
    for (int b = 0; b < B; ++b) {
      const int64_t rh = static_cast<int64_t>(b) * H, rg = static_cast<int64_t>(b) * G;
      if (!sv->active(t, b)) {
        copy_row(hn + rh, hp + rh, H);
        if (lstm) copy_row(cn + rh, cp + rh, H);
        std::memset(out_t + rh, 0, sizeof(float) * H);
        continue;
      }
      float* ar_row = a + rg;
      const float* x = x_all + (static_cast<int64_t>(t) * B + b) * G;
      if (lstm) {
        if (bias)
          for (int j = 0; j < G; ++j) ar_row[j] += x[j] + bias[j];
        else
          for (int j = 0; j < G; ++j) ar_row[j] += x[j];
        kernels::lstm_forward_row(ar_row, cp + rh, hn + rh, cn + rh, sv->aux + k * bh + rh, H);
      } else {
        for (int j = 0; j < 2 * H; ++j) ar_row[j] += x[j] + (bias ? bias[j] : 0.0f);
        if (bias)
          for (int j = 2 * H; j < G; ++j) ar_row[j] += bias[j];
        kernels::gru_forward_row(ar_row, x + 2 * H, hp + rh, sv->aux + k * bh + rh, hn + rh, H);
      }
      copy_row(out_t + rh, hn + rh, H);
    }
  }
  copy_row(out + T * bh, sv->hs + T * bh, static_cast<int>(bh));
  if (lstm) copy_row(out + T * bh + bh, sv->cs + T * bh, static_cast<int>(bh));

  Var v;
  if (lstm)
    v = b_hh.valid() ? g.record(value, sequence_backward, {xw, h0, c0, w_hh, b_hh})
                     : g.record(value, sequence_backward, {xw, h0, c0, w_hh});
  else
    v = b_hh.valid() ? g.record(value, sequence_backward, {xw, h0, w_hh, b_hh})
                     : g.record(value, sequence_backward, {xw, h0, w_hh});
  Node& nd = g.node(v);
  nd.i[0] = w_hh.id;
  nd.i[1] = b_hh.valid() ? b_hh.id : -1;
  if (nd.needs_grad) nd.aux = sv;
  RnnSequence r;
  r.out = g.view(v, 0, {T, B, H});
  r.h = g.view(v, T * bh, {B, H});
  if (lstm) r.c = g.view(v, T * bh + bh, {B, H});
  return r;
}

}  // namespace

RnnSequence lstm_sequence(Var xw, Var h0, Var c0, Var w_hh, Var b_hh, const std::vector<int>& lengths, bool reverse) {
  return run_sequence("lstm_sequence", true, xw, h0, c0, w_hh, b_hh, lengths, reverse);
}

RnnSequence gru_sequence(Var xw, Var h0, Var w_hh, Var b_hh, const std::vector<int>& lengths, bool reverse) {
  return run_sequence("gru_sequence", false, xw, h0, Var{}, w_hh, b_hh, lengths, reverse);
}

}  // namespace engram::core
