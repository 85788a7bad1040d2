// Behaviour of the pointer-generator's copy mixture (CopyOutput): parameter naming, the gate,
// log P(target) and the inference distribution against a direct double-precision computation of
// p_gen P_vocab(w) + (1 − p_gen) Σ_{i: src_ext_i = w} α_i, normalisation over V + X, masking,
// extreme gates and peaked logits (no underflow), and input errors. Gradients: module_cases_copy.cc.
// Dims: N rows, V vocab, S source positions, X extra ids, Hc / Hs / Hx gate input widths.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/ops.h"
#include "engram/nn/copy_output.h"
#include "engram/nn/init.h"

namespace engram::nn {
namespace {

using core::Rng;

// One decoder step's pieces held by the test, with a direct double-precision reference.
struct Example {
  int n = 0, v = 0, s = 0, x = 0;
  std::vector<float> logits;   // [N, V]
  std::vector<float> scores;   // [N, S]
  std::vector<float> z;        // [N]
  std::vector<int32_t> ids;    // [N, S] extended ids
  std::vector<float> mask;     // [N, S]; empty = all attended

  CopyStep step(Graph& g) {
    return {.vocab_logits = g.constant({n, v}, logits.data()),
            .attn_scores = g.constant({n, s}, scores.data()),
            .gate_logit = g.constant({n}, z.data()),
            .source = {.ids = ids, .extra = x, .mask = mask.empty() ? nullptr : mask.data()}};
  }
  bool attends(int r, int i) const { return mask.empty() || mask[r * s + i] != 0.0f; }

