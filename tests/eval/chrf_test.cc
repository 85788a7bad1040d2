// Golden chrF / chrF++ tests: expected numbers from mjpost/sacrebleu test/test_chrf.py and
// README.md (cited per case); one chrF++ value is derived by hand in the comment next to it.
#include "engram/eval/chrf.h"

#include <gtest/gtest.h>

#include "engram/core/error.h"
#include "eval/golden.h"

namespace engram::eval {
namespace {

using testing::golden_lines;

struct Case {
  std::string hyp;
  std::string ref;
  double expected;
};

// sacrebleu.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, ...)
double corpus_beta3(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                    bool eps_smoothing, bool whitespace = false) {
  ChrfOptions o;
  o.beta = 3;
  o.eps_smoothing = eps_smoothing;
  o.whitespace = whitespace;
  return corpus_chrf(hyps, {refs}, o).score;
}

// test/test_chrf.py: test_cases (eps_smoothing=True, EPSILON = 1e-4).
TEST(Chrf, EpsilonSmoothingCases) {
  const Case cases[] = {
      {"abcdefg", "hijklmnop", 0.0},
      {"a", "b", 0.0},
      {"", "b", 0.0},
      {"", "ref", 0.0},
      {"", "reference", 0.0},
      {"aa", "ab", 8.3333},
      {"a", "a", 16.6667},
      {"a b c", "a b c", 50.0},
      {"a b c", "abc", 50.0},
      {" risk assessment must be made of those who are qualified and expertise in the sector - "
       "these are the scientists .",
       "risk assessment has to be undertaken by those who are qualified and expert in that area - "
       "that is the scientists .",
       63.361730},
      {" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. ",
       "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.",
       64.1302698},
      {"Niemand hat die Absicht, eine Mauer zu errichten",
       "Niemand hat die Absicht, eine Mauer zu errichten", 100.0},
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(corpus_beta3({c.hyp}, {c.ref}, true), c.expected, 1e-4) << c.hyp;
  }
  // Two segments, statistics summed: (["a", "b"], ["a", "c"]) -> 8.3333.
  EXPECT_NEAR(corpus_beta3({"a", "b"}, {"a", "c"}, true), 8.3333, 1e-4);
}

// test/test_chrf.py: test_cases_effective_order (eps_smoothing=False, sacreBLEU < 2.0 style).
TEST(Chrf, EffectiveOrderCases) {
  const Case cases[] = {
      {"a", "a", 100.0},       {"", "reference", 0.0}, {"a b c", "a b c", 100.0},
      {"a b c", "abc", 100.0}, {"", "c", 0.0},         {"aa", "ab", 25.0},
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(corpus_beta3({c.hyp}, {c.ref}, false), c.expected, 1e-4) << c.hyp;
  }
  EXPECT_NEAR(corpus_beta3({"a", "b"}, {"a", "c"}, false), 50.0, 1e-4);
}

// test/test_chrf.py: test_cases_keep_whitespace (remove_whitespace=False).
TEST(Chrf, KeepWhitespaceCases) {
  EXPECT_NEAR(
      corpus_beta3({"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
                   {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade "
                    "freundschaftlich."},
                   false, true),
      67.3481606, 1e-4);
  EXPECT_NEAR(corpus_beta3({"risk assessment must be made of those who are qualified and expertise "
                            "in the sector - these are the scientists ."},
                           {"risk assessment has to be undertaken by those who are qualified and "
                            "expert in that area - that is the scientists ."},
                           false, true),
              65.2414427, 1e-4);
}

// test/test_chrf.py: test_sentence_level_chrf, sacrebleu.sentence_chrf(hyp, refs,
// eps_smoothing=True) with the default beta 2 (Czech, non-ASCII characters).
TEST(Chrf, SentenceLevelCzech) {
  const auto hyps = golden_lines("sacrebleu/chrf_cs.hyp");
  const auto refs = golden_lines("sacrebleu/chrf_cs.ref");
  ASSERT_EQ(hyps.size(), 3u);
  ASSERT_EQ(refs.size(), 3u);
  const double expected[] = {39.14078509, 31.22557079, 57.15704367};
  ChrfOptions o;
  o.eps_smoothing = true;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(sentence_chrf(hyps[i], {refs[i]}, o).score, expected[i], 1e-4) << i;
  }
}

// README.md "Using SacreBLEU from Python": CHRF().corpus_score(sys, refs) -> "chrF2 = 59.73"
// (two references: the best one per segment by segment F-score).
TEST(Chrf, ReadmeCorpusTwoReferences) {
  const auto hyps = golden_lines("sacrebleu/readme.hyp");
  const std::vector<std::vector<std::string>> refs = {golden_lines("sacrebleu/readme.ref1"),
                                                      golden_lines("sacrebleu/readme.ref2")};
  const auto s = corpus_chrf(hyps, refs);
  EXPECT_EQ(s.format(), "chrF2 = 59.73");
  // README "Paired bootstrap resampling": chrF2 signature fields (without the bootstrap items).
  EXPECT_EQ(s.signature, "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.0.0+engram");
}

// chrF++ by hand: "the cat" vs "the dog", whitespace removed: char 1..6-gram precision (= recall,
// equal lengths) 3/6, 2/5, 1/4, 0, 0, 0; word unigrams 1/2, bigrams 0. Effective order 8:
// P = R = 1.65 / 8 = 0.20625, so F = 20.625.
TEST(Chrf, ChrfPlusPlusByHand) {
  const auto s = sentence_chrf("the cat", {"the dog"}, chrf_plus_plus_options());
  EXPECT_NEAR(s.score, 20.625, 1e-9);
  EXPECT_EQ(s.name, "chrF2++");
  EXPECT_EQ(s.signature, "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.0.0+engram");
  // Punctuation split: "dog." -> "dog", "." so word unigrams match as for "dog". By hand:
  // "thecat." vs "thedog." char precisions 4/7, 2/6, 1/5, 0, 0, 0; words "the cat ." vs
  // "the dog ." unigrams 2/3, bigrams 0: P = R = (4/7 + 1/3 + 1/5 + 2/3) / 8 = 62/280.
  EXPECT_NEAR(sentence_chrf("the cat.", {"the dog."}, chrf_plus_plus_options()).score, 100.0 * 62 / 280, 1e-9);
  EXPECT_NEAR(sentence_chrf("the cat.", {"the dog."}, chrf_plus_plus_options()).score,
              sentence_chrf("the cat .", {"the dog ."}, chrf_plus_plus_options()).score, 1e-12);
}

TEST(Chrf, BestReferenceWins) {
  const double alone = sentence_chrf("a b c", {"abc"}).score;
  EXPECT_DOUBLE_EQ(alone, 100.0);  // whitespace removed: identical character n-grams
  EXPECT_DOUBLE_EQ(sentence_chrf("a b c", {"xyz"}).score, 0.0);
  EXPECT_DOUBLE_EQ(sentence_chrf("a b c", {"xyz", "abc"}).score, alone);
  EXPECT_DOUBLE_EQ(sentence_chrf("a b c", {"abc", "xyz"}).score, alone);
}

TEST(Chrf, BadInputIsAnError) {
  EXPECT_THROW(corpus_chrf({"a", "b"}, {{"a"}}), Error);
  EXPECT_THROW(corpus_chrf({"a"}, {{""}}), Error);
}

}  // namespace
}  // namespace engram::eval
