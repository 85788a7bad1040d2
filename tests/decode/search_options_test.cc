// The decoding options of SearchOptions beyond beam and length penalty, against toy StepModels
// whose log-probs and attention weights are set by hand: min_length (no <eos> before it, never past
// the max length, and a row whose only allowed class is <eos> still ends), block_ngram_repeat (a
// token that would repeat an n-gram gives way to the next best), GNMT's coverage penalty (flips a
// ranking by the hand-computed amount, ignores padded source positions, needs attention), their
// validation, and a class count V that changes from batch to batch.
// Dims: N rows, V classes, S padded source length, S_b a sentence's own length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engram/core/error.h"
#include "engram/decode/search.h"
#include "io/expect_error.h"
#include "decode/toy_model.h"

namespace engram::decode {
namespace {

using toy::enumerate;
using toy::kEos;
using toy::random_dist;
using toy::sources;
using toy::ToyModel;

using io::testing::error_of;

// Whether some n-gram occurs twice in `seq` (the test's own reference, by brute force).
bool repeats_ngram(const std::vector<int32_t>& seq, int n) {
  for (size_t i = 0; i + n <= seq.size(); ++i)
    for (size_t j = i + 1; j + n <= seq.size(); ++j)
      if (std::equal(seq.begin() + i, seq.begin() + i + n, seq.begin() + j)) return true;
  return false;
}

// Fixed pseudo-random attention over a sentence's S_b positions for each (sentence, prefix): a
// softmax of hashed scores.
ToyModel::Align random_align(uint64_t salt) {
  return [salt](int sentence, const std::vector<int32_t>& prefix, int src_len) {
    uint64_t h = 88172645463325252ull ^ salt ^ (static_cast<uint64_t>(sentence + 1) * 0x9E3779B97F4A7C15ull);
    for (int32_t t : prefix) h = (h ^ static_cast<uint64_t>(t + 7)) * 1099511628211ull;
    core::Rng rng(h);
    std::vector<double> a(src_len);
    double total = 0;
    for (double& x : a) total += x = std::exp(2.0 * rng.uniform());
    for (double& x : a) x /= total;
    return a;
  };
}

TEST(SearchOptions, ValidateRejectsOutOfRangeValuesInOneLine) {
  auto bad = [](auto set) {
    SearchOptions o;
    set(o);
    return error_of([&] { o.validate(); });
  };
  for (const std::string& e : {bad([](SearchOptions& o) { o.min_length = -1; }),
                               bad([](SearchOptions& o) { o.min_length = kMaxOutputTokens + 1; })}) {
    EXPECT_NE(e.find("min_length"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  for (const std::string& e : {bad([](SearchOptions& o) { o.block_ngram_repeat = -2; }),
                               bad([](SearchOptions& o) { o.block_ngram_repeat = kMaxOutputTokens + 1; })})
    EXPECT_NE(e.find("block_ngram_repeat"), std::string::npos) << e;
  for (const std::string& e : {bad([](SearchOptions& o) { o.coverage_penalty = -0.1f; }),
                               bad([](SearchOptions& o) { o.coverage_penalty = NAN; }),
                               bad([](SearchOptions& o) { o.coverage_penalty = 10.5f; })})
    EXPECT_NE(e.find("coverage_penalty"), std::string::npos) << e;
  SearchOptions edge;
  edge.min_length = kMaxOutputTokens;
  edge.block_ngram_repeat = kMaxOutputTokens;
  edge.coverage_penalty = 10.0f;
  EXPECT_NO_THROW(edge.validate());
  // The defaults switch all three off.
  EXPECT_EQ(SearchOptions{}.min_length, 0);
  EXPECT_EQ(SearchOptions{}.block_ngram_repeat, 0);
  EXPECT_EQ(SearchOptions{}.coverage_penalty, 0.0f);
}

// <eos> 0.6, token 4 0.3, token 5 0.1 after every prefix.
ToyModel eager_to_end() {
  return ToyModel(6, [](int, const std::vector<int32_t>&) {
    std::vector<double> p(6, 1e-6);
    p[kEos] = 0.6, p[4] = 0.3, p[5] = 0.1;
    return p;
  });
}

TEST(MinLength, FirstEosComesNoEarlierInGreedyBeamAndSampling) {
  ToyModel model = eager_to_end();
  core::Graph g(false);
  SearchOptions o;
  const Hypothesis plain = greedy_search(g, model, sources({4}), o)[0];
  EXPECT_TRUE(plain.ids.empty());  // <eos> at once without a minimum
  EXPECT_TRUE(plain.finished);
  o.min_length = 3;
  // Greedy: <eos> is masked for three steps, token 4 (0.3) is the best of the rest; then <eos>
  // (0.6) wins. The log-prob is the model's, not renormalised: 3 ln 0.3 + ln 0.6.
  const Hypothesis h = greedy_search(g, model, sources({4}), o)[0];
  EXPECT_EQ(h.ids, (std::vector<int32_t>{4, 4, 4}));
  EXPECT_TRUE(h.finished);
  EXPECT_NEAR(h.log_prob, 3 * std::log(0.3) + std::log(0.6), 1e-5);
  // Beam: the same best hypothesis, and every one of the n-best has at least three tokens.
  o.beam = 4;
  o.n_best = 4;
  const auto beams = beam_search(g, model, sources({4, 2}), o);
  for (const auto& list : beams) {
    ASSERT_EQ(list.size(), 4u);
    EXPECT_EQ(list[0].ids, (std::vector<int32_t>{4, 4, 4}));
    EXPECT_NEAR(list[0].log_prob, h.log_prob, 1e-9);
    for (const Hypothesis& x : list) EXPECT_GE(x.ids.size(), 3u);
  }
  // Sampling: with the minimum no sample is shorter than three tokens; without it most are empty.
  core::Rng rng(7);
  SearchOptions s;
  int short_plain = 0;
  for (int i = 0; i < 200; ++i) {
    short_plain += sample_search(g, model, sources({4}), s, 1.0f, rng)[0].ids.size() < 3;
    const Hypothesis x = sample_search(g, model, sources({4}), {.min_length = 3}, 1.0f, rng)[0];
    EXPECT_GE(x.ids.size(), 3u);
  }
  EXPECT_GT(short_plain, 150);  // P(shorter than 3) = 1 - 0.4^3 = 0.936
}

TEST(MinLength, NeverPastTheMaxLength) {
  ToyModel model = eager_to_end();
  core::Graph g(false);
  SearchOptions o;
  o.max_length = 4;
  o.min_length = 10;
  const Hypothesis h = greedy_search(g, model, sources({3}), o)[0];
  EXPECT_EQ(h.ids.size(), 4u);  // stops at the max length, unfinished
  EXPECT_FALSE(h.finished);
  o.beam = 3;
  const auto beams = beam_search(g, model, sources({3}), o);
  for (const Hypothesis& x : beams[0]) {
    EXPECT_EQ(x.ids.size(), 4u);
    EXPECT_FALSE(x.finished);
  }
}

// A pointer-like model: tokens 4 and 5 are the two source positions, each allowed once; after both,
// <eos> is the only allowed class. A minimum of 5 tokens cannot be met: the sentence still ends
// with <eos> after the two, in every search.
TEST(MinLength, ARowWhoseOnlyAllowedClassIsEosStillEnds) {
  ToyModel model(6, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(6, 0.0);
    if (prefix.size() == 2) {
      p[kEos] = 1.0;
    } else {
      for (int32_t t : {4, 5})
        if (std::find(prefix.begin(), prefix.end(), t) == prefix.end()) p[t] = t == 4 ? 0.7 : 0.3;
      const double total = p[4] + p[5];
      p[4] /= total, p[5] /= total;
    }
    return p;
  });
  core::Graph g(false);
  SearchOptions o;
  o.min_length = 5;
  const Hypothesis h = greedy_search(g, model, sources({2}), o)[0];
  EXPECT_EQ(h.ids, (std::vector<int32_t>{4, 5}));
  EXPECT_TRUE(h.finished);
  EXPECT_NEAR(h.log_prob, std::log(0.7), 1e-6);
  core::Rng rng(1);
  const Hypothesis sampled = sample_search(g, model, sources({2}), o, 1.0f, rng)[0];
  EXPECT_EQ(sampled.ids.size(), 2u);
  EXPECT_TRUE(sampled.finished);
  o.beam = 3;
  o.n_best = 2;
  const auto beams = beam_search(g, model, sources({2}), o);
  ASSERT_EQ(beams[0].size(), 2u);
  EXPECT_EQ(beams[0][0].ids, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(beams[0][1].ids, (std::vector<int32_t>{5, 4}));
  for (const Hypothesis& x : beams[0]) EXPECT_TRUE(x.finished && std::isfinite(x.score));
  // A model that allows nothing stays an error in greedy, masks or not.
  ToyModel none(5, [](int, const std::vector<int32_t>&) { return std::vector<double>(5, 0.0); });
  EXPECT_THROW(greedy_search(g, none, sources({1}), {.min_length = 2, .block_ngram_repeat = 1}), Error);
}

// After token x in {4, 5, 6}: next(x) (4 -> 5 -> 6 -> 4) 0.6, <eos> 0.3, the other two 0.05 each;
// the first token is 4 with 0.6.
ToyModel cycle() {
  return ToyModel(7, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(7, 1e-6);
    const int32_t want = prefix.empty() ? 4 : 4 + (prefix.back() - 4 + 1) % 3;
    for (int32_t t : {4, 5, 6}) p[t] = t == want ? 0.6 : 0.05;
    p[kEos] = 0.3;
    return p;
  });
}

TEST(BlockNgramRepeat, ATokenThatWouldRepeatAnNgramGivesWayToTheNextBest) {
  ToyModel model = cycle();
  core::Graph g(false);
  SearchOptions o;
  o.max_length = 8;
  EXPECT_EQ(greedy_search(g, model, sources({1}), o)[0].ids, (std::vector<int32_t>{4, 5, 6, 4, 5, 6, 4, 5}));
  // N = 3: after 4 5 6 4 5, the token 6 would repeat the trigram (4, 5, 6): <eos> (0.3) is next best.
  o.block_ngram_repeat = 3;
  const Hypothesis tri = greedy_search(g, model, sources({1}), o)[0];
  EXPECT_EQ(tri.ids, (std::vector<int32_t>{4, 5, 6, 4, 5}));
  EXPECT_TRUE(tri.finished);
  EXPECT_NEAR(tri.log_prob, 5 * std::log(0.6) + std::log(0.3), 1e-5);
  // N = 2: after 4 5 6 4, 5 would repeat (4, 5). N = 1: after 4 5 6, 4 is already there.
  o.block_ngram_repeat = 2;
  EXPECT_EQ(greedy_search(g, model, sources({1}), o)[0].ids, (std::vector<int32_t>{4, 5, 6, 4}));
  o.block_ngram_repeat = 1;
  EXPECT_EQ(greedy_search(g, model, sources({1}), o)[0].ids, (std::vector<int32_t>{4, 5, 6}));
  // N = the max length: no N-gram fits twice, nothing changes.
  o.block_ngram_repeat = 8;
  EXPECT_EQ(greedy_search(g, model, sources({1}), o)[0].ids, (std::vector<int32_t>{4, 5, 6, 4, 5, 6, 4, 5}));
  // Beam 1 takes the same path as greedy.
  o.block_ngram_repeat = 3;
  o.beam = 1;
  EXPECT_EQ(beam_search(g, model, sources({1}), o)[0][0].ids, tri.ids);
}

TEST(BlockNgramRepeat, NoSampleRepeatsAnNgramAndATokenTheModelForcesStays) {
  ToyModel model(6, random_dist(6, 21));
  core::Graph g(false);
  core::Rng rng(5);
  SearchOptions o;
  o.max_length = 12;
  int repeated_plain = 0;
  for (int i = 0; i < 100; ++i) {
    o.block_ngram_repeat = 0;
    repeated_plain += repeats_ngram(sample_search(g, model, sources({5}), o, 1.0f, rng)[0].ids, 2);
    o.block_ngram_repeat = 2;
    const Hypothesis h = sample_search(g, model, sources({5}), o, 1.0f, rng)[0];
    EXPECT_FALSE(repeats_ngram(h.ids, 2));
  }
  EXPECT_GT(repeated_plain, 0);
  // A model that allows only token 4: blocking would leave nothing, so the mask is lifted.
  ToyModel forced(6, [](int, const std::vector<int32_t>&) {
    std::vector<double> p(6, 0.0);
    p[4] = 1.0;
    return p;
  });
  SearchOptions f;
  f.max_length = 5;
  f.block_ngram_repeat = 1;
  EXPECT_EQ(greedy_search(g, forced, sources({1}), f)[0].ids, std::vector<int32_t>(5, 4));
  f.beam = 2;
  EXPECT_EQ(beam_search(g, forced, sources({1}), f)[0][0].ids, std::vector<int32_t>(5, 4));
}

// A beam wider than every prefix is exact: its n-best equals enumerating every hypothesis the
// two masks allow (by the test's own brute-force rules), best first.
TEST(BeamSearch, WideBeamEqualsExhaustiveSearchUnderMinLengthAndBlocking) {
  const int vocab = 6, max_len = 4;
  struct Case {
    int min_length, block;
  };
  for (const Case c : {Case{2, 0}, Case{0, 2}, Case{0, 1}, Case{3, 2}, Case{1, 3}}) {
    auto dist = random_dist(vocab, 17);
    ToyModel model(vocab, dist);
    SearchOptions o;
    o.beam = 200;
    o.n_best = 6;
    o.max_length = max_len;
    o.min_length = c.min_length;
    o.block_ngram_repeat = c.block;
    core::Graph g(false);
    auto nbest = beam_search(g, model, sources({2, 3}), o);
    toy::Allowed allowed = [&](const std::vector<int32_t>& prefix, int32_t token) {
      if (token == kEos) return static_cast<int>(prefix.size()) >= c.min_length;
      std::vector<int32_t> next = prefix;
      next.push_back(token);
      return c.block == 0 || !repeats_ngram(next, c.block);
    };
    for (int s = 0; s < 2; ++s) {
      std::vector<std::pair<double, std::vector<int32_t>>> all;
      std::vector<int32_t> prefix;
      enumerate(dist, s, vocab, max_len, prefix, 0.0, all, allowed);
      std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first > b.first; });
      ASSERT_EQ(nbest[s].size(), 6u);
      for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(nbest[s][i].ids, all[i].second) << "case " << c.min_length << "/" << c.block << " rank " << i;
        EXPECT_NEAR(nbest[s][i].log_prob, all[i].first, 1e-4);
      }
    }
  }
}

// Source of two tokens. Step 1: token 4 0.6, token 5 0.4, α = (0.8, 0.2). After 4: <eos> 0.9,
// α = (0.7, 0.3); after 5: <eos> 0.9, α = (0.2, 0.8).
//   A = 4 <eos>: log p = ln 0.54, coverage (1.5, 0.5) -> cp = β (ln 1 + ln 0.5) = -0.6931 β
//   B = 5 <eos>: log p = ln 0.36, coverage (1.0, 1.0) -> cp = 0
// Both have 2 steps, so with alpha both log p are divided by lp(2) = (7/6)^alpha; B outranks A
// once β ln 2 > ln(0.54 / 0.36) / lp(2), i.e. β > 0.5850 for alpha = 0, β > 0.5333 for alpha = 0.6.
ToyModel coverage_model() {
  ToyModel model(6, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(6, 1e-6);
    if (prefix.empty()) p[4] = 0.6, p[5] = 0.4;
    else p[kEos] = 0.9, p[4] = 0.05, p[5] = 0.05;
    return p;
  });
  model.set_align([](int, const std::vector<int32_t>& prefix, int src_len) {
    std::vector<double> a(src_len, 1.0 / src_len);  // other sentences: uniform
    if (src_len != 2) return a;
    if (prefix.empty()) return std::vector<double>{0.8, 0.2};
    return prefix[0] == 4 ? std::vector<double>{0.7, 0.3} : std::vector<double>{0.2, 0.8};
  });
  return model;
}