  // P(w) of row r = p_gen P_vocab(w) + (1 − p_gen) Σ_{attended i holding w} α_i, in double.
  double prob(int r, int w) const {
    const double p_gen = 1.0 / (1.0 + std::exp(-double{z[r]}));
    const double p_copy = 1.0 / (1.0 + std::exp(double{z[r]}));  // 1 − p_gen without cancellation
    double m = -1e300, total = 0;
    for (int k = 0; k < v; ++k) m = std::max(m, double{logits[r * v + k]});
    for (int k = 0; k < v; ++k) total += std::exp(logits[r * v + k] - m);
    const double p_vocab = w < v ? std::exp(logits[r * v + w] - m) / total : 0.0;
    double ms = -1e300, norm = 0, held = 0;
    for (int i = 0; i < s; ++i)
      if (attends(r, i)) ms = std::max(ms, double{scores[r * s + i]});
    for (int i = 0; i < s; ++i) {
      if (!attends(r, i)) continue;
      const double e = std::exp(scores[r * s + i] - ms);
      norm += e;
      if (ids[r * s + i] == w) held += e;
    }
    return p_gen * p_vocab + p_copy * held / norm;
  }
};

// N=3, V=6, S=5, X=3. Row 0 holds vocabulary words (one repeated) and extra id 6; row 1 holds
// extra ids 7 (twice) and 8 with position 3 masked (holding 2, which row 1 then cannot copy);
// row 2 holds vocabulary ids only, positions 3 and 4 masked (holding 6: not copied).
Example small_example(uint64_t seed) {
  Example e;
  e.n = 3, e.v = 6, e.s = 5, e.x = 3;
  Rng rng(seed);
  for (int k = 0; k < e.n * e.v; ++k) e.logits.push_back(rng.uniform(-2.0f, 2.0f));
  for (int k = 0; k < e.n * e.s; ++k) e.scores.push_back(rng.uniform(-2.0f, 2.0f));
  e.z = {0.3f, -1.2f, 2.0f};
  e.ids = {1, 4, 1, 6, 0, 7, 3, 7, 2, 8, 5, 5, 0, 6, 6};
  e.mask = {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0};
  return e;
}

std::vector<int32_t> column(int n, int32_t w) { return std::vector<int32_t>(n, w); }

// ---------------------------------------------------------------- parameters and gate

TEST(CopyOutput, ParametersNamedByPath) {
  ParamStore store;
  Rng rng(1);
  CopyOutput out(store, "decoder/copy", {.context_dim = 4, .state_dim = 3, .input_dim = 2}, rng);
  EXPECT_EQ(store.name(out.weight()), "decoder/copy/w");
  EXPECT_EQ(store.name(out.bias()), "decoder/copy/b");
  EXPECT_EQ(store.shape(out.weight()), Shape({1, 9}));
  EXPECT_EQ(store.shape(out.bias()), Shape({1}));
  EXPECT_EQ(store.value(out.bias())[0], 0.0f);
}

TEST(CopyOutput, GateLogitIsAffineOverTheConcatenation) {
  ParamStore store;
  Rng rng(2);
  CopyOutput out(store, "copy", {.context_dim = 3, .state_dim = 2, .input_dim = 1}, rng);
  init::constant(store, out.bias(), 0.25f);
  std::vector<float> c = {1, 2, 3, -1, 0, 1}, s = {0.5f, -0.5f, 2, 1}, x = {3, -2};  // N = 2
  Graph g;
  Var z = out.gate_logit(g, g.constant({2, 3}, c.data()), g.constant({2, 2}, s.data()), g.constant({2, 1}, x.data()));
  ASSERT_EQ(z.shape(), Shape({2}));
  const Tensor w = store.value(out.weight());
  for (int r = 0; r < 2; ++r) {
    double expected = 0.25;
    for (int k = 0; k < 3; ++k) expected += w[k] * c[r * 3 + k];
    for (int k = 0; k < 2; ++k) expected += w[3 + k] * s[r * 2 + k];
    expected += w[5] * x[r];
    EXPECT_NEAR(z.value()[r], expected, 1e-5) << "row " << r;
  }
  // A part of width 0 is left out; giving it anyway is an error.
  CopyOutput state_only(store, "copy2", {.state_dim = 2}, rng);
  EXPECT_EQ(state_only.gate_logit(g, {}, g.constant({2, 2}, s.data()), {}).shape(), Shape({2}));
  EXPECT_THROW(state_only.gate_logit(g, g.constant({2, 3}, c.data()), g.constant({2, 2}, s.data()), {}), Error);
  EXPECT_THROW(out.gate_logit(g, g.constant({2, 3}, c.data()), g.constant({2, 2}, s.data()), {}), Error);
}

// ---------------------------------------------------------------- values

TEST(CopyOutput, LogProbMatchesDirectDoublePrecision) {
  ParamStore store;
  Rng rng(3);
  CopyOutput out(store, "copy", {.state_dim = 1}, rng);
  Example e = small_example(4);
  int checked = 0;
  for (int32_t w = 0; w < e.v + e.x; ++w) {
    // Rows where P(w) = 0 (an extra id the row does not hold) are errors; ask 0 there instead.
    std::vector<int32_t> targets(e.n);
    for (int r = 0; r < e.n; ++r) targets[r] = e.prob(r, w) > 0 ? w : 0;
    Graph g;
    Var lp = out.log_prob(g, e.step(g), targets);
    ASSERT_EQ(lp.shape(), Shape({e.n}));
    for (int r = 0; r < e.n; ++r) {
      EXPECT_NEAR(lp.value()[r], std::log(e.prob(r, targets[r])), 2e-6) << "row " << r << " target " << targets[r];
      ++checked;
    }
  }
  EXPECT_EQ(checked, (e.v + e.x) * e.n);
}

TEST(CopyOutput, DistributionMatchesDirectDoublePrecisionAndSumsToOne) {
  ParamStore store;
  Rng rng(5);
  CopyOutput out(store, "copy", {.state_dim = 1}, rng);
  for (bool masked : {true, false}) {
    Example e = small_example(6);
    if (!masked) e.mask.clear();
    Graph g(false);
    CopyDistribution d = out.distribution(g, e.step(g));
    ASSERT_EQ(d.log_probs.shape, Shape({e.n, e.v + e.x}));
    ASSERT_EQ(d.p_gen.shape, Shape({e.n}));
    for (int r = 0; r < e.n; ++r) {
      EXPECT_NEAR(d.p_gen[r], 1.0 / (1.0 + std::exp(-double{e.z[r]})), 1e-6);
      double total = 0;
      for (int w = 0; w < e.v + e.x; ++w) {
        const double p = e.prob(r, w);
        const float lp = d.log_probs.at(r, w);
        if (p == 0.0) {
          EXPECT_EQ(lp, -std::numeric_limits<float>::infinity()) << "row " << r << " id " << w;
        } else {
          EXPECT_NEAR(lp, std::log(p), 2e-6) << "row " << r << " id " << w << " masked " << masked;
        }
        total += std::exp(double{lp});
      }
      EXPECT_NEAR(total, 1.0, 1e-6) << "row " << r;
    }
    // Row 1 cannot copy extra id 6 nor, when masked, take mass from its masked position.
    EXPECT_EQ(d.log_probs.at(1, 6), -std::numeric_limits<float>::infinity());
  }
}

TEST(CopyOutput, DistributionAgreesWithLogProb) {
  ParamStore store;
  Rng rng(7);
  CopyOutput out(store, "copy", {.state_dim = 1}, rng);
  Example e = small_example(8);
  const std::vector<int32_t> targets = {6, 7, 5};  // copied, copied (held twice), generated + copied
  Graph g;
  Var lp = out.log_prob(g, e.step(g), targets);
  CopyDistribution d = out.distribution(g, e.step(g));
  for (int r = 0; r < e.n; ++r) EXPECT_NEAR(lp.value()[r], d.log_probs.at(r, targets[r]), 1e-6) << "row " << r;
}

TEST(CopyOutput, MaskedPositionsCopyNothing) {
  ParamStore store;
  Rng rng(9);
  CopyOutput out(store, "copy", {.state_dim = 1}, rng);
  Example e = small_example(10);
  // Row 1 holds 2 only at its masked position 3: log P(2) = log p_gen + log P_vocab(2).
  Graph g;
  Var lp = out.log_prob(g, e.step(g), std::vector<int32_t>{0, 2, 0});
  double m = -1e300, total = 0;
  for (int k = 0; k < e.v; ++k) m = std::max(m, double{e.logits[e.v + k]});
  for (int k = 0; k < e.v; ++k) total += std::exp(e.logits[e.v + k] - m);
  const double expected = -std::log1p(std::exp(-double{e.z[1]})) + (e.logits[e.v + 2] - m) - std::log(total);
  EXPECT_NEAR(lp.value()[1], expected, 2e-6);
  // Row 2 holds extra id 6 only at masked positions: P = 0, an error for a target.
  EXPECT_THROW(out.log_prob(g, e.step(g), std::vector<int32_t>{0, 0, 6}), Error);
}

// ---------------------------------------------------------------- no underflow

// z = ±40 (p_gen or 1 − p_gen ≈ 4e-18) with logits and scores peaked by 60: probabilities down
// to ~1e-44 and below float's range stay finite, correct log-probabilities.
TEST(CopyOutput, ExtremeGateAndPeakedLogitsStayFinite) {
  ParamStore store;
  Rng rng(11);
  CopyOutput out(store, "copy", {.state_dim = 1}, rng);
  Example e;
  e.n = 4, e.v = 4, e.s = 3, e.x = 1;
  e.logits = {0, -60, -60, -60, 0, -60, -60, -60, 0, -30, -60, -60, 0, -60, -60, -60};
  e.scores = {0, -60, -60, 0, -60, -60, 0, -50, -60, 0, -60, -60};
  e.z = {40, -40, -40, 40};
  e.ids = {0, 4, 4, 4, 0, 2, 0, 3, 4, 0, 1, 4};
  const std::vector<int32_t> targets = {
      4,  // copy only, from two positions of α ≈ e^-60, 1 − p_gen ≈ e^-40: P ≈ 2e^-100 ≈ 7e-44
      4,  // copy only, α ≈ 1 and 1 − p_gen ≈ 1:                          P ≈ 1
      1,  // generate only (no source match), p_gen ≈ e^-40, P_vocab ≈ e^-30: P ≈ 4e-31
      2,  // generate only: p_gen ≈ 1, P_vocab ≈ e^-60 ≈ 9e-27
  };
  Graph g;
  Var lp = out.log_prob(g, e.step(g), targets);
  CopyDistribution d = out.distribution(g, e.step(g));
  for (int r = 0; r < e.n; ++r) {
    const double expected = std::log(e.prob(r, targets[r]));
    ASSERT_TRUE(std::isfinite(expected));
    EXPECT_TRUE(std::isfinite(lp.value()[r])) << "row " << r;
    EXPECT_NEAR(lp.value()[r], expected, 1e-5 * std::max(1.0, std::abs(expected))) << "row " << r;
    EXPECT_NEAR(d.log_probs.at(r, targets[r]), expected, 1e-5 * std::max(1.0, std::abs(expected))) << "row " << r;
  }
  EXPECT_LT(lp.value()[0], -99.0f);  // P ≈ e^-100 ≈ 4e-44: a subnormal float, yet log P is exact
  EXPECT_NEAR(d.p_gen[0], 1.0f, 1e-6);
  EXPECT_GT(d.p_gen[1], 0.0f);        // σ(−40) ≈ 4e-18, not 0
  EXPECT_LT(d.p_gen[1], 1e-17f);
}

// ---------------------------------------------------------------- gradients reach every input

TEST(CopyOutput, GradientReachesLogitsScoresGateInputsAndParameters) {
  ParamStore store;
  Rng rng(12);
  CopyOutput out(store, "copy", {.context_dim = 2, .state_dim = 2}, rng);
  Example e = small_example(13);
  std::vector<float> c(e.n * 2, 0.5f), s(e.n * 2, -0.25f);
  Graph g;
  Var logits = g.variable({e.logits.data(), {e.n, e.v}});
  Var scores = g.variable({e.scores.data(), {e.n, e.s}});
  Var vc = g.variable({c.data(), {e.n, 2}});
  Var vs = g.variable({s.data(), {e.n, 2}});
  CopyStep step{.vocab_logits = logits, .attn_scores = scores, .gate_logit = out.gate_logit(g, vc, vs, {}),
                .source = {.ids = e.ids, .extra = e.x, .mask = e.mask.data()}};
  g.backward(core::sum_all(out.log_prob(g, step, std::vector<int32_t>{1, 7, 0})));
  for (Var v : {logits, scores, vc, vs}) {
    ASSERT_NE(v.grad(), nullptr);
    double norm = 0;
    for (int64_t k = 0; k < v.numel(); ++k) norm += std::abs(v.grad()[k]);
    EXPECT_GT(norm, 0.0);
  }
  // Row 1 copies 7 (>= V): its vocabulary logits get no gradient; masked positions get none.
  for (int k = 0; k < e.v; ++k) EXPECT_EQ(logits.grad()[e.v + k], 0.0f);
  for (int k = 0; k < e.n * e.s; ++k)
    if (e.mask[k] == 0.0f) {
      EXPECT_EQ(scores.grad()[k], 0.0f) << "position " << k;
    }
  EXPECT_NE(store.grad(out.bias())[0], 0.0f);
}

// ---------------------------------------------------------------- errors

TEST(CopyOutput, RejectsBadInputs) {
  ParamStore store;
  Rng rng(14);
  CopyOutput out(store, "copy", {.state_dim = 1}, rng);
  Graph g;
  {
    Example e = small_example(15);
    EXPECT_THROW(out.log_prob(g, e.step(g), std::vector<int32_t>{0, 6, 0}), Error);   // extra id 6 not in row 1
    EXPECT_THROW(out.log_prob(g, e.step(g), std::vector<int32_t>{9, 0, 0}), Error);   // outside [0, V + X)
    EXPECT_THROW(out.log_prob(g, e.step(g), std::vector<int32_t>{0, 0}), Error);      // one target per row
  }
  {
    Example e = small_example(15);
    e.ids[4] = 9;  // outside [0, V + X)
    EXPECT_THROW(out.log_prob(g, e.step(g), column(e.n, 0)), Error);
    EXPECT_THROW(out.distribution(g, e.step(g)), Error);
  }
  {
    Example e = small_example(15);
    for (int i = 0; i < e.s; ++i) e.mask[i] = 0;  // row 0 attends nothing
    EXPECT_THROW(out.log_prob(g, e.step(g), column(e.n, 0)), Error);
    EXPECT_THROW(out.distribution(g, e.step(g)), Error);
  }
}

}  // namespace
}  // namespace engram::nn
