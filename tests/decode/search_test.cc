// Search against toy StepModels whose distributions are known: beam search finds the best
// sequence where greedy does not, agrees with exhaustive enumeration, equals greedy at beam 1,
// does not depend on what else is in the batch, and tracks alignments and the length penalty.
// Dims: N rows, V classes, S source length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/decode/search.h"
#include "engram/decode/state_buffers.h"
#include "decode/toy_model.h"

namespace engram::decode {
namespace {

using toy::enumerate;
using toy::kEos;
using toy::random_dist;
using toy::sources;
using toy::ToyModel;

TEST(BeamSearch, FindsTheKnownBestSequenceThatGreedyMisses) {
  // First step: A (4) 0.6, B (5) 0.4. After A: eos 0.3, A 0.35, B 0.35. After B: eos 0.9.
  // Greedy: A then A/B ... (p <= 0.21 for any continuation); best: B <eos> = 0.36.
  ToyModel model(6, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(6, 1e-6);
    if (prefix.empty()) p[4] = 0.6, p[5] = 0.4;
    else if (prefix.back() == 5) p[kEos] = 0.9, p[4] = 0.05, p[5] = 0.05;
    else p[kEos] = 0.3, p[4] = 0.35, p[5] = 0.35;
    return p;
  });
  core::Graph g(false);
  SearchOptions o;
  o.max_length_offset = 6;
  auto greedy = greedy_search(g, model, sources({1}), o);
  ASSERT_EQ(greedy.size(), 1u);
  EXPECT_EQ(greedy[0].ids[0], 4);
  o.beam = 2;
  auto beam = beam_search(g, model, sources({1}), o);
  ASSERT_EQ(beam[0].size(), 1u);
  EXPECT_EQ(beam[0][0].ids, std::vector<int32_t>{5});
  EXPECT_TRUE(beam[0][0].finished);
  EXPECT_NEAR(beam[0][0].log_prob, std::log(0.4) + std::log(0.9), 1e-5);
  EXPECT_GT(beam[0][0].log_prob, greedy[0].log_prob);
}

TEST(BeamSearch, WideBeamEqualsExhaustiveSearch) {
  const int vocab = 6, max_len = 4;  // classes 4, 5 and <eos> carry the mass
  auto dist = random_dist(vocab, 11);
  ToyModel model(vocab, dist);
  SearchOptions o;
  o.beam = 200;  // more than every prefix: the search is exact
  o.n_best = 5;
  o.max_length = max_len;
  core::Graph g(false);
  auto nbest = beam_search(g, model, sources({2, 3, 1}), o);
  ASSERT_EQ(nbest.size(), 3u);
  for (int s = 0; s < 3; ++s) {
    std::vector<std::pair<double, std::vector<int32_t>>> all;
    std::vector<int32_t> prefix;
    enumerate(dist, s, vocab, max_len, prefix, 0.0, all);
    std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first > b.first; });
    ASSERT_EQ(nbest[s].size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(nbest[s][i].ids, all[i].second) << "sentence " << s << " rank " << i;
      EXPECT_NEAR(nbest[s][i].log_prob, all[i].first, 1e-4);
      if (i > 0) {
        EXPECT_LE(nbest[s][i].score, nbest[s][i - 1].score);
      }
    }
  }
}

