// The fused whole-sequence LSTM / GRU against the reference built from fused cell steps with
// composed length masking (out = m h~, h = out + (1-m) h_prev): equal outputs, final states and
// gradients of every input, forward and reverse, with and without lengths and b_hh.
// Dims: T time, B batch, H hidden, G gates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/grad_cases.h"
#include "engram/core/ops.h"

namespace engram::core {
namespace rnn_sequence_test {

constexpr int kT = 5, kB = 4, kH = 6;

struct Buf {
  Shape shape;
  std::vector<float> value, grad;
  Buf(Shape s, Rng& rng) : shape(s), value(s.numel()), grad(s.numel()) {
    for (auto& v : value) v = rng.uniform(-1.0f, 1.0f);
  }
  Var leaf(Graph& g) { return g.leaf(Tensor{value.data(), shape}, grad.data()); }
  void zero() { std::fill(grad.begin(), grad.end(), 0.0f); }
};

double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, ref = 1e-12;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    ref = std::max(ref, static_cast<double>(std::fabs(b[i])));
  }
  return diff / ref;
}

// Reference: one fused cell per step, masking composed from mul/add (what nn::Rnn did before).
RnnSequence reference(bool lstm, Var xw, Var h0, Var c0, Var w, Var b, const std::vector<int>& lengths, bool reverse) {
  Graph& g = *xw.g;
  const int T = xw.shape()[0], B = xw.shape()[1], H = h0.shape()[1];
  Var h = h0, c = c0;
  std::vector<Var> outs(T);
  for (int k = 0; k < T; ++k) {
    const int t = reverse ? T - 1 - k : k;
    Var x_t = reshape(slice(xw, 0, t, t + 1), {B, xw.shape()[2]});
    Var hn, cn;
    if (lstm) {
      LstmState s = lstm_cell(x_t, h, c, w, b);
      hn = s.h;
      cn = s.c;
    } else {
      hn = gru_cell(x_t, h, w, b);
    }
    std::vector<float> m(B, 1.0f), keep(B, 0.0f);
    for (int i = 0; i < B && !lengths.empty(); ++i) {
      m[i] = t < lengths[i] ? 1.0f : 0.0f;
      keep[i] = 1.0f - m[i];
    }
    Var vm = g.constant({B, 1}, m.data()), vk = g.constant({B, 1}, keep.data());
    outs[t] = mul(hn, vm);
    h = add(outs[t], mul(h, vk));
    if (lstm) c = add(mul(cn, vm), mul(c, vk));
  }
  return {reshape(concat(outs, 0), {T, B, H}), h, lstm ? c : Var{}};
}

struct Case {
  bool lstm, bias, reverse;
  std::vector<int> lengths;
};

