// Behaviour of the basic modules: Embedding row-sparse gradients and padding, attention weights
// and context (incl. the seeds' example worked by hand), parameter naming, initialisers, weight
// tying, Linear / Dropout / LayerNorm values.
// Dims: B batch, S source len, H memory width, Hq query width, A attention dim, V vocab, D dim.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engram/core/ops.h"
#include "engram/nn/attention.h"
#include "engram/nn/dropout.h"
#include "engram/nn/embedding.h"
#include "engram/nn/init.h"
#include "engram/nn/layer_norm.h"
#include "engram/nn/linear.h"
#include "io/expect_error.h"

namespace engram::nn {
namespace {

using core::Rng;
using io::testing::error_of;
using io::testing::expect_message;

// Runs backward from `out` with dL/dout = 1 everywhere.
void backward_ones(Graph& g, Var out) {
  std::vector<float> seed(out.numel(), 1.0f);
  g.backward(out, seed.data());
}

// ---------------------------------------------------------------- Embedding

TEST(Embedding, BackwardTouchesOnlyUsedRows) {
  ParamStore store;
  Rng rng(1);
  Embedding emb(store, "emb", {.vocab = 8, .dim = 3}, rng);
  Graph g;
  Var out = emb.forward(g, {1, 4, 1});  // [3, D]
  ASSERT_EQ(out.shape(), Shape({3, 3}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out.value().at(0, i), store.value(emb.weight()).at(1, i));
    EXPECT_EQ(out.value().at(1, i), store.value(emb.weight()).at(4, i));
  }
  std::vector<float> seed = {1, 2, 3, 10, 20, 30, 100, 200, 300};  // [3, D]
  g.backward(out, seed.data());
  Tensor grad = store.grad(emb.weight());  // [V, D]
  for (int v = 0; v < 8; ++v)
    for (int d = 0; d < 3; ++d) {
      const float expected = v == 1 ? seed[d] + seed[6 + d] : v == 4 ? seed[3 + d] : 0.0f;
      EXPECT_EQ(grad.at(v, d), expected) << "row " << v << " col " << d;
    }
}

TEST(Embedding, PaddingRowStaysZero) {
  ParamStore store;
  Rng rng(2);
  Embedding emb(store, "emb", {.vocab = 5, .dim = 4, .padding_id = 0}, rng);
  Tensor table = store.value(emb.weight());
  for (int d = 0; d < 4; ++d) EXPECT_EQ(table.at(0, d), 0.0f);
  Graph g;
  Var out = emb.forward(g, {0, 2, 0}, {3});  // [3, D]
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(out.value().at(0, d), 0.0f);
    EXPECT_EQ(out.value().at(2, d), 0.0f);
    EXPECT_EQ(out.value().at(1, d), table.at(2, d));
  }
  backward_ones(g, out);
  Tensor grad = store.grad(emb.weight());
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(grad.at(0, d), 0.0f) << "padding row got a gradient";
    EXPECT_EQ(grad.at(2, d), 1.0f);
  }
  // A second Embedding tied to a table zeroes its own padding row on construction.
  table.at(3, 1) = 7.0f;
  Embedding shared(store, "emb_tgt", emb.weight(), /*padding_id=*/3);
  EXPECT_EQ(store.value(emb.weight()).at(3, 1), 0.0f);
  EXPECT_EQ(store.count(), 1);
}

TEST(Embedding, ShapedIdsAndBadIds) {
  ParamStore store;
  Rng rng(3);
  Embedding emb(store, "emb", {.vocab = 6, .dim = 2}, rng);
  Graph g;
  Var out = emb.forward(g, {0, 1, 2, 3, 4, 5}, {3, 2});  // ids [T, B] -> [T, B, D]
  ASSERT_EQ(out.shape(), Shape({3, 2, 2}));
  EXPECT_EQ(out.value()[2 * 5 + 1], store.value(emb.weight()).at(5, 1));
  EXPECT_THROW(emb.forward(g, {0, 6}), Error);
  EXPECT_THROW(emb.forward(g, {0, -1}), Error);
  EXPECT_THROW(emb.forward(g, {0, 1, 2}, {2, 2}), Error);
}

// ---------------------------------------------------------------- Attention