TEST(BeamSearch, BeamOneEqualsGreedy) {
  for (float alpha : {0.0f, 0.6f}) {
    ToyModel model(7, random_dist(7, 3));
    SearchOptions o;
    o.alpha = alpha;
    o.alignments = true;
    o.max_length_ratio = 1.5f;
    o.max_length_offset = 2;
    core::Graph g(false);
    const SourceBatch src = sources({1, 4, 2, 6, 3});
    auto greedy = greedy_search(g, model, src, o);
    auto beam = beam_search(g, model, src, o);
    ASSERT_EQ(greedy.size(), beam.size());
    for (size_t s = 0; s < greedy.size(); ++s) {
      ASSERT_EQ(beam[s].size(), 1u);
      EXPECT_EQ(beam[s][0].ids, greedy[s].ids) << s;
      EXPECT_EQ(beam[s][0].finished, greedy[s].finished) << s;
      EXPECT_DOUBLE_EQ(beam[s][0].log_prob, greedy[s].log_prob) << s;
      EXPECT_DOUBLE_EQ(beam[s][0].score, greedy[s].score) << s;
      EXPECT_EQ(beam[s][0].alignment, greedy[s].alignment) << s;
    }
  }
}

TEST(BeamSearch, SentencesAreIndependentOfTheirBatch) {
  ToyModel model(8, random_dist(8, 5));
  SearchOptions o;
  o.beam = 4;
  o.n_best = 3;
  o.alpha = 1.0f;
  core::Graph g(false);
  const std::vector<int> lengths = {3, 1, 5, 2};
  auto together = beam_search(g, model, sources(lengths), o);
  for (size_t s = 0; s < lengths.size(); ++s) {
    // Alone, sentence s needs the same id (the toy reads the sentence from the first token).
    SourceBatch one = SourceBatch::from_ids({std::vector<int32_t>(lengths[s], static_cast<int32_t>(s))});
    auto alone = beam_search(g, model, one, o);
    ASSERT_EQ(alone[0].size(), together[s].size());
    for (size_t i = 0; i < alone[0].size(); ++i) {
      EXPECT_EQ(alone[0][i].ids, together[s][i].ids) << s << "/" << i;
      EXPECT_DOUBLE_EQ(alone[0][i].score, together[s][i].score);
    }
  }
}

// Sentence k writes k + 1 tokens, each 4 + k % 3, then <eos>: sentences finish out of order.
ToyModel finishing_toy() {
  return ToyModel(8, [](int sentence, const std::vector<int32_t>& prefix) {
    std::vector<double> p(8, 1e-3);
    p[static_cast<int>(prefix.size()) > sentence ? kEos : 4 + sentence % 3] = 1.0;
    return p;
  });
}

// A StepModel that records every reorder it is asked for, then runs the toy's.
struct RecordingModel final : StepModel {
  const ToyModel& m;
  mutable std::vector<std::vector<int32_t>> orders;
  explicit RecordingModel(const ToyModel& model) : m(model) {}
  int32_t go_id() const override { return m.go_id(); }
  int32_t eos_id() const override { return m.eos_id(); }
  std::unique_ptr<DecodeState> encode(core::Graph& g, const SourceBatch& s) const override { return m.encode(g, s); }
  StepOutput step(core::Graph& g, DecodeState& st, std::span<const int32_t> p) const override {
    return m.step(g, st, p);
  }
  void reorder(DecodeState& st, std::span<const int32_t> rows) const override {
    orders.emplace_back(rows.begin(), rows.end());
    m.reorder(st, rows);
  }
};

// Greedy rows that finish leave the state by rows[i] >= i (the survivors past the new row count
// fill the gaps, decode::gather moves them in place), and each sentence keeps its own output.
TEST(Search, GreedyDropsFinishedRowsByFillingTheirGaps) {
  const ToyModel model = finishing_toy();
  RecordingModel rec(model);
  const std::vector<int32_t> names = {2, 0, 5, 1, 4, 0, 3};  // the toy reads each sentence's name
  std::vector<std::vector<int32_t>> srcs;
  for (int32_t k : names) srcs.push_back({k});
  core::Graph g(false);
  SearchOptions o;
  o.max_length_offset = 8;
  const auto hyps = greedy_search(g, rec, SourceBatch::from_ids(srcs), o);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(hyps[i].ids, std::vector<int32_t>(names[i] + 1, 4 + names[i] % 3)) << i;
    EXPECT_TRUE(hyps[i].finished) << i;
  }
  // At step 2 the two sentences named 0 finish (rows 1 and 5 of 7): rows 0..4 stay, row 6 fills
  // the gap at 1.
  ASSERT_FALSE(rec.orders.empty());
  EXPECT_EQ(rec.orders[0], (std::vector<int32_t>{0, 6, 2, 3, 4}));
  for (const auto& rows : rec.orders) EXPECT_TRUE(in_place_rows(rows));
  // Sampling draws in row order and keeps its rows in order.
  rec.orders.clear();
  core::Rng rng(7);
  sample_search(g, rec, SourceBatch::from_ids(srcs), o, 1.0f, rng);
  ASSERT_FALSE(rec.orders.empty());
  for (const auto& rows : rec.orders) EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
}