void check_case(const Case& cs) {
  SCOPED_TRACE(::testing::Message() << (cs.lstm ? "lstm" : "gru") << " bias " << cs.bias << " reverse " << cs.reverse
                                    << " lengths " << cs.lengths.size());
  const int G = (cs.lstm ? 4 : 3) * kH;
  Rng rng(17);
  Buf xw({kT, kB, G}, rng), h0({kB, kH}, rng), c0({kB, kH}, rng), w({G, kH}, rng), b({G}, rng);
  std::vector<Buf*> bufs = {&xw, &h0, &w, &b};
  if (cs.lstm) bufs.push_back(&c0);
  // Fixed random weights for the loss over all three outputs.
  std::vector<float> wo(kT * kB * kH), wh(kB * kH), wc(kB * kH);
  for (auto* v : {&wo, &wh, &wc})
    for (auto& x : *v) x = rng.uniform(-1.0f, 1.0f);
  auto run = [&](bool fused, std::vector<float>& values, std::vector<std::vector<float>>& grads) {
    for (Buf* p : bufs) p->zero();
    Graph g;
    Var vx = xw.leaf(g), vh = h0.leaf(g), vc = cs.lstm ? c0.leaf(g) : Var{}, vw = w.leaf(g);
    Var vb = cs.bias ? b.leaf(g) : Var{};
    RnnSequence r = fused ? (cs.lstm ? lstm_sequence(vx, vh, vc, vw, vb, cs.lengths, cs.reverse)
                                     : gru_sequence(vx, vh, vw, vb, cs.lengths, cs.reverse))
                          : reference(cs.lstm, vx, vh, vc, vw, vb, cs.lengths, cs.reverse);
    values.assign(r.out.data(), r.out.data() + r.out.numel());
    values.insert(values.end(), r.h.data(), r.h.data() + r.h.numel());
    Var loss = add(sum_all(mul(r.out, g.constant({kT, kB, kH}, wo.data()))),
                   sum_all(mul(r.h, g.constant({kB, kH}, wh.data()))));
    if (cs.lstm) {
      values.insert(values.end(), r.c.data(), r.c.data() + r.c.numel());
      loss = add(loss, sum_all(mul(r.c, g.constant({kB, kH}, wc.data()))));
    }
    g.backward(loss);
    grads.clear();
    for (Buf* p : bufs) grads.push_back(p->grad);
  };
  std::vector<float> v_fused, v_ref;
  std::vector<std::vector<float>> g_fused, g_ref;
  run(true, v_fused, g_fused);
  run(false, v_ref, g_ref);
  EXPECT_LT(rel_diff(v_fused, v_ref), 1e-5);
  const char* names[] = {"xw", "h0", "w_hh", "b_hh", "c0"};
  for (size_t k = 0; k < bufs.size(); ++k) {
    if (k == 3 && !cs.bias) continue;
    EXPECT_LT(rel_diff(g_fused[k], g_ref[k]), 1e-5) << names[k];
  }
}

TEST(RnnSequence, EqualsUnrolledCellsInValueAndGradient) {
  const std::vector<int> ragged = {5, 3, 0, 1};
  for (bool lstm : {true, false})
    for (bool bias : {true, false})
      for (bool reverse : {false, true})
        for (const auto& lengths : {std::vector<int>{}, ragged}) check_case({lstm, bias, reverse, lengths});
}

TEST(RnnSequence, PaddedStepsAreZeroAndStateIsCarried) {
  Rng rng(3);
  Graph g(false);
  Buf xw({3, 2, 3 * 4}, rng), h0({2, 4}, rng), w({12, 4}, rng);
  RnnSequence r = gru_sequence(xw.leaf(g), h0.leaf(g), w.leaf(g), Var{}, {3, 1});
  for (int t = 1; t < 3; ++t)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(r.out.data()[(t * 2 + 1) * 4 + j], 0.0f);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(r.h.data()[4 + j], r.out.data()[1 * 4 + j]);  // h = out at t=0
  RnnSequence none = gru_sequence(xw.leaf(g), h0.leaf(g), w.leaf(g), Var{}, {0, 0});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(none.h.data()[i], h0.value[i]);
}

TEST(RnnSequence, BadShapesAndLengthsThrow) {
  Rng rng(3);
  Graph g;
  Buf xw({3, 2, 12}, rng), h0({2, 4}, rng), w({12, 4}, rng), wbad({12, 5}, rng);
  EXPECT_THROW(gru_sequence(xw.leaf(g), h0.leaf(g), wbad.leaf(g), Var{}), engram::Error);
  EXPECT_THROW(gru_sequence(xw.leaf(g), h0.leaf(g), w.leaf(g), Var{}, {4, 1}), engram::Error);
  EXPECT_THROW(gru_sequence(xw.leaf(g), h0.leaf(g), w.leaf(g), Var{}, {1}), engram::Error);
  EXPECT_THROW(lstm_sequence(xw.leaf(g), h0.leaf(g), Var{}, w.leaf(g), Var{}), engram::Error);
}

}  // namespace rnn_sequence_test
}  // namespace engram::core
