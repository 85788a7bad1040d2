// Rnn module behaviour: padded steps are frozen (zero outputs, final state = state at the last real
// step, equal to running each sequence alone; no gradient reaches padding), the step API equals
// the layer, parameter names / shapes / init, dropout placement, and error messages.
// Dims: T time, B batch, I input width, H hidden, D directions, L layers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engram/core/ops.h"
#include "engram/nn/rnn.h"

namespace engram::nn {
namespace rnn_test {

constexpr int kT = 5, kB = 3, kI = 3, kH = 4;

std::vector<float> random_values(int64_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

RnnConfig config(CellKind cell, int layers, bool bidirectional, float dropout = 0.0f) {
  return {.cell = cell, .input_size = kI, .hidden_size = kH, .layers = layers, .bidirectional = bidirectional,
          .dropout = dropout};
}

class RnnBoth : public ::testing::TestWithParam<CellKind> {};
INSTANTIATE_TEST_SUITE_P(Cells, RnnBoth, ::testing::Values(CellKind::kLstm, CellKind::kGru),
                         [](const auto& info) { return info.param == CellKind::kLstm ? "lstm" : "gru"; });

// Padded batch vs each sequence run alone, unpadded, through the same 2-layer bidirectional rnn.
TEST_P(RnnBoth, PaddingFreezesStepsAndMatchesUnpaddedRuns) {
  const bool lstm = GetParam() == CellKind::kLstm;
  ParamStore store;
  core::Rng rng(1);
  Rnn rnn(store, "enc", config(GetParam(), 2, true), rng);
  const int dh = rnn.output_size();
  const std::vector<int> lengths = {5, 3, 1};
  std::vector<float> x = random_values(kT * kB * kI, 2);  // padding holds random junk too
  Graph g;
  RnnOutput out = rnn.forward(g, g.constant({kT, kB, kI}, x.data()), {.lengths = lengths});
  ASSERT_EQ(out.outputs.shape(), (Shape{kT, kB, dh}));
  ASSERT_EQ(out.final.size(), 4u);
  const float* y = out.outputs.data();
  for (int b = 0; b < kB; ++b) {
    for (int t = lengths[b]; t < kT; ++t)
      for (int j = 0; j < dh; ++j) EXPECT_EQ(y[(t * kB + b) * dh + j], 0.0f) << "t " << t << " b " << b;
    // The same sequence alone: x[:len, b] as [len, 1, I].
    const int len = lengths[b];
    std::vector<float> xb(len * kI);
    for (int t = 0; t < len; ++t)
      for (int i = 0; i < kI; ++i) xb[t * kI + i] = x[(t * kB + b) * kI + i];
    Graph g1;
    RnnOutput alone = rnn.forward(g1, g1.constant({len, 1, kI}, xb.data()));
    for (int t = 0; t < len; ++t)
      for (int j = 0; j < dh; ++j)
        EXPECT_NEAR(y[(t * kB + b) * dh + j], alone.outputs.data()[t * dh + j], 1e-5) << "t " << t << " b " << b;
    for (size_t k = 0; k < out.final.size(); ++k)
      for (int j = 0; j < kH; ++j) {
        EXPECT_NEAR(out.final[k].h.data()[b * kH + j], alone.final[k].h.data()[j], 1e-5) << "state " << k;
        if (lstm) {
          EXPECT_NEAR(out.final[k].c.data()[b * kH + j], alone.final[k].c.data()[j], 1e-5) << "state " << k;
        }
      }
  }
}

// No gradient reaches the input at padded positions; real positions do get one.
TEST_P(RnnBoth, NoGradientIntoPadding) {
  ParamStore store;
  core::Rng rng(3);
  Rnn rnn(store, "enc", config(GetParam(), 2, true), rng);
  const std::vector<int> lengths = {2, 5, 0};
  std::vector<float> x = random_values(kT * kB * kI, 4), dx(x.size(), 0.0f);
  Graph g;
  RnnOutput out = rnn.forward(g, g.leaf(Tensor{x.data(), {kT, kB, kI}}, dx.data()), {.lengths = lengths});
  std::vector<Var> parts = {core::sum_all(out.outputs)};
  for (const RnnState& s : out.final) parts.push_back(core::sum_all(s.h));
  Var loss = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) loss = core::add(loss, parts[k]);
  g.backward(loss);
  for (int t = 0; t < kT; ++t)
    for (int b = 0; b < kB; ++b) {
      double norm = 0;
      for (int i = 0; i < kI; ++i) norm += std::fabs(dx[(t * kB + b) * kI + i]);
      if (t >= lengths[b]) {
        EXPECT_EQ(norm, 0.0) << "t " << t << " b " << b;
      } else {
        EXPECT_GT(norm, 0.0) << "t " << t << " b " << b;
      }
    }
}

// A zero-length sequence keeps its initial state and outputs zeros.
TEST_P(RnnBoth, ZeroLengthKeepsInitialState) {
  const bool lstm = GetParam() == CellKind::kLstm;
  ParamStore store;
  core::Rng rng(5);
  Rnn rnn(store, "enc", config(GetParam(), 1, false), rng);
  std::vector<float> x = random_values(kT * kB * kI, 6), h0 = random_values(kB * kH, 7);
  Graph g;
  Var vh0 = g.constant({kB, kH}, h0.data());
  RnnOptions opt{.lengths = {5, 0, 2}, .initial = {{vh0, lstm ? vh0 : Var{}}}};
  RnnOutput out = rnn.forward(g, g.constant({kT, kB, kI}, x.data()), opt);
  for (int j = 0; j < kH; ++j) {
    EXPECT_EQ(out.final[0].h.data()[kH + j], h0[kH + j]);
    if (lstm) {
      EXPECT_EQ(out.final[0].c.data()[kH + j], h0[kH + j]);
    }
    EXPECT_NE(out.final[0].h.data()[j], h0[j]);
  }
  for (int t = 0; t < kT; ++t)
    for (int j = 0; j < kH; ++j) EXPECT_EQ(out.outputs.data()[(t * kB + 1) * kH + j], 0.0f);
}

// step() over the sequence == forward(), for 1 and 2 layers.
TEST_P(RnnBoth, StepEqualsForward) {
  const bool lstm = GetParam() == CellKind::kLstm;
  for (int layers : {1, 2}) {
    ParamStore store;
    core::Rng rng(8);
    Rnn rnn(store, "dec", config(GetParam(), layers, false), rng);
    std::vector<float> x = random_values(kT * kB * kI, 9);
    Graph g;
    Var vx = g.constant({kT, kB, kI}, x.data());
    RnnOutput out = rnn.forward(g, vx);
    std::vector<RnnState> s = rnn.zero_state(g, kB);
    for (int t = 0; t < kT; ++t) {
      s = rnn.step(g, core::reshape(core::slice(vx, 0, t, t + 1), {kB, kI}), s);
      ASSERT_EQ(s.size(), static_cast<size_t>(layers));
      for (int j = 0; j < kB * kH; ++j)
        EXPECT_NEAR(s.back().h.data()[j], out.outputs.data()[t * kB * kH + j], 1e-6) << "t " << t;
    }
    for (int l = 0; l < layers; ++l)
      for (int j = 0; j < kB * kH; ++j) {
        EXPECT_NEAR(s[l].h.data()[j], out.final[l].h.data()[j], 1e-6);
        if (lstm) {
          EXPECT_NEAR(s[l].c.data()[j], out.final[l].c.data()[j], 1e-6);
        }
      }
  }
}

// step_projected over project_input's rows == step(), value for value, for LSTM and GRU.
TEST_P(RnnBoth, StepProjectedEqualsStep) {
  ParamStore store;
  core::Rng rng(11);
  Rnn rnn(store, "dec", config(GetParam(), 1, false), rng);
  std::vector<float> x = random_values(kT * kB * kI, 12);
  Graph g;
  Var vx = g.constant({kT * kB, kI}, x.data());  // row t*B + b
  Var xw = rnn.project_input(g, vx);             // [T*B, G]
  std::vector<RnnState> a = rnn.zero_state(g, kB), b = a;
  for (int t = 0; t < kT; ++t) {
    a = rnn.step(g, core::slice(vx, 0, t * kB, (t + 1) * kB), a);
    b = rnn.step_projected(g, core::slice(xw, 0, t * kB, (t + 1) * kB), b);
    for (int j = 0; j < kB * kH; ++j) {
      EXPECT_NEAR(b[0].h.data()[j], a[0].h.data()[j], 1e-6) << "t " << t;
      if (GetParam() == CellKind::kLstm) {
        EXPECT_NEAR(b[0].c.data()[j], a[0].c.data()[j], 1e-6) << "t " << t;
      }
    }
  }
  // Errors: a stack of two layers, a wrong projection width, a wrong batch of states.
  Rnn two(store, "two", config(GetParam(), 2, false), rng);
  EXPECT_THROW(two.step_projected(g, two.project_input(g, vx), two.zero_state(g, kT * kB)), Error);
  EXPECT_THROW(rnn.step_projected(g, vx, rnn.zero_state(g, kT * kB)), Error);
  EXPECT_THROW(rnn.step_projected(g, xw, rnn.zero_state(g, kB)), Error);
  EXPECT_THROW(rnn.project_input(g, g.zeros({kB, kI + 1})), Error);
}

// forward_projected over project_embedded's rows == forward() over the embedded inputs, for a
// 2-layer bidirectional padded rnn, with the chain folded (F < I) and in order (F >= I).
TEST_P(RnnBoth, ForwardFromEmbeddedProjectionsEqualsForward) {
  ParamStore store;
  core::Rng rng(13);
  Rnn rnn(store, "enc", config(GetParam(), 2, true), rng);
  const int gates = (GetParam() == CellKind::kLstm ? 4 : 3) * kH;
  const RnnOptions opt{.lengths = {5, 2, 4}};
  for (int f : {1, 2, kI, kI + 2}) {
    SCOPED_TRACE(f);
    Graph g;
    std::vector<float> x = random_values(kT * kB * f, 14), w = random_values(kI * f, 15), b = random_values(kI, 16);
    Var vx = g.constant({kT * kB, f}, x.data()), vw = g.constant({kI, f}, w.data()), vb = g.constant({kI}, b.data());
    const RnnOutput want = rnn.forward(g, core::reshape(core::affine(vx, vw, vb), {kT, kB, kI}), opt);
    std::vector<Var> xw;
    for (int d = 0; d < 2; ++d) xw.push_back(core::reshape(rnn.project_embedded(g, vx, vw, vb, d), {kT, kB, gates}));
    const RnnOutput got = rnn.forward_projected(g, xw, opt);
    ASSERT_EQ(got.outputs.shape(), want.outputs.shape());
    for (int64_t j = 0; j < want.outputs.numel(); ++j) EXPECT_NEAR(got.outputs.data()[j], want.outputs.data()[j], 1e-5);
    ASSERT_EQ(got.final.size(), want.final.size());
    for (size_t k = 0; k < want.final.size(); ++k)
      for (int j = 0; j < kB * kH; ++j) EXPECT_NEAR(got.final[k].h.data()[j], want.final[k].h.data()[j], 1e-5);
  }
  // Errors: a direction it lacks, w of the wrong width, one projection for two directions, a
  // projection of the wrong width.
  Graph g;
  Var x = g.zeros({kT * kB, 2}), w = g.zeros({kI, 2}), b = g.zeros({kI});
  EXPECT_THROW(rnn.project_embedded(g, x, w, b, 2), Error);
  EXPECT_THROW(rnn.project_embedded(g, x, g.zeros({kI + 1, 2}), b), Error);
  EXPECT_THROW(rnn.project_embedded(g, x, g.zeros({kI, 3}), b), Error);
  Var one = core::reshape(rnn.project_embedded(g, x, w, b), {kT, kB, gates});
  EXPECT_THROW(rnn.forward_projected(g, std::vector<Var>{one}, opt), Error);
  EXPECT_THROW(rnn.forward_projected(g, std::vector<Var>{g.zeros({kT, kB, 5}), g.zeros({kT, kB, 5})}, opt), Error);
}

// Without a tape: same numbers.
TEST_P(RnnBoth, InferenceModeSameValues) {
  ParamStore store;
  core::Rng rng(10);
  Rnn rnn(store, "enc", config(GetParam(), 2, true), rng);
  std::vector<float> x = random_values(kT * kB * kI, 11);
  Graph train(true), infer(false);
  RnnOptions opt{.lengths = {4, 5, 2}};
  RnnOutput a = rnn.forward(train, train.constant({kT, kB, kI}, x.data()), opt);
  RnnOutput b = rnn.forward(infer, infer.constant({kT, kB, kI}, x.data()), opt);
  EXPECT_FALSE(b.outputs.needs_grad());
  for (int64_t i = 0; i < a.outputs.numel(); ++i) EXPECT_EQ(a.outputs.data()[i], b.outputs.data()[i]);
}

TEST(Rnn, ParameterNamesShapesAndInit) {
  ParamStore store;
  core::Rng rng(12);
  Rnn lstm(store, "enc", config(CellKind::kLstm, 2, true), rng);
  Rnn gru(store, "dec/rnn", config(CellKind::kGru, 1, false), rng);
  const struct {
    const char* name;
    Shape shape;
  } want[] = {
      {"enc/l0/w_ih", {16, kI}}, {"enc/l0/w_hh", {16, kH}}, {"enc/l0/b_ih", {16}}, {"enc/l0/b_hh", {16}},
      {"enc/l0_reverse/w_ih", {16, kI}}, {"enc/l0_reverse/b_hh", {16}}, {"enc/l1/w_ih", {16, 2 * kH}},
      {"enc/l1_reverse/w_hh", {16, kH}}, {"dec/rnn/l0/w_ih", {12, kI}}, {"dec/rnn/l0/w_hh", {12, kH}},
      {"dec/rnn/l0/b_hh", {12}},
  };
  for (const auto& w : want) {
    auto id = store.find(w.name);
    ASSERT_TRUE(id.has_value()) << w.name;
    EXPECT_EQ(store.shape(*id), w.shape) << w.name;
  }
  EXPECT_EQ(store.count(), 16 + 4);
  EXPECT_FALSE(store.find("dec/rnn/l0_reverse/w_ih").has_value());
  EXPECT_EQ(lstm.params(1, 1).w_hh, *store.find("enc/l1_reverse/w_hh"));
  const float bound = 1.0f / std::sqrt(static_cast<float>(kH));
  double norm = 0;
  for (int64_t i = 0; i < store.numel(); ++i) {
    EXPECT_LE(std::fabs(store.values()[i]), bound);
    norm += std::fabs(store.values()[i]);
  }
  EXPECT_GT(norm / store.numel(), 0.3 * bound);  // really drawn, not zero
}

TEST(Rnn, OutputShapesAndStates) {
  ParamStore store;
  core::Rng rng(13);
  Rnn gru(store, "enc", config(CellKind::kGru, 3, true), rng);
  std::vector<float> x = random_values(kT * kB * kI, 14);
  Graph g;
  RnnOutput out = gru.forward(g, g.constant({kT, kB, kI}, x.data()));
  EXPECT_EQ(out.outputs.shape(), (Shape{kT, kB, 2 * kH}));
  ASSERT_EQ(out.final.size(), 6u);
  for (const RnnState& s : out.final) {
    EXPECT_EQ(s.h.shape(), (Shape{kB, kH}));
    EXPECT_FALSE(s.c.valid());
  }
  // Last layer: forward final h == output at t = T-1 (first half); reverse final h == output at
  // t = 0 (second half).
  const float* y = out.outputs.data();
  for (int b = 0; b < kB; ++b)
    for (int j = 0; j < kH; ++j) {
      EXPECT_EQ(out.final[4].h.data()[b * kH + j], y[((kT - 1) * kB + b) * 2 * kH + j]);
      EXPECT_EQ(out.final[5].h.data()[b * kH + j], y[b * 2 * kH + kH + j]);
    }
}

// Dropout acts between layers only, and only when an Rng is given (in either graph mode).
TEST(Rnn, DropoutBetweenLayersOnly) {
  std::vector<float> x = random_values(kT * kB * kI, 15);
  auto run = [&](int layers, bool with_rng, bool grad) {
    ParamStore store;
    core::Rng rng(16), drop(17);
    Rnn rnn(store, "enc", config(CellKind::kLstm, layers, false, 0.5f), rng);
    Graph g(grad);
    RnnOutput out = rnn.forward(g, g.constant({kT, kB, kI}, x.data()), {.dropout_rng = with_rng ? &drop : nullptr});
    return std::vector<float>(out.outputs.data(), out.outputs.data() + out.outputs.numel());
  };
  EXPECT_EQ(run(1, true, true), run(1, false, true));   // one layer: nothing between layers
  EXPECT_NE(run(2, true, true), run(2, false, true));   // two layers, training: masks drawn
  EXPECT_EQ(run(2, false, true), run(2, false, false));  // no Rng: off in both modes
  EXPECT_EQ(run(2, true, true), run(2, true, false));   // an Rng decides, not the grad mode
  EXPECT_EQ(run(2, true, true), run(2, true, true));    // same seed, same masks
}

TEST(Rnn, Errors) {
  ParamStore store;
  core::Rng rng(18);
  EXPECT_THROW(Rnn(store, "bad", {.input_size = 0, .hidden_size = 4}, rng), Error);
  EXPECT_THROW(Rnn(store, "bad", {.input_size = 3, .hidden_size = 4, .layers = 0}, rng), Error);
  EXPECT_THROW(Rnn(store, "bad", {.input_size = 3, .hidden_size = 4, .dropout = 1.0f}, rng), Error);
  Rnn bi(store, "bi", config(CellKind::kLstm, 1, true), rng);
  Rnn uni(store, "uni", config(CellKind::kLstm, 2, false), rng);
  Graph g;
  Var x = g.zeros({kT, kB, kI});
  EXPECT_THROW(bi.forward(g, g.zeros({kT, kB, kI + 1})), Error);              // input width
  EXPECT_THROW(bi.forward(g, g.zeros({kB, kI})), Error);                      // rank
  EXPECT_THROW(bi.forward(g, x, {.lengths = {1, 2}}), Error);                 // count
  EXPECT_THROW(bi.forward(g, x, {.lengths = {1, 2, kT + 1}}), Error);         // too long
  EXPECT_THROW(bi.forward(g, x, {.lengths = {1, -1, 2}}), Error);             // negative
  EXPECT_THROW(bi.forward(g, x, {.initial = {bi.zero_state(g, kB)[0]}}), Error);  // 1 state, needs L*D = 2
  EXPECT_THROW(uni.forward(g, x, {.initial = uni.zero_state(g, kB + 1)}), Error);  // batch
  std::vector<RnnState> no_c = uni.zero_state(g, kB);
  no_c[1].c = Var{};
  EXPECT_THROW(uni.forward(g, x, {.initial = no_c}), Error);                  // LSTM state without c
  EXPECT_THROW(bi.step(g, g.zeros({kB, kI}), bi.zero_state(g, kB)), Error);   // bidirectional
  EXPECT_THROW(uni.step(g, g.zeros({kB, kI}), {uni.zero_state(g, kB)[0]}), Error);  // state count
  EXPECT_THROW(uni.step(g, g.zeros({kB, kI + 1}), uni.zero_state(g, kB)), Error);   // width
  EXPECT_NO_THROW(uni.step(g, g.zeros({kB, kI}), uni.zero_state(g, kB)));
}

}  // namespace rnn_test
}  // namespace engram::nn