TEST(BeamSearch, LengthPenaltyAndScores) {
  EXPECT_DOUBLE_EQ(length_penalty(7, 0.0f), 1.0);
  EXPECT_DOUBLE_EQ(length_penalty(7, 1.0f), 2.0);
  EXPECT_NEAR(length_penalty(1, 0.6f), 1.0, 1e-12);
  // eos is likely at every step (0.4) and token 4 costs little (0.55): without a penalty the
  // shortest hypothesis wins; a strong penalty (alpha 4) favours longer ones.
  ToyModel model(6, [](int, const std::vector<int32_t>&) {
    std::vector<double> p(6, 1e-6);
    p[kEos] = 0.4, p[4] = 0.55, p[5] = 0.05;
    return p;
  });
  core::Graph g(false);
  SearchOptions o;
  o.beam = 4;
  o.max_length = 6;
  auto plain = beam_search(g, model, sources({3}), o);
  EXPECT_TRUE(plain[0][0].ids.empty());
  EXPECT_TRUE(plain[0][0].finished);
  EXPECT_NEAR(plain[0][0].log_prob, std::log(0.4f), 1e-6);
  o.alpha = 4.0f;
  auto long_ = beam_search(g, model, sources({3}), o);
  // Scores lp / ((5 + n) / 6)^4, n = tokens + finished: k fours then <eos> give
  // (k ln 0.55 + ln 0.4) / ((6 + k) / 6)^4 = -0.916, -0.817, -0.668, -0.535, -0.429, -0.346 for
  // k = 0..5; six fours, unfinished at max_length, give 6 ln 0.55 / (11 / 6)^4 = -0.318: the best.
  ASSERT_FALSE(long_[0].empty());
  EXPECT_EQ(long_[0][0].ids, std::vector<int32_t>(6, 4));
  EXPECT_FALSE(long_[0][0].finished);
  EXPECT_NEAR(long_[0][0].log_prob, 6 * std::log(0.55), 1e-5);
  EXPECT_NEAR(long_[0][0].score, 6 * std::log(0.55) / std::pow(11.0 / 6.0, 4), 1e-5);
  for (const Hypothesis& h : long_[0])
    EXPECT_NEAR(h.score, h.log_prob / length_penalty(static_cast<int>(h.ids.size()) + h.finished, 4.0f), 1e-9);
}