TEST(CoveragePenalty, FlipsTheRankingOfTwoHypothesesByTheHandComputedAmount) {
  ToyModel model = coverage_model();
  core::Graph g(false);
  const double lp_a = std::log(0.6) + std::log(0.9), lp_b = std::log(0.4) + std::log(0.9);
  const std::vector<int32_t> a{4}, b{5};
  struct Case {
    float alpha, beta;
    bool b_first;
  };
  for (const Case c : {Case{0, 0, false}, Case{0, 0.55f, false}, Case{0, 0.62f, true}, Case{0, 1, true},
                       Case{0.6f, 0.5f, false}, Case{0.6f, 0.56f, true}}) {
    SearchOptions o;
    o.beam = 2;
    o.n_best = 2;
    o.alpha = c.alpha;
    o.coverage_penalty = c.beta;
    const auto list = beam_search(g, model, sources({2}), o)[0];
    ASSERT_EQ(list.size(), 2u);
    const Hypothesis& first = list[0];
    const Hypothesis& second = list[1];
    EXPECT_EQ(first.ids, c.b_first ? b : a) << c.alpha << " " << c.beta;
    EXPECT_EQ(second.ids, c.b_first ? a : b) << c.alpha << " " << c.beta;
    const double lp2 = length_penalty(2, c.alpha);
    const Hypothesis& ha = c.b_first ? second : first;
    const Hypothesis& hb = c.b_first ? first : second;
    EXPECT_NEAR(ha.log_prob, lp_a, 1e-6);
    EXPECT_NEAR(ha.score, lp_a / lp2 + c.beta * std::log(0.5), 1e-6);
    EXPECT_NEAR(hb.score, lp_b / lp2, 1e-6);
  }
  // Greedy picks A whatever β (cp does not change its choice) and reports the same score.
  const Hypothesis h = greedy_search(g, model, sources({2}), {.coverage_penalty = 1.0f})[0];
  EXPECT_EQ(h.ids, a);
  EXPECT_NEAR(h.score, lp_a + std::log(0.5), 1e-6);
}

