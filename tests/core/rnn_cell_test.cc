// Fused LSTM / GRU steps against their composed references: equal values and equal gradients for
// every input (xw, h, c, w_hh, b_hh), for one step and over a 4-step unroll; shape errors; the
// fused step is one tape node (plus the two zero-copy state views of the LSTM).
// Dims: B batch, H hidden, G gates (4H LSTM, 3H GRU), S steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engram/core/ops.h"

namespace engram::core {
namespace rnn_cell_test {

constexpr int kB = 3, kH = 5;

// Caller-owned inputs of a recurrence: values and gradient buffers.
struct Buf {
  Shape shape;
  std::vector<float> value, grad;
  Buf(Shape s, Rng& rng, float scale = 1.0f) : shape(s), value(s.numel()), grad(s.numel()) {
    for (auto& v : value) v = rng.uniform(-scale, scale);
  }
  Var leaf(Graph& g) { return g.leaf(Tensor{value.data(), shape}, grad.data()); }
  void zero_grad() { std::fill(grad.begin(), grad.end(), 0.0f); }
};

// max |a - b| / max |b|, the relative difference of two tensors.
double rel_diff(const float* a, const float* b, int64_t n) {
  double diff = 0, ref = 1e-12;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    ref = std::max(ref, static_cast<double>(std::fabs(b[i])));
  }
  return diff / ref;
}

using LstmFn = LstmState (*)(Var, Var, Var, Var, Var);
using GruFn = Var (*)(Var, Var, Var, Var);

// Inputs of an S-step recurrence: xs [S*B, G] (row block t feeds step t), h0, c0, w_hh, b_hh.
struct Problem {
  int steps, gates;
  std::vector<Buf> bufs;
  Problem(int steps_, int gates_, uint64_t seed) : steps(steps_), gates(gates_) {
    Rng rng(seed);
    bufs.emplace_back(Shape{steps * kB, gates * kH}, rng, 2.0f);  // xs
    bufs.emplace_back(Shape{kB, kH}, rng);                         // h0
    bufs.emplace_back(Shape{kB, kH}, rng);                         // c0 (unused by GRU)
    bufs.emplace_back(Shape{gates * kH, kH}, rng, 0.8f);           // w_hh
    bufs.emplace_back(Shape{gates * kH}, rng, 0.5f);               // b_hh
  }
};

// Runs the recurrence, returns every output concatenated, seeds the backward with a fixed random
// vector, and leaves the gradients in the Problem's buffers.
std::vector<float> run_lstm(Problem& p, LstmFn cell, bool bias) {
  for (auto& b : p.bufs) b.zero_grad();
  Graph g;
  Var xs = p.bufs[0].leaf(g), w = p.bufs[3].leaf(g), b = bias ? p.bufs[4].leaf(g) : Var{};
  LstmState s{p.bufs[1].leaf(g), p.bufs[2].leaf(g)};
  std::vector<Var> outs;
  for (int t = 0; t < p.steps; ++t) {
    s = cell(slice(xs, 0, t * kB, (t + 1) * kB), s.h, s.c, w, b);
    outs.push_back(s.h);
    outs.push_back(s.c);
  }
  Var out = concat(outs, 0);  // [2 S B, H]
  Rng rng(99);
  std::vector<float> seed(out.numel());
  for (auto& v : seed) v = rng.uniform(-1.0f, 1.0f);
  g.backward(out, seed.data());
  return {out.data(), out.data() + out.numel()};
}

std::vector<float> run_gru(Problem& p, GruFn cell, bool bias) {
  for (auto& b : p.bufs) b.zero_grad();
  Graph g;
  Var xs = p.bufs[0].leaf(g), w = p.bufs[3].leaf(g), b = bias ? p.bufs[4].leaf(g) : Var{};
  Var h = p.bufs[1].leaf(g);
  std::vector<Var> outs;
  for (int t = 0; t < p.steps; ++t) {
    h = cell(slice(xs, 0, t * kB, (t + 1) * kB), h, w, b);
    outs.push_back(h);
  }
  Var out = concat(outs, 0);  // [S B, H]
  Rng rng(99);
  std::vector<float> seed(out.numel());
  for (auto& v : seed) v = rng.uniform(-1.0f, 1.0f);
  g.backward(out, seed.data());
  return {out.data(), out.data() + out.numel()};
}

constexpr double kTol = 1e-5;
const char* kNames[] = {"xw", "h", "c", "w_hh", "b_hh"};

// Compares values and the gradient of every input used; prints the worst differences.
template <class Run>
void expect_fused_equals_composed(const char* label, int steps, int gates, bool lstm, bool bias, Run run) {
  Problem fused(steps, gates, 3), composed(steps, gates, 3);
  std::vector<float> vf = run(fused, true), vc = run(composed, false);
  ASSERT_EQ(vf.size(), vc.size());
  const double dv = rel_diff(vf.data(), vc.data(), static_cast<int64_t>(vf.size()));
  std::printf("%-22s value %.2e", label, dv);
  EXPECT_LE(dv, kTol) << label << " value";
  for (int k = 0; k < 5; ++k) {
    if ((k == 2 && !lstm) || (k == 4 && !bias)) continue;
    const Buf &a = fused.bufs[k], &b = composed.bufs[k];
    const double dg = rel_diff(a.grad.data(), b.grad.data(), static_cast<int64_t>(a.grad.size()));
    std::printf("  d%s %.2e", kNames[k], dg);
    EXPECT_LE(dg, kTol) << label << " d" << kNames[k];
    double norm = 0;
    for (float v : b.grad) norm += std::fabs(v);
    EXPECT_GT(norm, 0.0) << label << " d" << kNames[k] << " is all zero";
  }
  std::printf("\n");
}

TEST(RnnCell, LstmFusedEqualsComposed) {
  for (int steps : {1, 4})
    for (bool bias : {true, false}) {
      auto run = [bias](Problem& p, bool fused) {
        return run_lstm(p, fused ? lstm_cell : lstm_cell_composed, bias);
      };
      const std::string label = fmt::format("lstm steps={} bias={}", steps, bias);
      expect_fused_equals_composed(label.c_str(), steps, 4, true, bias, run);
    }
}

TEST(RnnCell, GruFusedEqualsComposed) {
  for (int steps : {1, 4})
    for (bool bias : {true, false}) {
      auto run = [bias](Problem& p, bool fused) {
        return run_gru(p, fused ? gru_cell : gru_cell_composed, bias);
      };
      const std::string label = fmt::format("gru steps={} bias={}", steps, bias);
      expect_fused_equals_composed(label.c_str(), steps, 3, false, bias, run);
    }
}

// Hand-computed single element: H = 1, B = 1, all weights zero except the ones named.
TEST(RnnCell, LstmMatchesFormulaByHand) {
  Graph g(false);
  const float xw[4] = {0.3f, -0.2f, 0.5f, 0.1f};  // i, f, g, o pre-activations
  const float h0 = 0.4f, c0 = -0.7f, w[4] = {0.5f, -1.0f, 0.25f, 2.0f};
  LstmState s = lstm_cell(g.constant({1, 4}, xw), g.constant({1, 1}, &h0), g.constant({1, 1}, &c0),
                          g.constant({4, 1}, w), Var{});
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const double i = sig(0.3 + 0.2), f = sig(-0.2 - 0.4), gg = std::tanh(0.5 + 0.1), o = sig(0.1 + 0.8);
  const double c = f * c0 + i * gg;
  EXPECT_NEAR(s.c.data()[0], c, 1e-6);
  EXPECT_NEAR(s.h.data()[0], o * std::tanh(c), 1e-6);
}

TEST(RnnCell, GruMatchesFormulaByHand) {
  Graph g(false);
  const float xw[3] = {0.3f, -0.2f, 0.5f};  // r, z, n input parts
  const float h0 = 0.4f, w[3] = {0.5f, -1.0f, 0.25f}, b[3] = {0.1f, 0.2f, -0.3f};
  Var h = gru_cell(g.constant({1, 3}, xw), g.constant({1, 1}, &h0), g.constant({3, 1}, w), g.constant({3}, b));
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const double r = sig(0.3 + 0.2 + 0.1), z = sig(-0.2 - 0.4 + 0.2);
  const double n = std::tanh(0.5 + r * (0.1 - 0.3));
  EXPECT_NEAR(h.data()[0], (1 - z) * n + z * h0, 1e-6);
}

// Without a tape the fused step gives the same numbers and records no backward.
TEST(RnnCell, InferenceModeSameValues) {
  Rng rng(4);
  Buf xw({kB, 4 * kH}, rng), h({kB, kH}, rng), c({kB, kH}, rng), w({4 * kH, kH}, rng), b({4 * kH}, rng);
  Graph train(true), infer(false);
  LstmState a = lstm_cell(xw.leaf(train), h.leaf(train), c.leaf(train), w.leaf(train), b.leaf(train));
  LstmState e = lstm_cell(xw.leaf(infer), h.leaf(infer), c.leaf(infer), w.leaf(infer), b.leaf(infer));
  EXPECT_TRUE(a.h.needs_grad());
  EXPECT_FALSE(e.h.needs_grad());
  for (int i = 0; i < kB * kH; ++i) {
    EXPECT_EQ(a.h.data()[i], e.h.data()[i]);
    EXPECT_EQ(a.c.data()[i], e.c.data()[i]);
  }
}

// One fused node per step (+ 2 views for the LSTM state), vs a dozen or so nodes composed.
TEST(RnnCell, FusedStepIsOneNode) {
  Rng rng(5);
  Buf xw({kB, 4 * kH}, rng), h({kB, kH}, rng), c({kB, kH}, rng), w({4 * kH, kH}, rng);
  Graph g;
  Var vx = xw.leaf(g), vh = h.leaf(g), vc = c.leaf(g), vw = w.leaf(g);
  const size_t before = g.size();
  lstm_cell(vx, vh, vc, vw, Var{});
  EXPECT_EQ(g.size() - before, 3u);
  const size_t mid = g.size();
  gru_cell(slice(vx, 1, 0, 3 * kH), vh, slice(vw, 0, 0, 3 * kH), Var{});
  EXPECT_EQ(g.size() - mid, 3u);  // two slices + one node
}

// Gradients reaching h' and c' from several consumers all accumulate (the views alias the node).
TEST(RnnCell, LstmStateViewsAccumulate) {
  Rng rng(6);
  Buf xw({kB, 4 * kH}, rng), h({kB, kH}, rng), c({kB, kH}, rng), w({4 * kH, kH}, rng);
  std::vector<float> once, twice;
  for (int uses : {1, 2}) {
    xw.zero_grad();
    Graph g;
    LstmState s = lstm_cell(xw.leaf(g), h.leaf(g), c.leaf(g), w.leaf(g), Var{});
    Var out = add(s.h, s.c);
    if (uses == 2) out = add(out, add(s.h, s.c));
    std::vector<float> seed(out.numel(), 1.0f);
    g.backward(out, seed.data());
    (uses == 1 ? once : twice) = xw.grad;
  }
  for (size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(twice[i], 2 * once[i], 1e-6);
}

TEST(RnnCell, ShapeErrors) {
  Graph g;
  Var xw = g.zeros({kB, 4 * kH}), h = g.zeros({kB, kH}), c = g.zeros({kB, kH}), w = g.zeros({4 * kH, kH});
  EXPECT_THROW(lstm_cell(g.zeros({kB, 3 * kH}), h, c, w, Var{}), Error);     // xw width
  EXPECT_THROW(lstm_cell(xw, h, g.zeros({kB, kH + 1}), w, Var{}), Error);    // c shape
  EXPECT_THROW(lstm_cell(xw, h, c, g.zeros({4 * kH, kH + 1}), Var{}), Error);  // w_hh
  EXPECT_THROW(lstm_cell(xw, h, c, w, g.zeros({3 * kH})), Error);           // b_hh
  EXPECT_THROW(lstm_cell(g.zeros({kB + 1, 4 * kH}), h, c, w, Var{}), Error);  // batch
  EXPECT_THROW(gru_cell(xw, h, g.zeros({3 * kH, kH}), Var{}), Error);       // xw width 4H
  EXPECT_THROW(gru_cell_composed(g.zeros({kB, 3 * kH}), h, w, Var{}), Error);
  EXPECT_THROW(lstm_cell_composed(xw, g.zeros({kH}), c, w, Var{}), Error);  // h rank
}

}  // namespace rnn_cell_test
}  // namespace engram::core
