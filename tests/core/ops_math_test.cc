// Value tests of the softmax, loss, memory-addressing and norm ops: hand-computed expectations,
// fused-vs-composed agreement (value and gradient), masking, stability and error cases.
// Dims: R rows, C classes, B batch, N slots, M slot width, S shift size, D width.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engram/core/ops.h"

namespace engram::core {
namespace ops_math_test {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A trainable Var over an arena copy of `v` (gradient in the arena).
Var var(Graph& g, Shape s, const std::vector<float>& v) {
  EXPECT_EQ(s.numel(), static_cast<int64_t>(v.size()));
  return g.variable(g.constant(s, v.data()).value());
}

std::vector<float> values(Var v) { return {v.data(), v.data() + v.numel()}; }

std::vector<float> grads(Var v) {
  if (!v.grad()) return std::vector<float>(v.numel(), 0.0f);
  return {v.grad(), v.grad() + v.numel()};
}

std::vector<float> random(int64_t n, uint64_t seed, float lo = -2.0f, float hi = 2.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << what << " [" << i << "]";
}

// ---------------------------------------------------------------- softmax

TEST(Softmax, RowsSumToOneAndMatchDoubleReference) {
  Graph g;
  const int r = 4, c = 7;
  const auto x = random(r * c, 1, -5.0f, 5.0f);
  Var y = softmax(var(g, {2, 2, c}, x));
  ASSERT_EQ(y.shape(), (Shape{2, 2, c}));
  for (int i = 0; i < r; ++i) {
    double m = -1e30, z = 0, sum = 0;
    for (int j = 0; j < c; ++j) m = std::max(m, static_cast<double>(x[i * c + j]));
    for (int j = 0; j < c; ++j) z += std::exp(x[i * c + j] - m);
    for (int j = 0; j < c; ++j) {
      EXPECT_NEAR(y.data()[i * c + j], std::exp(x[i * c + j] - m) / z, 1e-6);
      sum += y.data()[i * c + j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(Softmax, MaskedEntriesAreExactlyZeroAndGetNoGradient) {
  Graph g;
  const std::vector<float> mask = {1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1};  // [3, 5]; row 1 all masked
  const auto xv = random(15, 2);
  Var x = var(g, {3, 5}, xv);
  Var y = softmax(x, mask.data());
  for (int i = 0; i < 15; ++i)
    if (mask[i] == 0.0f) {
      EXPECT_EQ(y.data()[i], 0.0f) << i;
    }
  for (int r : {0, 2}) {
    float sum = 0;
    for (int j = 0; j < 5; ++j) sum += y.data()[r * 5 + j];
    EXPECT_NEAR(sum, 1.0f, 1e-6f);
  }
  // Equal to the plain softmax of the kept entries of row 0.
  const double z = std::exp(xv[0]) + std::exp(xv[2]) + std::exp(xv[4]);
  EXPECT_NEAR(y.data()[2], std::exp(xv[2]) / z, 1e-6);
  const auto seed = random(15, 3);
  g.backward(y, seed.data());
  const auto dx = grads(x);
  for (int i = 0; i < 15; ++i)
    if (mask[i] == 0.0f) {
      EXPECT_EQ(dx[i], 0.0f) << i;
    }
}

TEST(Softmax, LogSoftmaxIsLogOfSoftmax) {
  const auto xv = random(12, 4, -6.0f, 6.0f);
  const std::vector<float> mask = {1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0};  // [3, 4]
  Graph g(false);
  Var x = var(g, {3, 4}, xv);
  for (const float* m : {static_cast<const float*>(nullptr), mask.data()}) {
    Var p = m ? softmax(x, m) : softmax(x);
    Var lp = m ? log_softmax(x, m) : log_softmax(x);
    for (int i = 0; i < 12; ++i) {
      if (m && m[i] == 0.0f) {
        EXPECT_EQ(lp.data()[i], -kInf) << i;
      } else {
        EXPECT_NEAR(lp.data()[i], std::log(p.data()[i]), 1e-5f) << i;
      }
    }
  }
}

TEST(Softmax, MaskedLogSoftmaxBackwardIgnoresMaskedSeeds) {
  Graph g;
  const std::vector<float> mask = {1, 0, 1, 1};
  Var x = var(g, {1, 4}, {0.5f, 9.0f, -1.0f, 2.0f});
  Var lp = log_softmax(x, mask.data());
  const std::vector<float> seed = {0.3f, 5.0f, -0.7f, 0.2f};  // 5.0 lands on the masked entry
  g.backward(lp, seed.data());
  const double z = std::exp(0.5) + std::exp(-1.0) + std::exp(2.0);
  const double sum = 0.3 - 0.7 + 0.2;
  const auto dx = grads(x);
  EXPECT_EQ(dx[1], 0.0f);
  EXPECT_NEAR(dx[0], 0.3 - std::exp(0.5) / z * sum, 1e-6);
  EXPECT_NEAR(dx[2], -0.7 - std::exp(-1.0) / z * sum, 1e-6);
  EXPECT_NEAR(dx[3], 0.2 - std::exp(2.0) / z * sum, 1e-6);
}

// The fused masked softmax must match exp(x) m / sum(exp(x) m) built from element-wise ops.
TEST(Softmax, FusedMaskedMatchesComposedInValueAndGradient) {
  const int r = 3, c = 6;
  const auto xv = random(r * c, 5);
  const auto seed = random(r * c, 6);
  const std::vector<float> mask = {1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1};
  Graph g1, g2;
  Var x1 = var(g1, {r, c}, xv);
  Var y1 = softmax(x1, mask.data());
  g1.backward(y1, seed.data());
  Var x2 = var(g2, {r, c}, xv);
  Var e = mul(exp(x2), g2.constant({r, c}, mask.data()));                 // [R, C]
  Var y2 = div(e, matmul(e, g2.full({c, 1}, 1.0f)));                      // [R, C] / [R, 1]
  g2.backward(y2, seed.data());
  expect_near(values(y1), values(y2), 1e-6f, "value");
  expect_near(grads(x1), grads(x2), 1e-6f, "gradient");
}

TEST(Softmax, StableForHugeLogits) {
  Graph g(false);
  Var x = var(g, {1, 4}, {1000.0f, -1000.0f, 0.0f, 999.0f});
  Var p = softmax(x);
  Var lp = log_softmax(x);
  const double z = 1.0 + std::exp(-1.0);
  EXPECT_NEAR(p.data()[0], 1.0 / z, 1e-6);
  EXPECT_EQ(p.data()[1], 0.0f);
  EXPECT_NEAR(p.data()[3], std::exp(-1.0) / z, 1e-6);
  EXPECT_NEAR(lp.data()[0], -std::log(z), 1e-5);
  EXPECT_NEAR(lp.data()[1], -2000.0 - std::log(z), 1e-2);
  for (float v : values(lp)) EXPECT_TRUE(std::isfinite(v));
}

TEST(Softmax, Errors) {
  Graph g;
  Var x = var(g, {2, 3}, random(6, 7));
  const std::vector<float> mask = {1, 0, 1, 0, 0, 0};  // row 1 fully masked
  EXPECT_THROW(log_softmax(x, mask.data()), engram::Error);
  EXPECT_THROW(softmax(x, nullptr), engram::Error);
  EXPECT_THROW(log_softmax(x, nullptr), engram::Error);
  Var y = softmax(x, mask.data());  // fine: zeros
  for (int j = 3; j < 6; ++j) EXPECT_EQ(y.data()[j], 0.0f);
}

// ---------------------------------------------------------------- losses

// Per-row -log softmax(x)[t] computed in double.
double nll_by_hand(const std::vector<float>& x, int c, int row, int t) {
  double m = -1e30, z = 0;
  for (int j = 0; j < c; ++j) m = std::max(m, static_cast<double>(x[row * c + j]));
  for (int j = 0; j < c; ++j) z += std::exp(x[row * c + j] - m);
  return m + std::log(z) - x[row * c + t];
}

TEST(CrossEntropy, EqualsLogSoftmaxPickMeanByHand) {
  const int r = 4, c = 5;
  const auto xv = random(r * c, 8, -3.0f, 3.0f);
  const std::vector<int32_t> t = {2, 0, 4, 1};
  double expected = 0;
  for (int i = 0; i < r; ++i) expected += nll_by_hand(xv, c, i, t[i]);
  expected /= r;
  Graph g1, g2;
  Var x1 = var(g1, {r, c}, xv);
  Var l1 = cross_entropy(x1, t);
  ASSERT_EQ(l1.shape().rank(), 0);
  EXPECT_NEAR(l1.data()[0], expected, 1e-5);
  g1.backward(l1);
  // Composed: -mean(pick(log_softmax(x), t)); the fused gradient must agree.
  Var x2 = var(g2, {r, c}, xv);
  Var l2 = neg(mean_all(pick(log_softmax(x2), t)));
  EXPECT_NEAR(l1.data()[0], l2.data()[0], 1e-5f);
  g2.backward(l2);
  expect_near(grads(x1), grads(x2), 1e-6f, "gradient");
}

TEST(CrossEntropy, LabelSmoothingByHand) {
  const int r = 3, c = 4;
  const float eps = 0.1f;
  const auto xv = random(r * c, 9);
  const std::vector<int32_t> t = {1, 3, 0};
  // Target q = (1-eps) one-hot + eps/C; loss = mean_r sum_c -q_c log p_c.
  double expected = 0;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) {
      const double q = (j == t[i] ? 1.0 - eps : 0.0) + eps / c;
      expected += q * nll_by_hand(xv, c, i, j);
    }
  expected /= r;
  CrossEntropyOptions opt;
  opt.label_smoothing = eps;
  Graph g;
  Var x = var(g, {r, c}, xv);
  Var l = cross_entropy(x, t, opt);
  EXPECT_NEAR(l.data()[0], expected, 1e-5);
  // Gradient (softmax - q) / R by hand.
  g.backward(l);
  const auto dx = grads(x);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) {
      const double p = std::exp(-nll_by_hand(xv, c, i, j));
      const double q = (j == t[i] ? 1.0 - eps : 0.0) + eps / c;
      EXPECT_NEAR(dx[i * c + j], (p - q) / r, 1e-6);
    }
}

TEST(CrossEntropy, IgnoredRowsContributeNothing) {
  const int c = 5;
  const auto xv = random(4 * c, 10);
  CrossEntropyOptions opt;
  opt.ignore_index = 0;  // padding id 0
  const std::vector<int32_t> t = {3, 0, 1, 0};
  Graph g;
  Var x = var(g, {4, c}, xv);
  Var l = cross_entropy(x, t, opt);
  EXPECT_NEAR(l.data()[0], (nll_by_hand(xv, c, 0, 3) + nll_by_hand(xv, c, 2, 1)) / 2.0, 1e-5);
  g.backward(l);
  const auto dx = grads(x);
  for (int j = 0; j < c; ++j) {
    EXPECT_EQ(dx[1 * c + j], 0.0f);
    EXPECT_EQ(dx[3 * c + j], 0.0f);
  }
  // Sum mode: no division; every row ignored: loss 0, no gradient.
  opt.mean = false;
  Graph g2;
  Var x2 = var(g2, {4, c}, xv);
  EXPECT_NEAR(cross_entropy(x2, t, opt).data()[0], nll_by_hand(xv, c, 0, 3) + nll_by_hand(xv, c, 2, 1), 1e-5);
  opt.mean = true;
  Var l0 = cross_entropy(x2, {0, 0, 0, 0}, opt);
  EXPECT_EQ(l0.data()[0], 0.0f);
  g2.backward(l0);
  for (float d : grads(x2)) EXPECT_EQ(d, 0.0f);
}

// The fused op must match nll(log_softmax(x)) for every option combination.
TEST(CrossEntropy, FusedMatchesNllOfLogSoftmax) {
  const auto xv = random(2 * 3 * 6, 11, -4.0f, 4.0f);
  const std::vector<int32_t> t = {5, 2, 2, 0, 4, 1};
  for (float eps : {0.0f, 0.2f})
    for (int32_t ignore : {-1, 2})
      for (bool mean : {true, false}) {
        CrossEntropyOptions opt{eps, ignore, mean};
        Graph g1, g2;
        Var x1 = var(g1, {2, 3, 6}, xv);
        Var l1 = cross_entropy(x1, t, opt);
        g1.backward(l1);
        Var x2 = var(g2, {2, 3, 6}, xv);
        Var l2 = nll(log_softmax(x2), t, opt);
        g2.backward(l2);
        EXPECT_NEAR(l1.data()[0], l2.data()[0], 1e-5f) << eps << " " << ignore << " " << mean;
        expect_near(grads(x1), grads(x2), 1e-6f, "gradient");
      }
}

TEST(CrossEntropy, StableForHugeLogits) {
  Graph g;
  Var x = var(g, {2, 4}, {1000.0f, -1000.0f, 0.0f, 999.0f, -1000.0f, -1000.0f, -1000.0f, 1000.0f});
  Var l = cross_entropy(x, {1, 3}, CrossEntropyOptions{0.0f, -1, false});
  // Row 0: lse = 1000 + log(1 + e^-1), target -1000; row 1: lse = 1000 (others underflow), target 1000.
  EXPECT_NEAR(l.data()[0], 2000.0 + std::log(1.0 + std::exp(-1.0)), 1e-2);
  g.backward(l);
  for (float d : grads(x)) EXPECT_TRUE(std::isfinite(d));
  EXPECT_NEAR(grads(x)[1], -1.0f, 1e-6f);  // softmax 0 - target 1
}

TEST(Loss, NllPicksAndSmooths) {
  Graph g;
  Var lp = var(g, {2, 3}, {-0.5f, -1.0f, -2.0f, -3.0f, -0.1f, -4.0f});
  EXPECT_NEAR(nll(lp, {2, 1}).data()[0], (2.0 + 0.1) / 2.0, 1e-6);
  CrossEntropyOptions opt{0.3f, -1, false};
  // Row 0: 0.7 * 2 + 0.1 * 3.5; row 1: 0.7 * 0.1 + 0.1 * 7.1.
  EXPECT_NEAR(nll(lp, {2, 1}, opt).data()[0], 0.7 * 2.0 + 0.1 * 3.5 + 0.7 * 0.1 + 0.1 * 7.1, 1e-5);
}

TEST(Loss, BceWithLogitsByHandAndStable) {
  Graph g;
  const std::vector<float> t = {0.0f, 1.0f, 0.25f, 1.0f, 0.0f};
  Var x = var(g, {5}, {0.5f, -1.5f, 2.0f, 1000.0f, -1000.0f});
  Var l = bce_with_logits(x, t.data());
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  double expected = 0;
  const double xs[3] = {0.5, -1.5, 2.0};
  for (int i = 0; i < 3; ++i) expected += -(t[i] * std::log(sig(xs[i])) + (1 - t[i]) * std::log(1 - sig(xs[i])));
  expected /= 5;  // the two saturated entries are predicted correctly: loss 0
  EXPECT_NEAR(l.data()[0], expected, 1e-6);
  g.backward(l);
  const auto dx = grads(x);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(dx[i], (sig(xs[i]) - t[i]) / 5, 1e-6);
  EXPECT_NEAR(dx[3], 0.0f, 1e-7f);
  EXPECT_NEAR(dx[4], 0.0f, 1e-7f);
  // Confidently wrong: loss ~ |x|, finite.
  Graph g2(false);
  const float one = 1.0f;
  EXPECT_NEAR(bce_with_logits(var(g2, {1}, {-1000.0f}), &one).data()[0], 1000.0f, 1e-3f);
}

TEST(Loss, MseByHand) {
  Graph g;
  const std::vector<float> t = {1.0f, -1.0f, 0.5f};
  Var x = var(g, {3}, {2.0f, 0.0f, 0.5f});
  Var l = mse(x, t.data());
  EXPECT_NEAR(l.data()[0], (1.0 + 1.0 + 0.0) / 3.0, 1e-6);
  g.backward(l);
  expect_near(grads(x), {2.0f / 3, 2.0f / 3, 0.0f}, 1e-6f, "gradient");
}

TEST(Loss, Errors) {
  Graph g;
  Var x = var(g, {2, 3}, random(6, 12));
  EXPECT_THROW(cross_entropy(x, {0, 3}), engram::Error);     // target == C
  EXPECT_THROW(cross_entropy(x, {0, -2}), engram::Error);    // negative, not ignore_index
  EXPECT_THROW(cross_entropy(x, {0}), engram::Error);        // one target for two rows
  EXPECT_THROW(cross_entropy(x, {0, 1}, CrossEntropyOptions{1.0f}), engram::Error);
  EXPECT_THROW(nll(x, {7, 0}), engram::Error);
  EXPECT_THROW(nll(x, {0, 1, 2}), engram::Error);
  const std::vector<float> mask = {1, 0, 1, 1, 1, 1};
  EXPECT_THROW(nll(log_softmax(x, mask.data()), {0, 1}, CrossEntropyOptions{0.1f}), engram::Error);
  // -inf is never read without smoothing: row 0 keeps classes 0 and 2, row 1 all three.
  const std::vector<float> xv(x.data(), x.data() + 6);
  const double row0 = std::log(std::exp(double{xv[0]}) + std::exp(double{xv[2]})) - xv[0];
  EXPECT_NEAR(nll(log_softmax(x, mask.data()), {0, 1}).data()[0], (row0 + nll_by_hand(xv, 3, 1, 1)) / 2, 1e-6);
  const std::vector<float> bad = {0, 1, 1.5f, 0, 0, 0};
  EXPECT_THROW(bce_with_logits(x, bad.data()), engram::Error);
  EXPECT_THROW(bce_with_logits(x, nullptr), engram::Error);
  EXPECT_THROW(mse(x, nullptr), engram::Error);
}

// ---------------------------------------------------------------- memory addressing

TEST(MemoryOps, CosineOfParallelAntiparallelOrthogonal) {
  Graph g(false);
  Var a = var(g, {4, 3}, {1, 2, 3, 1, 2, 3, 1, 0, 0, 0.001f, 0.002f, 0.003f});
  Var b = var(g, {4, 3}, {2, 4, 6, -1, -2, -3, 0, 5, 0, 300, 600, 900});
  Var c = cosine_similarity(a, b);
  ASSERT_EQ(c.shape(), (Shape{4}));
  EXPECT_NEAR(c.data()[0], 1.0f, 1e-6f);
  EXPECT_NEAR(c.data()[1], -1.0f, 1e-6f);
  EXPECT_NEAR(c.data()[2], 0.0f, 1e-7f);
  EXPECT_NEAR(c.data()[3], 1.0f, 1e-6f);  // scale-free
}

TEST(MemoryOps, CosineOfZeroVectorIsFiniteWithFiniteGradient) {
  Graph g;
  Var a = var(g, {2, 3}, {0, 0, 0, 1, 2, 2});
  Var b = var(g, {2, 3}, {1, -2, 0.5f, 0, 0, 0});
  Var c = cosine_similarity(a, b);
  EXPECT_EQ(c.data()[0], 0.0f);
  EXPECT_EQ(c.data()[1], 0.0f);
  const std::vector<float> seed = {1.0f, 1.0f};
  g.backward(c, seed.data());
  for (float d : grads(a)) EXPECT_TRUE(std::isfinite(d));
  for (float d : grads(b)) EXPECT_TRUE(std::isfinite(d));
}

TEST(MemoryOps, CosineBroadcastShapesAndCosineRows) {
  const int b = 2, n = 3, m = 4;
  const auto mem = random(b * n * m, 13);
  const auto key = random(b * m, 14);
  const auto seed = random(b * n, 15);
  Graph g1, g2;
  Var mem1 = var(g1, {b, n, m}, mem), key1 = var(g1, {b, m}, key);
  Var c1 = cosine_rows(mem1, key1);
  ASSERT_EQ(c1.shape(), (Shape{b, n}));
  g1.backward(c1, seed.data());
  Var mem2 = var(g2, {b, n, m}, mem), key2 = var(g2, {b, 1, m}, key);
  Var c2 = cosine_similarity(mem2, key2);
  ASSERT_EQ(c2.shape(), (Shape{b, n}));
  g2.backward(c2, seed.data());
  expect_near(values(c1), values(c2), 1e-7f, "value");
  expect_near(grads(mem1), grads(mem2), 1e-7f, "d memory");
  expect_near(grads(key1), grads(key2), 1e-7f, "d key");
  // By hand for one entry.
  double dot = 0, na = 0, nk = 0;
  for (int j = 0; j < m; ++j) {
    dot += mem[1 * n * m + 2 * m + j] * key[m + j];
    na += mem[1 * n * m + 2 * m + j] * mem[1 * n * m + 2 * m + j];
    nk += key[m + j] * key[m + j];
  }
  EXPECT_NEAR(c1.data()[1 * n + 2], dot / std::sqrt(na * nk), 1e-6);
  Graph g3(false);
  const std::vector<float> k0(key.begin(), key.begin() + m);
  EXPECT_EQ(cosine_similarity(var(g3, {3, m}, random(3 * m, 1)), var(g3, {m}, k0)).shape(), (Shape{3}));
  Var self = cosine_similarity(var(g3, {m}, k0), var(g3, {m}, k0));
  EXPECT_EQ(self.shape().rank(), 0);
  EXPECT_NEAR(self.data()[0], 1.0f, 1e-6f);
}

TEST(MemoryOps, CircularConvShiftsOneHotWithWrapAround) {
  Graph g(false);
  // Slot 4 of N=5, shift +1 (one-hot at j = S/2 + 1) -> slot 0; slot 0, shift -1 -> slot 4.
  Var w = var(g, {2, 5}, {0, 0, 0, 0, 1, 1, 0, 0, 0, 0});
  Var s = var(g, {2, 3}, {0, 0, 1, 1, 0, 0});
  expect_near(values(circular_conv(w, s)), {1, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 0.0f, "S=3");
  // Identity kernel keeps the weighting; S=5 one-hot at j = 4 shifts by +2 (slot 1 -> 3, 4 -> 1).
  Var w2 = var(g, {2, 5}, {0.1f, 0.6f, 0.1f, 0.1f, 0.1f, 0, 0, 0, 0, 1});
  Var s_id = var(g, {2, 3}, {0, 1, 0, 0, 1, 0});
  expect_near(values(circular_conv(w2, s_id)), values(w2), 0.0f, "identity");
  Var s5 = var(g, {2, 5}, {0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  expect_near(values(circular_conv(w2, s5)), {0.1f, 0.1f, 0.1f, 0.6f, 0.1f, 0, 1, 0, 0, 0}, 0.0f, "S=5");
  // A spread kernel mixes neighbours: out[i] = 0.25 w[i+1] + 0.5 w[i] + 0.25 w[i-1].
  Var s_mix = var(g, {2, 3}, {0.25f, 0.5f, 0.25f, 0.25f, 0.5f, 0.25f});
  Var y = circular_conv(w2, s_mix);
  EXPECT_NEAR(y.data()[0], 0.25f * 0.6f + 0.5f * 0.1f + 0.25f * 0.1f, 1e-7f);
  EXPECT_NEAR(y.data()[5], 0.25f * 1.0f, 1e-7f);  // wrapped from slot 4
}

TEST(MemoryOps, SharpenGammaOneIsIdentityOnANormalisedWeighting) {
  Graph g(false);
  auto wv = random(3 * 6, 16, 0.01f, 1.0f);
  for (int r = 0; r < 3; ++r) {
    float s = 0;
    for (int j = 0; j < 6; ++j) s += wv[r * 6 + j];
    for (int j = 0; j < 6; ++j) wv[r * 6 + j] /= s;
  }
  Var w = var(g, {3, 6}, wv);
  expect_near(values(sharpen(w, g.full({3, 1}, 1.0f))), wv, 1e-6f, "gamma 1");
  // Large gamma concentrates on the arg-max without overflow; zeros stay finite.
  Var w2 = var(g, {1, 4}, {0.0f, 1e-3f, 2e-3f, 1e-4f});
  Var y = sharpen(w2, g.full({1, 1}, 50.0f));
  EXPECT_NEAR(y.data()[2], 1.0f, 1e-6f);
  for (float v : values(y)) EXPECT_TRUE(std::isfinite(v));
  // gamma = 2 by hand: w^2 / sum w^2.
  Var w3 = var(g, {1, 3}, {0.5f, 0.3f, 0.2f});
  expect_near(values(sharpen(w3, g.full({1}, 2.0f))), {0.25f / 0.38f, 0.09f / 0.38f, 0.04f / 0.38f}, 1e-6f, "gamma 2");
}

TEST(MemoryOps, L2NormalizeGivesUnitRows) {
  Graph g(false);
  Var x = var(g, {3, 4}, {3, 0, 4, 0, 0, 0, 0, 0, 1, 1, 1, 1});
  expect_near(values(l2_normalize(x)), {0.6f, 0, 0.8f, 0, 0, 0, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f}, 1e-7f, "rows");
}

TEST(MemoryOps, Errors) {
  Graph g;
  Var a = var(g, {2, 3}, random(6, 17));
  Var b4 = var(g, {2, 4}, random(8, 18));
  EXPECT_THROW(cosine_similarity(a, b4), engram::Error);                       // M differs
  EXPECT_THROW(cosine_similarity(a, var(g, {3, 3}, random(9, 1))), engram::Error);  // rows do not broadcast
  EXPECT_THROW(cosine_rows(var(g, {2, 3, 4}, random(24, 1)), a), engram::Error);
  EXPECT_THROW(circular_conv(var(g, {2, 5}, random(10, 1)), var(g, {2, 2}, random(4, 1))), engram::Error);  // even S
  EXPECT_THROW(circular_conv(var(g, {2, 5}, random(10, 1)), var(g, {3, 3}, random(9, 1))), engram::Error);  // B differs
  EXPECT_THROW(sharpen(var(g, {1, 3}, {0.5f, -0.1f, 0.6f}), g.full({1, 1}, 2.0f)), engram::Error);
  EXPECT_THROW(sharpen(a, g.full({3, 1}, 2.0f)), engram::Error);  // one gamma per row
}

// ---------------------------------------------------------------- norm

TEST(Norm, LayerNormRowsHaveMeanZeroVarianceOne) {
  const int r = 4, d = 64;
  auto xv = random(r * d, 19, -5.0f, 5.0f);
  for (auto& v : xv) v += 3.0f;
  Graph g(false);
  Var y = layer_norm(var(g, {r, d}, xv), g.full({d}, 1.0f), g.full({d}, 0.0f));
  for (int i = 0; i < r; ++i) {
    double mean = 0, var2 = 0;
    for (int j = 0; j < d; ++j) mean += y.data()[i * d + j];
    mean /= d;
    for (int j = 0; j < d; ++j) var2 += (y.data()[i * d + j] - mean) * (y.data()[i * d + j] - mean);
    var2 /= d;
    EXPECT_NEAR(mean, 0.0, 1e-5);
    EXPECT_NEAR(var2, 1.0, 1e-4);
  }
  // Gain and bias apply per column: y = xhat g + b.
  const auto gv = random(d, 20, 0.5f, 2.0f), bv = random(d, 21);
  Var y2 = layer_norm(var(g, {r, d}, xv), var(g, {d}, gv), var(g, {d}, bv));
  for (int i = 0; i < r * d; ++i) EXPECT_NEAR(y2.data()[i], y.data()[i] * gv[i % d] + bv[i % d], 1e-5f);
  EXPECT_THROW(layer_norm(var(g, {r, d}, xv), g.full({d + 1}, 1.0f), Var{}), engram::Error);
  EXPECT_THROW(layer_norm(var(g, {r, d}, xv), Var{}, Var{}, 0.0f), engram::Error);
}

TEST(Norm, DropoutKeepsExpectationAndScalesKeptElements) {
  const int n = 100000;
  for (float p : {0.3f, 0.5f}) {
    Graph g;
    Rng rng(42);
    Var x = var(g, {n}, std::vector<float>(n, 1.0f));
    Var y = dropout(x, p, rng);
    double mean = 0;
    int zeros = 0;
    for (int i = 0; i < n; ++i) {
      const float v = y.data()[i];
      mean += v;
      if (v == 0.0f) ++zeros;
      else EXPECT_FLOAT_EQ(v, 1.0f / (1.0f - p));
    }
    mean /= n;
    EXPECT_NEAR(mean, 1.0, 0.01) << p;
    EXPECT_NEAR(static_cast<double>(zeros) / n, p, 0.01) << p;
    // Backward applies the same mask.
    g.backward(sum_all(y));
    const auto dx = grads(x);
    for (int i = 0; i < n; i += 997) EXPECT_EQ(dx[i], y.data()[i]);
  }
}

TEST(Norm, DropoutIsIdentityAtZeroAndTheCallersChoiceInInference) {
  Graph g;
  Rng rng(5), fresh(5);
  Var x = var(g, {3, 4}, random(12, 22));
  EXPECT_EQ(dropout(x, 0.0f, rng).id, x.id);
  EXPECT_EQ(rng.next(), fresh.next());  // nothing drawn
  {
    // Inference mode does not switch dropout off by itself (the caller passes p = 0 for that):
    // the grad-disabled graph applies the same mask as a recording one with the same seed.
    Rng r1(4), r2(4);
    std::vector<float> recorded = values(dropout(x, 0.5f, r1));
    NoGrad ng(g);
    expect_near(values(dropout(x, 0.5f, r2)), recorded, 0.0f, "no-grad mask");
    EXPECT_EQ(dropout(x, 0.0f, rng).id, x.id);  // p = 0 without a tape: identity too
  }
  EXPECT_EQ(rng.next(), fresh.next());  // nothing drawn
  // Same seed, same mask.
  Rng r1(9), r2(9);
  expect_near(values(dropout(x, 0.4f, r1)), values(dropout(x, 0.4f, r2)), 0.0f, "same seed");
  EXPECT_THROW(dropout(x, 1.0f, rng), engram::Error);
  EXPECT_THROW(dropout(x, -0.1f, rng), engram::Error);
}

}  // namespace ops_math_test
}  // namespace engram::core