TEST(CoveragePenalty, PaddedSourcePositionsDoNotCount) {
  // Sentence 0 (2 tokens) decoded next to sentence 1 (4 tokens): its α rows are padded with zeros
  // to S = 4, which must not enter its coverage (log 0 = -inf otherwise).
  ToyModel model = coverage_model();
  core::Graph g(false);
  SearchOptions o;
  o.beam = 2;
  o.n_best = 2;
  o.coverage_penalty = 1.0f;
  const auto together = beam_search(g, model, sources({2, 4}), o);
  const auto alone = beam_search(g, model, sources({2}), o);
  ASSERT_EQ(together[0].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(together[0][i].ids, alone[0][i].ids);
    EXPECT_DOUBLE_EQ(together[0][i].score, alone[0][i].score);
  }
  EXPECT_EQ(together[0][0].ids, std::vector<int32_t>{5});
  // Sentence 1: uniform α 0.25 at both steps -> coverage 0.5 at each of 4 positions, cp = 4 ln 0.5.
  EXPECT_EQ(together[1][0].ids, std::vector<int32_t>{4});
  EXPECT_NEAR(together[1][0].score, std::log(0.54) + 4 * std::log(0.5), 1e-5);
  const Hypothesis greedy = greedy_search(g, model, sources({2, 4}), {.coverage_penalty = 1.0f})[0];
  EXPECT_NEAR(greedy.score, std::log(0.54) + std::log(0.5), 1e-6);
}

