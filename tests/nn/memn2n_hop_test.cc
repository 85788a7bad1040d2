// MemN2N hop: finite-difference gradient checks of one hop (PE, BoW, TE, linear start) and of
// two-hop stacks with adjacent and layer-wise tying; the fused bag-embedding and attention ops
// against their composed references (value and gradient); errors on bad ids.
// Dims: B batch, N memory slots, W words per slot, V vocab, D width, T time rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "engram/core/ops.h"
#include "engram/nn/init.h"
#include "engram/nn/memory/memn2n_hop.h"
#include "nn/module_cases.h"

namespace engram::nn {

namespace memn2n_hop_test {

constexpr int kB = 2, kN = 3, kW = 4, kV = 7, kD = 5, kT = 4;
// Sample 0: three sentences; sample 1: two sentences and an empty slot.  [B, N, W]
const int32_t kWords[kB * kN * kW] = {1, 2, 3, 0, 4, 5, 0, 0, 6, 2, 1, 3,
                                      2, 6, 0, 0, 5, 5, 4, 1, 0, 0, 0, 0};
const int32_t kTime[kB * kN] = {2, 1, 0, 1, 0, -1};              // [B, N]
const float kMask[kB * kN] = {1, 1, 1, 1, 1, 0};                 // [B, N]

MemoryInput test_memory() { return {kWords, kTime, kMask, kB, kN, kW}; }

using Forward = std::function<Var(Graph&, const std::vector<Var>&)>;

enum class Stack { kOne, kAdjacent, kLayerWise };

struct HopRow {
  BagEncoding encoding = SentenceEncoding::kPosition;
  bool temporal = true;
  bool softmax = true;
  bool fused = true;
  Stack stack = Stack::kOne;
};

// Input: u [B, D]. Output: the last read and every hop's attention, concatenated.
ModuleCase hop_case(std::string name, HopRow row) {
  ModuleCase c;
  c.name = std::move(name);
  c.inputs = {{{kB, kD}, -0.5f, 0.5f}};
  c.build = [row](ParamStore& store, core::Rng& rng) -> Forward {
    const Memn2nHopConfig cfg{.vocab = kV, .dim = kD, .time_rows = kT, .encoding = row.encoding,
                              .temporal = row.temporal, .init_stddev = 0.5f, .fused = row.fused};
    auto hop0 = std::make_shared<Memn2nHop>(store, "hop_0", cfg, rng);
    std::shared_ptr<Memn2nHop> hop1;
    ParamId h = -1;
    if (row.stack == Stack::kAdjacent) {
      hop1 = std::make_shared<Memn2nHop>(store, "hop_1", cfg, hop0->output(), std::nullopt, rng);
    } else if (row.stack == Stack::kLayerWise) {
      hop1 = std::make_shared<Memn2nHop>(store, "hop_1", cfg, hop0->input(), hop0->output(), rng);
      h = store.add("h", {kD, kD});
      init::normal(store, h, rng, 0.0f, 0.5f);
    }
    return [hop0, hop1, h, row, &store](Graph& g, const std::vector<Var>& in) {
      const MemoryInput mem = test_memory();
      HopOutput r0 = hop0->forward(g, mem, in[0], row.softmax);
      if (!hop1) return core::concat({r0.read, r0.attention}, 1);  // [B, D + N]
      Var u1 = h >= 0 ? core::add(core::affine(in[0], store.var(g, h)), r0.read) : core::add(in[0], r0.read);
      HopOutput r1 = hop1->forward(g, mem, u1, row.softmax);
      return core::concat({r1.read, r0.attention, r1.attention}, 1);  // [B, D + 2N]
    };
  };
  return c;
}

}  // namespace memn2n_hop_test

// The module-table family of the MemN2N hop (checked by module_grad_check_test.cc with every other module).
std::vector<ModuleCase> memn2n_module_cases() {
  using namespace memn2n_hop_test;  // this file's cases
  using E = SentenceEncoding;
  return {
      hop_case("memn2n_hop/pe_te", {}),
      hop_case("memn2n_hop/pe_te/composed", {.fused = false}),
      hop_case("memn2n_hop/bow", {.encoding = E::kBow, .temporal = false}),
      hop_case("memn2n_hop/bow_te", {.encoding = E::kBow}),
      hop_case("memn2n_hop/pe_global_te", {.encoding = {E::kPositionGlobal, kW + 1}}),
      hop_case("memn2n_hop/pe_te/linear_start", {.softmax = false}),
      hop_case("memn2n_hops/adjacent/pe_te", {.stack = Stack::kAdjacent}),
      hop_case("memn2n_hops/layerwise/pe_te", {.stack = Stack::kLayerWise}),
      hop_case("memn2n_hops/adjacent/pe_global_te/linear_start",
               {.encoding = {E::kPositionGlobal, kW}, .softmax = false, .stack = Stack::kAdjacent}),
      hop_case("memn2n_hops/layerwise/bow/linear_start",
               {.encoding = E::kBow, .temporal = false, .softmax = false, .stack = Stack::kLayerWise}),
  };
}

namespace memn2n_hop_test {

// Runs f(fused) on fresh leaves over the same buffers, backpropagates a fixed seed and returns
// the output values followed by every input gradient.
std::vector<float> run_both(const std::vector<std::vector<float>>& inputs, const std::vector<core::Shape>& shapes,
                            const std::function<Var(Graph&, const std::vector<Var>&)>& f) {
  Graph g;
  std::vector<std::vector<float>> vals = inputs;
  std::vector<Var> vars;
  for (size_t k = 0; k < vals.size(); ++k) vars.push_back(g.variable(Tensor{vals[k].data(), shapes[k]}));
  Var out = f(g, vars);
  std::vector<float> seed(out.numel());
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = std::sin(0.7f * static_cast<float>(i) + 0.3f);
  g.backward(out, seed.data());
  std::vector<float> result(out.data(), out.data() + out.numel());
  for (const Var& v : vars) {
    if (v.grad()) result.insert(result.end(), v.grad(), v.grad() + v.numel());
    else result.insert(result.end(), v.numel(), 0.0f);
  }
  return result;
}

std::vector<float> random_values(int64_t n, core::Rng& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

void expect_near_all(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << "element " << i;
}

TEST(Memn2nHop, FusedBagEmbedMatchesComposed) {
  core::Rng rng(3);
  const std::vector<core::Shape> shapes = {{kV, kD}, {kT, kD}};
  const std::vector<std::vector<float>> in = {random_values(kV * kD, rng), random_values(kT * kD, rng)};
  for (BagEncoding enc : {BagEncoding(SentenceEncoding::kBow), BagEncoding(SentenceEncoding::kPosition),
                          BagEncoding(SentenceEncoding::kPositionGlobal, kW + 2)}) {
    for (bool temporal : {false, true}) {
      auto run = [&](bool fused) {
        return run_both(in, shapes, [&](Graph& g, const std::vector<Var>& x) {
          Var t = temporal ? x[1] : Var{};
          const int32_t* time = temporal ? kTime : nullptr;
          return fused ? bag_embed(x[0], kWords, kB * kN, kW, enc, t, time)
                       : bag_embed_composed(x[0], kWords, kB * kN, kW, enc, t, time);
        });
      };
      expect_near_all(run(true), run(false));
    }
  }
}

TEST(Memn2nHop, FusedScoresAndReadMatchComposed) {
  core::Rng rng(4);
  const std::vector<core::Shape> shapes = {{kB, kN, kD}, {kB, kD}, {kB, kN, kD}};
  const std::vector<std::vector<float>> in = {random_values(kB * kN * kD, rng), random_values(kB * kD, rng),
                                              random_values(kB * kN * kD, rng)};
  auto run = [&](bool fused) {
    return run_both(in, shapes, [&](Graph& g, const std::vector<Var>& x) {
      Var s = fused ? memory_scores(x[0], x[1]) : memory_scores_composed(x[0], x[1]);
      Var p = core::softmax(s, kMask);
      Var o = fused ? memory_read(p, x[2]) : memory_read_composed(p, x[2]);
      return core::concat({s, o}, 1);
    });
  };
  expect_near_all(run(true), run(false));
}

TEST(Memn2nHop, PositionEncodingIsThePapers) {
  // l_kj = (1 - j/J) - (k/D)(1 - 2j/J): J = 4, D = 5.
  EXPECT_FLOAT_EQ(position_weight(1, 4, 1, 5), 0.75f - 0.2f * 0.5f);
  EXPECT_FLOAT_EQ(position_weight(4, 4, 5, 5), 0.0f - 1.0f * (1.0f - 2.0f));
  // A one-word sentence with BoW is its embedding row; with PE row * k/D.
  Graph g;
  std::vector<float> table(kV * kD);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
  Var t = g.input(Tensor{table.data(), {kV, kD}});
  const int32_t ids[2] = {3, 0};
  Var bow = bag_embed(t, ids, 1, 2, SentenceEncoding::kBow);
  Var pe = bag_embed(t, ids, 1, 2, SentenceEncoding::kPosition);
  for (int k = 0; k < kD; ++k) {
    EXPECT_FLOAT_EQ(bow.data()[k], table[3 * kD + k]);
    EXPECT_FLOAT_EQ(pe.data()[k], table[3 * kD + k] * static_cast<float>(k + 1) / kD);
  }
}

TEST(Memn2nHop, GlobalPositionEncodingIsTheAuthorsCodes) {
  // MemN2N-babi-matlab build_model.m: 1 + 4 (k - (D+1)/2)(j - (J+1)/2) / (D J), J fixed.
  EXPECT_FLOAT_EQ(position_weight_global(1, 6, 1, 5), 1.0f + 4.0f * (1 - 3.0f) * (1 - 3.5f) / 30.0f);
  EXPECT_FLOAT_EQ(position_weight_global(3, 5, 2, 4), 1.0f);  // the centre word
  // The same word at the same place weighs the same in sentences of any length.
  Graph g;
  std::vector<float> table(kV * kD, 1.0f);
  Var t = g.input(Tensor{table.data(), {kV, kD}});
  const int32_t ids[6] = {3, 0, 0, 3, 4, 5};  // [2, 3]: "3" alone, "3 4 5"
  Var e = bag_embed(t, ids, 2, 3, BagEncoding(SentenceEncoding::kPositionGlobal, 4));
  for (int k = 0; k < kD; ++k) {
    EXPECT_FLOAT_EQ(e.data()[k], position_weight_global(1, 4, k + 1, kD));
    EXPECT_NEAR(e.data()[kD + k], position_weight_global(1, 4, k + 1, kD) + position_weight_global(2, 4, k + 1, kD) +
                                      position_weight_global(3, 4, k + 1, kD), 1e-5f);
  }
  EXPECT_THROW(bag_embed(t, ids, 2, 3, BagEncoding(SentenceEncoding::kPositionGlobal, 2)), Error);
}

TEST(Memn2nHop, EmptySlotsGetNoAttention) {
  ParamStore store;
  core::Rng rng(2);
  const Memn2nHopConfig cfg{.vocab = kV, .dim = kD, .time_rows = kT};
  Memn2nHop hop(store, "hop", cfg, rng);
  Graph g;
  std::vector<float> u(kB * kD, 0.3f);
  HopOutput r = hop.forward(g, test_memory(), g.input(Tensor{u.data(), {kB, kD}}), true);
  const float* p = r.attention.data();
  EXPECT_EQ(p[kN + 2], 0.0f);  // sample 1, empty slot
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-6f);
  EXPECT_NEAR(p[kN] + p[kN + 1], 1.0f, 1e-6f);
}

TEST(Memn2nHop, BadIdsAreErrors) {
  Graph g;
  std::vector<float> table(kV * kD, 0.1f), temporal(kT * kD, 0.1f);
  Var t = g.input(Tensor{table.data(), {kV, kD}});
  Var tt = g.input(Tensor{temporal.data(), {kT, kD}});
  const int32_t bad_word[2] = {1, kV};
  EXPECT_THROW(bag_embed(t, bad_word, 1, 2, SentenceEncoding::kPosition), Error);
  const int32_t ok[2] = {1, 2};
  const int32_t bad_time[1] = {kT};
  EXPECT_THROW(bag_embed(t, ok, 1, 2, SentenceEncoding::kPosition, tt, bad_time), Error);
  try {
    bag_embed(t, bad_word, 1, 2, SentenceEncoding::kBow);
    ADD_FAILURE() << "word id 7 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("word id 7 outside the table of 7 rows"), std::string::npos) << e.what();
  }
}

}  // namespace memn2n_hop_test
}  // namespace engram::nn