TEST(Search, MaxLengthAlignmentsAndErrors) {
  // <eos> never wins: hypotheses stop unfinished at ratio * S + offset tokens.
  ToyModel model(6, [](int, const std::vector<int32_t>&) {
    std::vector<double> p(6, 1e-6);
    p[4] = 0.7, p[5] = 0.3;
    return p;
  });
  core::Graph g(false);
  SearchOptions o;
  o.max_length_ratio = 1.0f;
  o.max_length_offset = 1;
  o.alignments = true;
  auto greedy = greedy_search(g, model, sources({2, 4}), o);
  EXPECT_EQ(greedy[0].ids.size(), 3u);
  EXPECT_EQ(greedy[1].ids.size(), 5u);
  EXPECT_FALSE(greedy[0].finished);
  // One alignment row per token, trimmed to the sentence's own length: row t is one-hot at t mod S.
  ASSERT_EQ(greedy[0].alignment.size(), 3u * 2u);
  EXPECT_EQ(greedy[0].alignment[0 * 2 + 0], 1.0f);
  EXPECT_EQ(greedy[0].alignment[1 * 2 + 1], 1.0f);
  o.beam = 3;
  o.n_best = 2;
  auto beam = beam_search(g, model, sources({2, 4}), o);
  ASSERT_EQ(beam[1].size(), 2u);
  EXPECT_EQ(beam[1][0].ids, std::vector<int32_t>(5, 4));
  EXPECT_EQ(beam[1][0].alignment.size(), 5u * 4u);
  o.n_best = 4;
  EXPECT_THROW(beam_search(g, model, sources({2}), o), Error);
}

// A step's gate (StepOutput::gate: the pointer-generator's p_gen) is recorded beside the
// alignment, one value per output token (<eos> last when finished), from the step that chose it:
// greedy, and every n-best hypothesis of a beam through the prefix tree; nothing without
// alignments.
TEST(Search, TheGateOfTheStepThatChoseEachTokenIsRecorded) {
  ToyModel model(7, toy::random_dist(7, 11));
  const ToyModel::Gate gate = [](int sentence, const std::vector<int32_t>& prefix) {
    double x = 0.1 * sentence;
    for (int32_t t : prefix) x = 0.5 * x + 0.01 * t + 0.001;  // depends on every token of the prefix
    return x;
  };
  model.set_gate(gate);
  const auto expect_gates = [&](const Hypothesis& h, int sentence, const std::string& what) {
    ASSERT_EQ(h.gate.size(), h.ids.size() + (h.finished ? 1 : 0)) << what;
    for (size_t r = 0; r < h.gate.size(); ++r)
      EXPECT_FLOAT_EQ(h.gate[r], static_cast<float>(gate(sentence, {h.ids.begin(), h.ids.begin() + r})))
          << what << " token " << r;
  };
  core::Graph g(false);
  SearchOptions o;
  o.max_length_ratio = 0;
  o.max_length_offset = 2;  // some beam hypotheses end here unfinished
  o.alignments = true;
  const SourceBatch src = sources({4, 6, 5});  // sentence s: s repeated
  const std::vector<Hypothesis> greedy = greedy_search(g, model, src, o);
  for (int s = 0; s < 3; ++s) expect_gates(greedy[s], s, "greedy " + std::to_string(s));
  o.beam = 4;
  o.n_best = 4;
  int finished = 0, unfinished = 0;
  const auto beam = beam_search(g, model, src, o);
  for (int s = 0; s < 3; ++s)
    for (size_t k = 0; k < beam[s].size(); ++k) {
      expect_gates(beam[s][k], s, "beam sentence " + std::to_string(s) + " best " + std::to_string(k));
      ++(beam[s][k].finished ? finished : unfinished);
    }
  EXPECT_GT(finished, 0);
  EXPECT_GT(unfinished, 0);
  o.alignments = false;
  EXPECT_TRUE(beam_search(g, model, src, o)[0][0].gate.empty());
  EXPECT_TRUE(greedy_search(g, model, src, o)[0].gate.empty());
}

TEST(Search, SamplingFollowsTheDistribution) {
  ToyModel model(6, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(6, 1e-9);
    if (prefix.empty()) p[4] = 0.75, p[5] = 0.25;
    else p[kEos] = 1.0;
    return p;
  });
  core::Graph g(false);
  core::Rng rng(3);
  int fours = 0;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) fours += sample_search(g, model, sources({1}), {}, 1.0f, rng)[0].ids[0] == 4;
  EXPECT_NEAR(fours / double(draws), 0.75, 0.025);  // sd 0.0068: +-3.6 sd
}