// Step 1: <eos> 0.55, token 4 0.45, α = (0.9, 0.1); after 4: <eos> 0.9, α = (0.1, 0.9).
// With β = 1 the empty hypothesis scores ln 0.55 + ln 0.9 + ln 0.1 = -3.006 and 4 <eos> scores
// ln 0.405 + 0 = -0.904. Beam 1 does not stop at the first <eos>: its live prefix 4 (ln 0.45) could
// still reach cp = 0, and it does.
TEST(CoveragePenalty, BeamGoesOnWhileALivePrefixCouldStillWin) {
  ToyModel model(6, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(6, 1e-6);
    if (prefix.empty()) p[kEos] = 0.55, p[4] = 0.45;
    else p[kEos] = 0.9, p[4] = 0.05, p[5] = 0.05;
    return p;
  });
  model.set_align([](int, const std::vector<int32_t>& prefix, int) {
    return prefix.empty() ? std::vector<double>{0.9, 0.1} : std::vector<double>{0.1, 0.9};
  });
  core::Graph g(false);
  SearchOptions o;
  o.beam = 1;
  const Hypothesis plain = beam_search(g, model, sources({2}), o)[0][0];
  EXPECT_TRUE(plain.ids.empty());  // β = 0: beam 1 is greedy
  EXPECT_EQ(plain.ids, greedy_search(g, model, sources({2}), o)[0].ids);
  o.coverage_penalty = 1.0f;
  const Hypothesis h = beam_search(g, model, sources({2}), o)[0][0];
  EXPECT_EQ(h.ids, std::vector<int32_t>{4});
  EXPECT_NEAR(h.score, std::log(0.45) + std::log(0.9), 1e-6);
  const Hypothesis gh = greedy_search(g, model, sources({2}), o)[0];
  EXPECT_TRUE(gh.ids.empty());
  EXPECT_NEAR(gh.score, std::log(0.55) + std::log(0.9) + std::log(0.1), 1e-6);
}