// n values uniform in [-1, 1] from a fixed seed.
std::vector<float> random_values(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

TEST(Attention, AlphaRowsSumToOneAndMaskedPositionsAreExactlyZero) {
  constexpr int kS = 5, kB = 3, kH = 4;
  const std::vector<float> memory = random_values(kS * kB * kH, 9);  // [S, B, H]
  const std::vector<float> query = random_values(kB * kH, 10);        // [B, Hq]
  for (AttentionScore score : {AttentionScore::kDot, AttentionScore::kGeneral, AttentionScore::kAdditive}) {
    SCOPED_TRACE(attention_score_name(score));
    ParamStore store;
    Rng rng(4);
    Attention attn(store, "attn", {.score = score, .query_dim = kH, .memory_dim = kH, .attn_dim = 3}, rng);
    Graph g;
    Var mem_var = g.constant({kS, kB, kH}, memory.data());
    Var q = g.constant({kB, kH}, query.data());
    const std::vector<int32_t> lengths = {5, 2, 0};
    AttentionOutput out = attn.step(g, attn.prepare(g, mem_var, lengths), q);
    ASSERT_EQ(out.alpha.shape(), Shape({kB, kS}));
    ASSERT_EQ(out.context.shape(), Shape({kB, kH}));
    Tensor alpha = out.alpha.value();  // the weights as plain floats
    for (int b = 0; b < kB; ++b) {
      double sum = 0;
      for (int s = 0; s < kS; ++s) {
        if (s >= lengths[b]) {
          EXPECT_EQ(alpha.at(b, s), 0.0f) << "b=" << b << " s=" << s;
        } else {
          EXPECT_GT(alpha.at(b, s), 0.0f);
        }
        sum += alpha.at(b, s);
      }
      EXPECT_NEAR(sum, lengths[b] > 0 ? 1.0 : 0.0, 1e-6) << "b=" << b;
    }
    for (int h = 0; h < kH; ++h) EXPECT_EQ(out.context.value().at(2, h), 0.0f);  // all masked: zero context

    // An explicit [B, S] mask gives exactly the weights of the equivalent lengths.
    std::vector<float> mask(kB * kS, 0.0f);
    for (int b = 0; b < kB; ++b)
      for (int s = 0; s < lengths[b]; ++s) mask[b * kS + s] = 1.0f;
    AttentionOutput out2 = attn.step(g, attn.prepare(g, mem_var, mask.data()), q);
    for (int i = 0; i < kB * kS; ++i) EXPECT_EQ(out2.alpha.value()[i], alpha[i]);
  }
}

// The seeds' picture: three encoder states, a decoder query that lines up with the third one.
// Worked by hand: e_i = q·h_i, α = softmax(e), c = Σ α_i h_i.
TEST(Attention, SeedExampleDotAttendsToThirdPositionAndContextIsWeightedSum) {
  const float h[3][3] = {{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}, {0.6f, 0.0f, 0.8f}};  // h_1..h_3, [S, H]
  const float q[3] = {2.4f, 0.0f, 3.2f};                                               // 4 h_3, [B=1, Hq]
  ParamStore store;
  Rng rng(5);
  Attention attn(store, "attn", {.score = AttentionScore::kDot, .query_dim = 3, .memory_dim = 3}, rng);
  EXPECT_EQ(store.count(), 0);
  Graph g;
  Var memory = g.constant({3, 1, 3}, &h[0][0]);  // [S, B, H]
  AttentionOutput out = attn.step(g, attn.prepare(g, memory), g.constant({1, 3}, q));

  // e = (2.4, 0, 4.0): α_i = exp(e_i) / Σ exp(e_j).
  const double e[3] = {2.4, 0.0, 4.0};
  const double z = std::exp(e[0]) + std::exp(e[1]) + std::exp(e[2]);
  const double a[3] = {std::exp(e[0]) / z, std::exp(e[1]) / z, std::exp(e[2]) / z};  // ≈ 0.166, 0.015, 0.820
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(out.alpha.value()[i], a[i], 1e-6);
  EXPECT_GT(out.alpha.value()[2], 0.8f);
  EXPECT_GT(out.alpha.value()[2], out.alpha.value()[0]);
  EXPECT_GT(out.alpha.value()[0], out.alpha.value()[1]);
  // c = α_1 h_1 + α_2 h_2 + α_3 h_3 = (α_1 + 0.6 α_3, α_2, 0.8 α_3)
  EXPECT_NEAR(out.context.value()[0], a[0] + 0.6 * a[2], 1e-6);
  EXPECT_NEAR(out.context.value()[1], a[1], 1e-6);
  EXPECT_NEAR(out.context.value()[2], 0.8 * a[2], 1e-6);
}

// general: e_i = q · W h_i; additive: e_i = vᵀ tanh(W_q q + W_k h_i); recomputed in double.
TEST(Attention, GeneralAndAdditiveScoresMatchTheirFormulas) {
  constexpr int kS = 3, kB = 2, kH = 4, kHq = 5, kA = 3;
  const std::vector<float> memory = random_values(kS * kB * kH, 21);  // [S, B, H]
  const std::vector<float> query = random_values(kB * kHq, 22);       // [B, Hq]
  auto mem_at = [&](int s, int b, int i) { return static_cast<double>(memory[(s * kB + b) * kH + i]); };
  for (AttentionScore score : {AttentionScore::kGeneral, AttentionScore::kAdditive}) {
    SCOPED_TRACE(attention_score_name(score));
    ParamStore store;
    Rng rng(6);
    Attention attn(store, "attn", {.score = score, .query_dim = kHq, .memory_dim = kH, .attn_dim = kA}, rng);
    Graph g;
    AttentionOutput out = attn.step(g, attn.prepare(g, g.constant({kS, kB, kH}, memory.data())),
                                    g.constant({kB, kHq}, query.data()));
    for (int b = 0; b < kB; ++b) {
      const float* qb = &query[b * kHq];
      double e[kS], z = 0;
      for (int s = 0; s < kS; ++s) {
        e[s] = 0;
        if (score == AttentionScore::kGeneral) {
          Tensor w = store.value(attn.w_key());  // [Hq, H]
          for (int r = 0; r < kHq; ++r) {
            double wh = 0;
            for (int i = 0; i < kH; ++i) wh += w.at(r, i) * mem_at(s, b, i);
            e[s] += qb[r] * wh;
          }
        } else {
          Tensor wq = store.value(attn.w_query()), wk = store.value(attn.w_key()), v = store.value(attn.v());
          for (int j = 0; j < kA; ++j) {
            double pre = 0;
            for (int r = 0; r < kHq; ++r) pre += wq.at(j, r) * qb[r];
            for (int i = 0; i < kH; ++i) pre += wk.at(j, i) * mem_at(s, b, i);
            e[s] += v[j] * std::tanh(pre);
          }
        }
        z += std::exp(e[s]);
      }
      for (int s = 0; s < kS; ++s) EXPECT_NEAR(out.alpha.value().at(b, s), std::exp(e[s]) / z, 1e-5);
      for (int i = 0; i < kH; ++i) {
        double c = 0;
        for (int s = 0; s < kS; ++s) c += std::exp(e[s]) / z * mem_at(s, b, i);
        EXPECT_NEAR(out.context.value().at(b, i), c, 1e-5);
      }
    }
  }
}

TEST(Attention, TimeMajorAndBatchMajorMemoryAgree) {
  constexpr int kS = 4, kB = 2, kH = 3;
  const std::vector<float> tm = random_values(kS * kB * kH, 31);  // [S, B, H]
  std::vector<float> bm(tm.size());                                // [B, S, H]
  for (int s = 0; s < kS; ++s)
    for (int b = 0; b < kB; ++b)
      for (int i = 0; i < kH; ++i) bm[(b * kS + s) * kH + i] = tm[(s * kB + b) * kH + i];
  const std::vector<float> query = random_values(kB * kH, 32);
  AttentionConfig cfg{.score = AttentionScore::kAdditive, .query_dim = kH, .memory_dim = kH, .attn_dim = 5};
  ParamStore s1, s2;
  Rng r1(7), r2(7);
  Attention a1(s1, "attn", cfg, r1);
  cfg.layout = MemoryLayout::kBatchMajor;
  Attention a2(s2, "attn", cfg, r2);
  Graph g;
  Var q = g.constant({kB, kH}, query.data());
  AttentionOutput o1 = a1.step(g, a1.prepare(g, g.constant({kS, kB, kH}, tm.data()), {4, 3}), q);
  AttentionOutput o2 = a2.step(g, a2.prepare(g, g.constant({kB, kS, kH}, bm.data()), {4, 3}), q);
  for (int i = 0; i < kB * kS; ++i) EXPECT_FLOAT_EQ(o1.alpha.value()[i], o2.alpha.value()[i]);
  for (int i = 0; i < kB * kH; ++i) EXPECT_FLOAT_EQ(o1.context.value()[i], o2.context.value()[i]);
}

TEST(Attention, ScoreNamesAndBadInputs) {
  EXPECT_EQ(attention_score_from_name("dot"), AttentionScore::kDot);
  EXPECT_EQ(attention_score_from_name("general"), AttentionScore::kGeneral);
  EXPECT_EQ(attention_score_from_name("additive"), AttentionScore::kAdditive);
  EXPECT_EQ(attention_score_from_name("concat"), AttentionScore::kAdditive);
  EXPECT_EQ(AttentionScore::kConcat, AttentionScore::kAdditive);
  EXPECT_THROW(attention_score_from_name("bilinear"), Error);

  ParamStore store;
  Rng rng(8);
  EXPECT_THROW(Attention(store, "bad", {.score = AttentionScore::kDot, .query_dim = 3, .memory_dim = 4}, rng), Error);
  Attention attn(store, "attn", {.score = AttentionScore::kGeneral, .query_dim = 3, .memory_dim = 4}, rng);
  Graph g;
  Var memory = g.zeros({5, 2, 4});  // [S, B, H]
  EXPECT_THROW(attn.prepare(g, g.zeros({5, 2, 3})), Error);        // wrong H
  EXPECT_THROW(attn.prepare(g, memory, {5, 6}), Error);             // length > S
  EXPECT_THROW(attn.prepare(g, memory, {5}), Error);                // B lengths needed
  AttentionMemory mem = attn.prepare(g, memory);
  EXPECT_THROW(attn.step(g, mem, g.zeros({2, 4})), Error);          // query is [B, Hq=3]
  EXPECT_THROW(attn.step(g, mem, g.zeros({3, 3})), Error);          // batch differs
  // A zero memory scores every position alike: alpha = 1/S, and the context is zero.
  const AttentionOutput ok = attn.step(g, mem, g.zeros({2, 3}));
  ASSERT_EQ(ok.alpha.shape(), Shape({2, 5}));
  ASSERT_EQ(ok.context.shape(), Shape({2, 4}));
  for (int i = 0; i < 10; ++i) EXPECT_FLOAT_EQ(ok.alpha.value()[i], 0.2f) << i;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ok.context.value()[i], 0.0f) << i;
}