// top-k and nucleus (top-p) sampling renormalise over the kept classes: first-token
// probabilities 0.5 / 0.3 / 0.15 / 0.05 (ids 4..7) give, with top_k 2, 0.625 / 0.375 and nothing
// else; with top_p 0.85 (mass reached at the third class) 0.5/0.95, 0.3/0.95, 0.15/0.95; with
// top_p 0.45 the first class alone. search() samples (seeded) when sampling_topk != 1.
TEST(Search, TopKAndTopPSamplingKeepTheRenormalisedHead) {
  ToyModel model(8, [](int, const std::vector<int32_t>& prefix) {
    std::vector<double> p(8, 1e-12);
    if (prefix.empty()) p[4] = 0.5, p[5] = 0.3, p[6] = 0.15, p[7] = 0.05;
    else p[kEos] = 1.0;
    return p;
  });
  core::Graph g(false);
  core::Rng rng(5);
  const int draws = 4000;
  auto counts = [&](int k, float p) {
    std::vector<int> c(8, 0);
    for (int i = 0; i < draws; ++i) ++c[sample_search(g, model, sources({1}), {}, 1.0f, rng, k, p)[0].ids[0]];
    return c;
  };
  std::vector<int> c = counts(2, 1.0f);
  EXPECT_EQ(c[6] + c[7], 0);
  EXPECT_NEAR(c[4] / double(draws), 0.625, 0.03);  // sd 0.0077
  c = counts(0, 0.85f);
  EXPECT_EQ(c[7], 0);
  EXPECT_NEAR(c[4] / double(draws), 0.5 / 0.95, 0.03);
  EXPECT_NEAR(c[6] / double(draws), 0.15 / 0.95, 0.03);
  c = counts(0, 0.45f);
  EXPECT_EQ(c[4], draws);
  // Through search(): the same seed draws the same; sampling_topk 1 is greedy (arg-max 4).
  SearchOptions o;
  o.sampling_topk = 0;
  o.seed = 9;
  std::vector<int32_t> first, again;
  for (int i = 0; i < 50; ++i) {
    o.seed = 9 + i;
    first.push_back(search(g, model, sources({1}), o)[0][0].ids[0]);
    again.push_back(search(g, model, sources({1}), o)[0][0].ids[0]);
  }
  EXPECT_EQ(first, again);
  EXPECT_NE(std::count(first.begin(), first.end(), 4), 50);  // sampled, not the arg-max each time
  o.beam = 2;
  EXPECT_THROW(search(g, model, sources({1}), o), Error);  // sampling draws one output
}

// top_k against a stable sort of the indices by score, on rows with many ties and -inf, across
// the 16-wide blocks it skips and the tail after them.
// arg_max against std::max_element on vectors around its 16-lane blocks: ties (the first index
// wins), infinities, NaNs at 0 and elsewhere.
TEST(Search, ArgMaxIsStdMaxElement) {
  core::Rng rng(5);
  std::vector<int> sizes;  // every size to 70, then past the 64 lanes of the AVX-512 loop's steps
  for (int v = 1; v <= 70; ++v) sizes.push_back(v);
  for (int v : {127, 128, 129, 191, 200, 257, 1000}) sizes.push_back(v);
  for (int v : sizes)
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> lp(v);
      for (float& x : lp) x = static_cast<float>(static_cast<int>(rng.below(7))) - 3.0f;  // many ties
      if (trial % 5 == 1) lp[rng.below(v)] = std::numeric_limits<float>::infinity();
      if (trial % 5 == 2) lp[rng.below(v)] = std::nanf("");
      if (trial % 5 == 3) lp[0] = std::nanf("");
      if (trial % 5 == 4) std::fill(lp.begin(), lp.end(), -std::numeric_limits<float>::infinity());
      EXPECT_EQ(arg_max(lp.data(), v), std::max_element(lp.begin(), lp.end()) - lp.begin()) << "v=" << v;
    }
}