TEST(CoveragePenalty, NeedsAModelWithAttention) {
  ToyModel model = eager_to_end();
  model.set_no_attention();
  core::Graph g(false);
  EXPECT_NO_THROW(beam_search(g, model, sources({2}), {.beam = 2}));
  const std::string e = error_of([&] { beam_search(g, model, sources({2}), {.beam = 2, .coverage_penalty = 0.2f}); });
  EXPECT_NE(e.find("coverage_penalty"), std::string::npos) << e;
  EXPECT_NE(e.find("attention"), std::string::npos) << e;
  EXPECT_THROW(greedy_search(g, model, sources({2}), {.coverage_penalty = 0.2f}), Error);
}

// A wide beam with all options on is still exact, scored by log p / lp + cp: the enumeration below
// scores every hypothesis with the same formula, α summed by hand over the path.
TEST(BeamSearch, WideBeamEqualsExhaustiveSearchWithCoveragePenalty) {
  const int vocab = 6, max_len = 3;
  auto dist = random_dist(vocab, 29);
  auto align = random_align(3);
  ToyModel model(vocab, dist);
  model.set_align(align);
  SearchOptions o;
  o.beam = 200;
  o.n_best = 5;
  o.max_length = max_len;
  o.coverage_penalty = 0.4f;
  o.min_length = 1;
  core::Graph g(false);
  const std::vector<int> lengths = {3, 1, 2};
  const auto nbest = beam_search(g, model, sources(lengths), o);
  for (int s = 0; s < 3; ++s) {
    std::vector<std::pair<double, std::vector<int32_t>>> all;
    std::vector<int32_t> prefix;
    enumerate(dist, s, vocab, max_len, prefix, 0.0, all,
              [](const std::vector<int32_t>& p, int32_t t) { return t != kEos || !p.empty(); });
    std::vector<std::pair<double, std::vector<int32_t>>> scored;
    for (auto& [lp, ids] : all) {
      const bool finished = static_cast<int>(ids.size()) < max_len;  // enumerate ends unfinished only at max_len
      std::vector<double> cov(lengths[s], 0.0);
      std::vector<int32_t> p;
      const size_t steps = ids.size() + (finished ? 1 : 0);
      for (size_t j = 0; j < steps; ++j) {
        const std::vector<double> a = align(s, p, lengths[s]);
        for (int i = 0; i < lengths[s]; ++i) cov[i] += static_cast<float>(a[i]);
        if (j < ids.size()) p.push_back(ids[j]);
      }
      double cp = 0;
      for (double c : cov) cp += std::log(std::min(c, 1.0));
      scored.push_back({lp + 0.4 * cp, ids});
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first > b.first; });
    ASSERT_EQ(nbest[s].size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(nbest[s][i].ids, scored[i].second) << "sentence " << s << " rank " << i;
      EXPECT_NEAR(nbest[s][i].score, scored[i].first, 1e-4);
    }
  }
}