// ---------------------------------------------------------------- ParamStore naming

TEST(ParamStoreNaming, ModulesNameParametersByPathAndRejectDuplicates) {
  ParamStore store;
  Rng rng(9);
  Linear out(store, "decoder/out", {.in_dim = 4, .out_dim = 7}, rng);
  Attention attn(store, "decoder/attention",
                 {.score = AttentionScore::kAdditive, .query_dim = 4, .memory_dim = 6, .attn_dim = 5}, rng);
  LayerNorm ln(store, "decoder/ln", {.dim = 4});
  Embedding emb(store, "encoder/embed", {.vocab = 10, .dim = 4}, rng);
  EXPECT_EQ(store.name(out.weight()), "decoder/out/weight");
  EXPECT_EQ(store.shape(out.weight()), Shape({7, 4}));  // [N, K]
  EXPECT_EQ(store.name(*out.bias()), "decoder/out/bias");
  EXPECT_EQ(store.shape(*out.bias()), Shape({7}));
  EXPECT_EQ(store.find("decoder/attention/w_query"), attn.w_query());
  EXPECT_EQ(store.shape(attn.w_query()), Shape({5, 4}));  // [A, Hq]
  EXPECT_EQ(store.shape(attn.w_key()), Shape({5, 6}));    // [A, H]
  EXPECT_EQ(store.shape(attn.v()), Shape({1, 5}));        // [1, A]
  EXPECT_EQ(store.name(ln.gain()), "decoder/ln/gain");
  EXPECT_EQ(store.name(ln.bias()), "decoder/ln/bias");
  EXPECT_EQ(store.name(emb.weight()), "encoder/embed/weight");
  EXPECT_EQ(store.count(), 8);
  EXPECT_EQ(store.numel(), 7 * 4 + 7 + 5 * 4 + 5 * 6 + 5 + 4 + 4 + 10 * 4);

  try {
    Linear again(store, "decoder/out", {.in_dim = 4, .out_dim = 7}, rng);
    FAIL() << "duplicate path accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("duplicate parameter name 'decoder/out/weight'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(store.add("encoder/embed/weight", {1}), Error);
}

// The flat buffers: values keep their contents as the store grows (a large growth remaps pages),
// new parameters start at 0, and gradients exist from the first grads() call on, 0 there.
TEST(ParamStoreBuffers, GrowingKeepsValuesAndGradientsComeOnFirstUse) {
  ParamStore store;
  const ParamId a = store.add("a", {3});
  for (int i = 0; i < 3; ++i) store.value(a).data[i] = 1.0f + i;
  const ParamId big = store.add("big", {1000, 1000});  // past any small-block allocation
  for (int64_t i = 0; i < store.value(big).numel(); i += 4093) EXPECT_EQ(store.value(big).data[i], 0.0f) << i;
  store.value(big).data[999'999] = 5.0f;
  const ParamId c = store.add("c", {2000, 1000});
  EXPECT_EQ(store.value(a).data[2], 3.0f);
  EXPECT_EQ(store.value(big).data[999'999], 5.0f);
  EXPECT_EQ(store.value(c).data[0], 0.0f);
  EXPECT_EQ(store.value(c).data[1'999'999], 0.0f);
  float* grads = store.grads();
  ASSERT_NE(grads, nullptr);
  EXPECT_EQ(grads[0], 0.0f);
  EXPECT_EQ(grads[store.numel() - 1], 0.0f);
  grads[1] = 7.0f;
  const ParamId d = store.add("d", {5});  // after the gradients exist: they grow with zeros
  EXPECT_EQ(store.grads()[1], 7.0f);
  EXPECT_EQ(store.grad(d).data[4], 0.0f);
  store.zero_grad();
  EXPECT_EQ(store.grads()[1], 0.0f);
  ParamStore copy = store;  // a deep copy
  store.value(a).data[0] = -1.0f;
  EXPECT_EQ(copy.value(a).data[0], 1.0f);
  EXPECT_EQ(copy.value(big).data[999'999], 5.0f);
  EXPECT_EQ(copy.numel(), store.numel());
}

// A parameter that would take the store past 3/4 of the machine's memory (core::memory_limit) is
// an error naming it, before anything is mapped; the store is as it was.
TEST(ParamStoreBuffers, AModelLargerThanTheMachineIsRefusedBeforeItIsMapped) {
  ParamStore store;
  store.add("a", {3});
  expect_message(error_of([&] { store.add("huge", {int64_t{1} << 20, int64_t{1} << 20}); }),  // 4 TiB of floats
                 {"at 'huge' of shape [1048576, 1048576]"});
  EXPECT_EQ(store.count(), 1);
  EXPECT_EQ(store.numel(), 3);
}

// A shape whose element count passes int64 (four dimensions of 2^31 - 1) is refused as too large
// rather than wrapped to a small or negative count, and a negative dimension (an int width
// product that wrapped) is refused by name; the store is as it was.
TEST(ParamStoreBuffers, ACountPastInt64OrANegativeDimensionIsRefused) {
  ParamStore store;
  store.add("a", {3});
  const int most = std::numeric_limits<int>::max();
  expect_message(error_of([&] { store.add("wide", {most, most, most, most}); }),
                 {"the model's parameters need more than"});
  Shape negative{2, 3};
  negative[0] = -4;  // what 4 * (2^31 - 1) wraps to as an int
  expect_message(error_of([&] { store.add("wrapped", negative); }), {"parameter 'wrapped': negative dimension"});
  EXPECT_EQ(store.count(), 1);
  EXPECT_EQ(store.numel(), 3);
}

// ---------------------------------------------------------------- initialisers

TEST(Init, OrthogonalGivesIdentityGramPerBlock) {
  ParamStore store;
  Rng rng(10);
  constexpr int kH = 6;
  ParamId square = store.add("square", {kH, kH});
  ParamId stacked = store.add("stacked", {4 * kH, kH});  // LSTM-style [4H, H]
  init::orthogonal(store, square, rng);
  init::orthogonal(store, stacked, rng, 2.0f);
  auto check_block = [&](Tensor w, int r0, double gain) {
    for (int i = 0; i < kH; ++i)
      for (int j = 0; j < kH; ++j) {
        double dot = 0;  // (WᵀW)_ij over the block's rows
        for (int r = 0; r < kH; ++r) dot += static_cast<double>(w.at(r0 + r, i)) * w.at(r0 + r, j);
        EXPECT_NEAR(dot, i == j ? gain * gain : 0.0, 1e-5) << "block " << r0 << " (" << i << "," << j << ")";
      }
  };
  check_block(store.value(square), 0, 1.0);
  for (int blk = 0; blk < 4; ++blk) check_block(store.value(stacked), blk * kH, 2.0);
}

TEST(Init, GlorotAndPyTorchBounds) {
  ParamStore store;
  Rng rng(11);
  Linear glorot(store, "glorot", {.in_dim = 50, .out_dim = 30}, rng);
  Linear torch(store, "torch", {.in_dim = 50, .out_dim = 30, .init = LinearInit::kPyTorch}, rng);
  auto check_uniform = [](Tensor t, double bound) {
    double max_abs = 0, sum = 0, sum_sq = 0;
    for (float x : t) {
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(x)));
      sum += x;
      sum_sq += static_cast<double>(x) * x;
    }
    const double n = static_cast<double>(t.numel());
    EXPECT_LE(max_abs, bound);
    EXPECT_GT(max_abs, 0.95 * bound);                        // the whole range is used
    EXPECT_NEAR(sum / n, 0.0, 0.1 * bound);                  // centred
    EXPECT_NEAR(sum_sq / n, bound * bound / 3.0, 0.1 * bound * bound / 3.0);  // var of U(-a, a)
  };
  check_uniform(store.value(glorot.weight()), std::sqrt(6.0 / (50 + 30)));
  for (float b : store.value(*glorot.bias())) EXPECT_EQ(b, 0.0f);
  check_uniform(store.value(torch.weight()), 1.0 / std::sqrt(50.0));
  double max_bias = 0;
  for (float b : store.value(*torch.bias())) max_bias = std::max(max_bias, static_cast<double>(std::fabs(b)));
  EXPECT_LE(max_bias, 1.0 / std::sqrt(50.0));
  EXPECT_GT(max_bias, 0.0);
}

// A model about to be read from a checkpoint is built without initialising: inside the scope the
// initialisers leave zeros and draw nothing from the generator; they work again after it.
TEST(Init, SkipOnThisThreadLeavesZerosAndDrawsNothing) {
  ParamStore store;
  Rng rng(12), same(12);
  {
    const init::SkipOnThisThread skip;
    {
      const init::SkipOnThisThread nested;
    }
    Linear lin(store, "lin", {.in_dim = 8, .out_dim = 6}, rng);
    LayerNorm ln(store, "ln", {.dim = 4});
    const ParamId q = store.add("q", {12, 6});
    init::orthogonal(store, q, rng);
    init::normal(store, q, rng, 0.0f, 1.0f);
    for (int64_t i = 0; i < store.numel(); ++i) EXPECT_EQ(store.values()[i], 0.0f) << store.name(0) << " " << i;
  }
  EXPECT_EQ(rng.uniform(0.0f, 1.0f), same.uniform(0.0f, 1.0f));  // nothing was drawn
  Linear after(store, "after", {.in_dim = 8, .out_dim = 6}, rng);
  double sum_abs = 0;
  for (float x : store.value(after.weight())) sum_abs += std::fabs(x);
  EXPECT_GT(sum_abs, 0.0);
}

// ---------------------------------------------------------------- weight tying

TEST(WeightTying, OutputProjectionSharesTheEmbeddingParamAndAccumulatesBothGradients) {
  ParamStore store;
  Rng rng(12);
  Embedding emb(store, "embed", {.vocab = 6, .dim = 4}, rng);
  Linear out(store, "out", emb.weight(), /*bias=*/false);
  EXPECT_TRUE(out.tied());
  EXPECT_EQ(out.weight(), emb.weight());
  EXPECT_EQ(out.in_dim(), 4);
  EXPECT_EQ(out.out_dim(), 6);
  EXPECT_EQ(store.count(), 1);  // nothing new added
  EXPECT_THROW(Linear(store, "bad", ParamId{5}, false), Error);

  const std::vector<int32_t> ids = {2, 5};
  const std::vector<float> x_values = random_values(2 * 4, 40);  // [2, D]
  // dL/dW of L = Σ (emb(ids))² and/or Σ (x Wᵀ)², each case in one graph with one backward.
  auto grad_of = [&](bool use_embedding, bool use_output) {
    store.zero_grad();
    Graph g;
    std::vector<Var> parts;
    if (use_embedding) parts.push_back(core::reshape(core::square(emb.forward(g, ids)), {2 * 4}));
    if (use_output) {
      Var logits = out.forward(g, g.constant({2, 4}, x_values.data()));  // [2, V]
      parts.push_back(core::reshape(core::square(logits), {2 * 6}));
    }
    backward_ones(g, parts.size() == 1 ? parts[0] : core::concat(parts, 0));
    Tensor gr = store.grad(emb.weight());  // [V, D]
    return std::vector<float>(gr.begin(), gr.end());
  };
  const std::vector<float> from_embedding = grad_of(true, false);
  const std::vector<float> from_output = grad_of(false, true);
  const std::vector<float> from_both = grad_of(true, true);
  double nonzero_both = 0;
  for (size_t i = 0; i < from_both.size(); ++i) {
    EXPECT_NEAR(from_both[i], from_embedding[i] + from_output[i], 1e-5) << i;
    nonzero_both += from_embedding[i] != 0.0f && from_output[i] != 0.0f;
  }
  EXPECT_GT(nonzero_both, 0);  // some rows really receive gradient from both uses
}

// ---------------------------------------------------------------- Linear, Dropout, LayerNorm

TEST(Linear, ThreeDimensionalInputMatchesManualProduct) {
  ParamStore store;
  Rng rng(13);
  Linear lin(store, "lin", {.in_dim = 4, .out_dim = 3, .init = LinearInit::kPyTorch}, rng);
  const std::vector<float> x = random_values(2 * 5 * 4, 41);  // [2, 5, K]
  Graph g;
  Var y = lin.forward(g, g.constant({2, 5, 4}, x.data()));
  ASSERT_EQ(y.shape(), Shape({2, 5, 3}));
  Tensor w = store.value(lin.weight()), b = store.value(*lin.bias());
  for (int r = 0; r < 10; ++r)
    for (int n = 0; n < 3; ++n) {
      double expected = b[n];
      for (int k = 0; k < 4; ++k) expected += static_cast<double>(x[r * 4 + k]) * w.at(n, k);
      EXPECT_NEAR(y.value()[r * 3 + n], expected, 1e-5);
    }
  EXPECT_THROW(lin.forward(g, g.zeros({2, 5})), Error);
}

TEST(Dropout, TrainingFlagSeedAndScaling) {
  EXPECT_THROW(Dropout(1.0f), Error);
  EXPECT_THROW(Dropout(-0.1f), Error);
  Dropout drop(0.5f);
  const std::vector<float> x(1000, 1.0f);
  Graph g;
  Var in = g.constant({10, 100}, x.data());
  Rng rng(14);
  EXPECT_EQ(drop.forward(g, in, rng, /*training=*/false).id, in.id);  // identity, nothing drawn
  Rng r1(15), r2(15);
  Var a = drop.forward(g, in, r1, true), b = drop.forward(g, in, r2, true);
  ASSERT_EQ(a.shape(), in.shape());
  int zeros = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(a.value()[i] == 0.0f || a.value()[i] == 2.0f) << a.value()[i];
    EXPECT_EQ(a.value()[i], b.value()[i]);  // same seed, same mask
    zeros += a.value()[i] == 0.0f;
  }
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
  Dropout none(0.0f);
  EXPECT_EQ(none.forward(g, in, rng, true).id, in.id);
}

TEST(LayerNorm, InitialOutputHasZeroMeanUnitVariancePerRow) {
  ParamStore store;
  LayerNorm ln(store, "ln", {.dim = 8});
  for (float v : store.value(ln.gain())) EXPECT_EQ(v, 1.0f);
  for (float v : store.value(ln.bias())) EXPECT_EQ(v, 0.0f);
  const std::vector<float> x = random_values(3 * 8, 42);
  Graph g;
  Var y = ln.forward(g, g.constant({3, 8}, x.data()));
  ASSERT_EQ(y.shape(), Shape({3, 8}));
  for (int r = 0; r < 3; ++r) {
    double mean = 0, var = 0;
    for (int d = 0; d < 8; ++d) mean += y.value().at(r, d) / 8.0;
    for (int d = 0; d < 8; ++d) var += std::pow(y.value().at(r, d) - mean, 2) / 8.0;
    EXPECT_NEAR(mean, 0.0, 1e-5);
    EXPECT_NEAR(var, 1.0, 1e-3);  // eps = 1e-5 shrinks it a little
  }
}

}  // namespace
}  // namespace engram::nn