TEST(Search, TopKEqualsAStableSort) {
  uint64_t h = 12345;
  auto next = [&] { return h = h * 6364136223846793005ull + 1442695040888963407ull; };
  std::vector<int32_t> got;
  for (int v : {1, 5, 15, 16, 17, 31, 32, 33, 100, 257, 1000}) {  // past 64: the AVX-512 blocks
    for (int k : {1, 2, 5, 10}) {
      if (k > v) continue;
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<float> lp(v);
        for (float& x : lp) {
          const uint64_t r = next() >> 40;
          x = r % 7 == 0 ? -INFINITY : static_cast<float>(static_cast<int>(r % 13) - 20);  // ties everywhere
        }
        if (trial % 4 == 1)  // rising scores: every block holds a new best
          for (int i = 0; i < v; ++i) lp[i] = static_cast<float>(i / 3);
        std::vector<int32_t> want(v);
        for (int i = 0; i < v; ++i) want[i] = i;
        std::stable_sort(want.begin(), want.end(), [&](int32_t a, int32_t b) { return lp[a] > lp[b]; });
        want.resize(k);
        top_k(lp.data(), v, k, got);
        EXPECT_EQ(got, want) << "v " << v << " k " << k << " trial " << trial;
      }
    }
  }
}

// A pointer-like model that masks with -inf: tokens 4 .. 4+n-1 are the n positions of the source,
// each allowed once; <eos> only after all n. Every hypothesis any search returns is a permutation
// with a finite score, also when the beam is wider than the positions left (n < K).
TEST(SearchMasks, MaskedClassesNeverChosenAndBeamsNarrowerThanKStayValid) {
  for (int n : {1, 2, 3, 5}) {
    const int vocab = 4 + n;
    ToyModel model(vocab, [n, vocab](int sentence, const std::vector<int32_t>& prefix) {
      std::vector<double> p(vocab, 0.0);
      if (static_cast<int>(prefix.size()) == n) {
        p[kEos] = 1.0;
        return p;
      }
      double total = 0;
      for (int j = 0; j < n; ++j) {
        if (std::find(prefix.begin(), prefix.end(), 4 + j) != prefix.end()) continue;
        p[4 + j] = 1.0 + ((sentence * 7 + j * 13 + static_cast<int>(prefix.size()) * 5) % 11);
        total += p[4 + j];
      }
      for (double& x : p) x /= total;
      return p;
    });
    const SourceBatch src = SourceBatch::from_ids({{1, 1, 1}, {2, 2, 2}});
    core::Graph g(false);
    auto check = [&](const Hypothesis& h, const char* what) {
      std::vector<int32_t> ids = h.ids;
      std::sort(ids.begin(), ids.end());
      std::vector<int32_t> all(n);
      for (int j = 0; j < n; ++j) all[j] = 4 + j;
      EXPECT_EQ(ids, all) << what << " n=" << n;
      EXPECT_TRUE(h.finished) << what;
      EXPECT_TRUE(std::isfinite(h.score)) << what;
    };
    for (const Hypothesis& h : greedy_search(g, model, src, {})) check(h, "greedy");
    for (int k : {2, 3, 8}) {
      const auto beams = beam_search(g, model, src, {.beam = k, .n_best = k});
      for (const auto& list : beams) {
        EXPECT_FALSE(list.empty());
        for (const Hypothesis& h : list) check(h, "beam");
      }
    }
  }
  // A model that allows nothing is an error, not a silently invalid output.
  ToyModel none(5, [](int, const std::vector<int32_t>&) { return std::vector<double>(5, 0.0); });
  core::Graph g(false);
  EXPECT_THROW(greedy_search(g, none, SourceBatch::from_ids({{1}}), {}), Error);
  const auto empty = beam_search(g, none, SourceBatch::from_ids({{1}}), {.beam = 2});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].empty());
}

}  // namespace
}  // namespace engram::decode