TEST(BeamSearch, BeamOneEqualsGreedyAndBatchesDoNotMatterWithTheOptions) {
  ToyModel model(7, random_dist(7, 9));
  model.set_align(random_align(4));
  core::Graph g(false);
  SearchOptions o;
  o.min_length = 2;
  o.block_ngram_repeat = 2;
  o.alpha = 0.6f;
  o.alignments = true;
  const std::vector<int> lengths = {1, 4, 2, 6, 3};
  const SourceBatch src = sources(lengths);
  const auto greedy = greedy_search(g, model, src, o);
  const auto beam = beam_search(g, model, src, o);
  for (size_t s = 0; s < greedy.size(); ++s) {
    ASSERT_EQ(beam[s].size(), 1u);
    EXPECT_EQ(beam[s][0].ids, greedy[s].ids) << s;
    EXPECT_DOUBLE_EQ(beam[s][0].score, greedy[s].score) << s;
    EXPECT_EQ(beam[s][0].alignment, greedy[s].alignment) << s;
    EXPECT_GE(greedy[s].ids.size(), 2u);
    EXPECT_FALSE(repeats_ngram(greedy[s].ids, 2));
  }
  // Beam 4 with the coverage penalty: a sentence decodes the same alone as in the padded batch.
  o.beam = 4;
  o.n_best = 3;
  o.coverage_penalty = 0.3f;
  const auto together = beam_search(g, model, src, o);
  for (size_t s = 0; s < lengths.size(); ++s) {
    SourceBatch one = SourceBatch::from_ids({std::vector<int32_t>(lengths[s], static_cast<int32_t>(s))});
    const auto alone = beam_search(g, model, one, o);
    ASSERT_EQ(alone[0].size(), together[s].size());
    for (size_t i = 0; i < alone[0].size(); ++i) {
      EXPECT_EQ(alone[0][i].ids, together[s][i].ids) << s << "/" << i;
      EXPECT_DOUBLE_EQ(alone[0][i].score, together[s][i].score);
      EXPECT_TRUE(std::isfinite(together[s][i].score));
    }
  }
}

