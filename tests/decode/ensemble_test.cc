// EnsembleStepModel (decode/ensemble.h): its steps are the log of the members' mean probability,
// so a search over it finds what an enumeration of the mixture p(y | prefix) = (p_1 + p_2) / 2
// finds; one member is that member; α is the members' mean; members must agree on V, <go>, <eos>.
#include "engram/decode/ensemble.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engram/core/error.h"
#include "engram/decode/search.h"
#include "toy_model.h"

namespace engram::decode {
namespace {

using toy::ToyModel;

TEST(Ensemble, BeamSearchFindsTheMixturesBestHypothesis) {
  constexpr int kVocab = 6, kMaxLen = 4;
  const ToyModel::Dist d1 = toy::random_dist(kVocab, 1), d2 = toy::random_dist(kVocab, 2);
  ToyModel m1(kVocab, d1), m2(kVocab, d2);
  const EnsembleStepModel ens({&m1, &m2});
  EXPECT_EQ(ens.size(), 2);
  const ToyModel::Dist mix = [&](int s, const std::vector<int32_t>& prefix) {
    std::vector<double> p = d1(s, prefix), q = d2(s, prefix);
    for (size_t v = 0; v < p.size(); ++v) p[v] = (p[v] + q[v]) / 2;
    return p;
  };
  SearchOptions o;
  o.beam = 64;  // wide enough to be exhaustive at this size (V^L = 6^4 paths, of which few survive)
  o.max_length = kMaxLen;
  o.max_length_ratio = 0;
  o.max_length_offset = kMaxLen;
  core::Graph g(false);
  const auto hyps = beam_search(g, ens, toy::sources({3, 5}), o);
  for (int s = 0; s < 2; ++s) {
    std::vector<std::pair<double, std::vector<int32_t>>> all;
    std::vector<int32_t> prefix;
    toy::enumerate(mix, s, kVocab, kMaxLen, prefix, 0.0, all);
    const auto best = *std::max_element(all.begin(), all.end(),
                                        [](const auto& a, const auto& b) { return a.first < b.first; });
    ASSERT_FALSE(hyps[s].empty());
    EXPECT_EQ(hyps[s][0].ids, best.second) << "sentence " << s;
    EXPECT_NEAR(hyps[s][0].log_prob, best.first, 1e-4) << "sentence " << s;
  }
  // Each member on its own finds another answer for at least one sentence (else the test would
  // not tell an ensemble from its first member).
  const auto alone = beam_search(g, m1, toy::sources({3, 5}), o);
  EXPECT_TRUE(alone[0][0].ids != hyps[0][0].ids || alone[1][0].ids != hyps[1][0].ids ||
              std::abs(alone[0][0].log_prob - hyps[0][0].log_prob) > 1e-3);
}

TEST(Ensemble, OneMemberIsThatMember) {
  ToyModel m(5, toy::random_dist(5, 7));
  const EnsembleStepModel ens({&m});
  SearchOptions o;
  o.beam = 3;
  o.n_best = 3;
  core::Graph g(false);
  const auto a = beam_search(g, m, toy::sources({4, 2, 6}), o), b = beam_search(g, ens, toy::sources({4, 2, 6}), o);
  ASSERT_EQ(a.size(), b.size());
  for (size_t s = 0; s < a.size(); ++s) {
    ASSERT_EQ(a[s].size(), b[s].size());
    for (size_t k = 0; k < a[s].size(); ++k) {
      EXPECT_EQ(a[s][k].ids, b[s][k].ids);
      EXPECT_EQ(a[s][k].log_prob, b[s][k].log_prob);
    }
  }
}

TEST(Ensemble, AttentionAndGateAreTheMembersMeans) {
  constexpr int kVocab = 5;
  const ToyModel::Dist d = toy::random_dist(kVocab, 3);
  ToyModel m1(kVocab, d), m2(kVocab, d);
  m1.set_align([](int, const std::vector<int32_t>&, int len) {
    std::vector<double> a(len, 0.0);
    a[0] = 1.0;
    return a;
  });
  m2.set_align([](int, const std::vector<int32_t>&, int len) {
    std::vector<double> a(len, 0.0);
    a[len - 1] = 1.0;
    return a;
  });
  m1.set_gate([](int, const std::vector<int32_t>& prefix) { return 0.2 + 0.1 * static_cast<double>(prefix.size()); });
  m2.set_gate([](int, const std::vector<int32_t>&) { return 0.6; });
  const EnsembleStepModel ens({&m1, &m2});
  SearchOptions o;
  o.alignments = true;
  o.max_length = 3;
  core::Graph g(false);
  const Hypothesis h = greedy_search(g, ens, toy::sources({4}), o)[0];
  const Hypothesis alone = greedy_search(g, m1, toy::sources({4}), o)[0];
  EXPECT_EQ(h.ids, alone.ids) << "identical distributions: the mixture is the same distribution";
  ASSERT_EQ(h.alignment.size(), h.ids.size() * 4 + (h.finished ? 4 : 0));
  for (size_t r = 0; r * 4 < h.alignment.size(); ++r)
    for (int s = 0; s < 4; ++s)
      EXPECT_FLOAT_EQ(h.alignment[r * 4 + s], (s == 0 || s == 3) ? 0.5f : 0.0f) << "row " << r << " position " << s;
  ASSERT_EQ(h.gate.size(), h.ids.size() + (h.finished ? 1 : 0));  // the gates' mean, as α's
  for (size_t r = 0; r < h.gate.size(); ++r) EXPECT_FLOAT_EQ(h.gate[r], 0.4f + 0.05f * static_cast<float>(r)) << r;
}

TEST(Ensemble, MembersMustAgreeOnTheOutputSpace) {
  ToyModel small(5, toy::random_dist(5, 1)), large(6, toy::random_dist(6, 1));
  const EnsembleStepModel ens({&small, &large});
  core::Graph g(false);
  try {
    greedy_search(g, ens, toy::sources({3}), SearchOptions{});
    FAIL() << "members of 5 and 6 classes decoded together";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("member 1 returns log-probabilities"), std::string::npos) << e.what();
  }
  EXPECT_THROW(EnsembleStepModel({}), Error);
  EXPECT_THROW(EnsembleStepModel(std::vector<const StepModel*>(kMaxEnsemble + 1, &small)), Error);
  EXPECT_NO_THROW(EnsembleStepModel(std::vector<const StepModel*>(kMaxEnsemble, &small)));
}

// A step given another model's state (decode::state_as) is an error naming the model, not a
// read of the wrong type.
TEST(Ensemble, AnotherModelsStateIsRefusedByName) {
  ToyModel m(5, toy::random_dist(5, 7));
  const EnsembleStepModel ens({&m, &m});
  core::Graph g(false);
  const std::unique_ptr<DecodeState> own = m.encode(g, toy::sources({3}));  // the toy's state
  const std::vector<int32_t> go = {m.go_id()};
  try {
    ens.step(g, *own, go);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ensemble: decode state of another model"), std::string::npos) << e.what();
  }
  EXPECT_EQ(&state_as<DecodeState>(*own, "toy"), own.get()) << "its own type is the state itself";
}

}  // namespace
}  // namespace engram::decode