// A copy-like model: V = 4 + S classes for a batch of padded length S, class 4 + i copying source
// position i. Step t copies position t (0.7) until the sentence's S_b positions are done, then
// <eos> (0.9). Batches of different S give different V in one search object's lifetime.
class CopyToy final : public StepModel {
 public:
  struct State final : DecodeState {
    int rows() const override { return static_cast<int>(len.size()); }
    std::vector<int> len, src_len;  // [N] tokens so far, S_b
    int v = 0;
    bool started = false;  // a step has run: every prev id is a token
  };
  int32_t go_id() const override { return toy::kGo; }
  int32_t eos_id() const override { return kEos; }
  std::unique_ptr<DecodeState> encode(core::Graph&, const SourceBatch& src) const override {
    auto st = std::make_unique<State>();
    st->len.assign(src.batch, 0);
    st->src_len = src.lengths;
    st->v = 4 + src.steps;
    return st;
  }
  StepOutput step(core::Graph& g, DecodeState& state, std::span<const int32_t> prev) const override {
    auto& st = static_cast<State&>(state);
    const int n = st.rows();
    core::Tensor lp = g.alloc({n, st.v});
    for (int r = 0; r < n; ++r) {
      if (st.started) ++st.len[r];
      const int want = st.len[r] < st.src_len[r] ? 4 + st.len[r] : kEos;
      const double top = want == kEos ? 0.9 : 0.7, rest = (1.0 - top) / (st.v - 1);
      for (int c = 0; c < st.v; ++c) lp.at(r, c) = static_cast<float>(std::log(c == want ? top : rest));
    }
    st.started = true;
    return {lp, {}};
  }
  void reorder(DecodeState& state, std::span<const int32_t> rows) const override {
    auto& st = static_cast<State&>(state);
    std::vector<int> len, src_len;
    for (int32_t r : rows) len.push_back(st.len[r]), src_len.push_back(st.src_len[r]);
    st.len.swap(len);
    st.src_len.swap(src_len);
  }
};

TEST(Search, ClassCountMayDifferFromBatchToBatch) {
  CopyToy model;
  core::Graph g(false);
  auto copies = [](int n) {
    std::vector<int32_t> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = 4 + i;
    return ids;
  };
  // S = 2 (V = 6), then S = 5 (V = 9: ids up to 8), then S = 1 (V = 5 < 2K), then S = 2 again.
  for (int s : {2, 5, 1, 2}) {
    const SourceBatch src = sources({s});
    const Hypothesis h = greedy_search(g, model, src, {})[0];
    EXPECT_EQ(h.ids, copies(s)) << "S " << s;
    EXPECT_TRUE(h.finished);
    const auto beams = beam_search(g, model, src, {.beam = 3, .n_best = 3, .block_ngram_repeat = 2});
    EXPECT_EQ(beams[0][0].ids, copies(s)) << "S " << s;
  }
  // In one batch every row has the batch's V = 4 + 5; the short sentence still copies its own two.
  const auto both = beam_search(g, model, sources({2, 5}), {.beam = 2});
  EXPECT_EQ(both[0][0].ids, copies(2));
  EXPECT_EQ(both[1][0].ids, copies(5));
}

}  // namespace
}  // namespace engram::decode
