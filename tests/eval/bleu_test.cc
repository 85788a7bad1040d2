// Golden BLEU tests: every expected number is sacreBLEU's own, from mjpost/sacrebleu
// test/test_bleu.py, test/test_sentence_bleu.py or README.md (cited per case).
#include "engram/eval/bleu.h"

#include <gtest/gtest.h>

#include "engram/core/error.h"
#include "eval/golden.h"

namespace engram::eval {
namespace {

using testing::golden_lines;

struct Readme {
  std::vector<std::string> hyps = golden_lines("sacrebleu/readme.hyp");
  std::vector<std::vector<std::string>> refs = {golden_lines("sacrebleu/readme.ref1"),
                                                golden_lines("sacrebleu/readme.ref2")};
};

BleuOptions with(BleuSmooth smooth, std::optional<double> value = std::nullopt) {
  BleuOptions o;
  o.smooth = smooth;
  o.smooth_value = value;
  return o;
}

// sacrebleu.raw_corpus_bleu(hyps, refs, smooth_value): tokenize 'none', floor smoothing,
// effective order (sacrebleu/compat.py).
BleuScore raw_corpus_bleu(const std::vector<std::string>& hyps,
                          const std::vector<std::vector<std::string>>& refs,
                          std::optional<double> smooth_value) {
  BleuOptions o = with(BleuSmooth::kFloor, smooth_value);
  o.tokenize = BleuTokenizer::kNone;
  o.effective_order = true;
  return corpus_bleu(hyps, refs, o);
}

// test/test_bleu.py: test_corpus_bleu_cases, EPSILON = 1e-8.
TEST(Bleu, ReadmeCorpusDefaults) {
  Readme d;
  const auto s = corpus_bleu(d.hyps, d.refs);
  EXPECT_NEAR(s.score, 48.530827, 1e-8);
  // README.md "Using SacreBLEU from Python": the verbose line and the signature.
  EXPECT_EQ(
      s.format(),
      "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  EXPECT_EQ(s.signature, "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0+engram");
  EXPECT_EQ(s.counts, (std::vector<int64_t>{14, 7, 5, 3}));
  EXPECT_EQ(s.totals, (std::vector<int64_t>{17, 14, 11, 8}));
  EXPECT_EQ(s.sys_len, 17);
  EXPECT_EQ(s.ref_len, 18);
}

TEST(Bleu, ReadmeCorpusVariants) {
  Readme d;
  // test_corpus_bleu_cases: empty hypotheses are kept and score 0.
  EXPECT_EQ(corpus_bleu({"", "", ""}, d.refs).score, 0.0);
  BleuOptions none_tok;
  none_tok.tokenize = BleuTokenizer::kNone;
  EXPECT_NEAR(corpus_bleu(d.hyps, d.refs, none_tok).score, 49.1919566, 1e-8);
  EXPECT_NEAR(corpus_bleu(d.hyps, d.refs, with(BleuSmooth::kNone)).score, 48.530827, 1e-8);
}

// test/test_bleu.py: test_bleu_max_order, compared as "{:.2f}" strings.
TEST(Bleu, MaxNgramOrder) {
  Readme d;
  const char* expected[] = {"77.65", "60.50", "53.93", "48.53", "46.14", "43.28"};
  for (int order = 1; order <= 6; ++order) {
    BleuOptions o;
    o.max_ngram_order = order;
    EXPECT_EQ(fmt::format("{:.2f}", corpus_bleu(d.hyps, d.refs, o).score), expected[order - 1])
        << "order " << order;
  }
}

// README.md "Variable Number of References": the first reference of segment 1 is ''.
TEST(Bleu, VariableNumberOfReferences) {
  Readme d;
  d.refs[0][0] = "";
  const auto s = corpus_bleu(d.hyps, d.refs);
  EXPECT_EQ(
      s.format(),
      "BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)");
  EXPECT_EQ(s.signature, "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0+engram");
}

// test/test_bleu.py: test_raw_bleu_cases and test_case_effective_order (score / 100, 1e-8).
TEST(Bleu, RawCorpusBleuAndEffectiveOrder) {
  EXPECT_NEAR(raw_corpus_bleu({"this is a test", "another test"}, {{"ref1", "ref2"}}, .01).score,
              0.0, 1e-8);
  EXPECT_NEAR(raw_corpus_bleu({"this is a test"}, {{"this is a test"}}, .01).score / 100, 1.0,
              1e-8);
  EXPECT_NEAR(raw_corpus_bleu({"this is a fest"}, {{"this is a test"}}, .01).score / 100,
              0.223606797749979, 1e-8);
  EXPECT_NEAR(raw_corpus_bleu({"test"}, {{"a test"}}, .01).score / 100, 0.3678794411714425, 1e-8);
  EXPECT_NEAR(raw_corpus_bleu({"a test"}, {{"a test"}}, .01).score / 100, 1.0, 1e-8);
  EXPECT_NEAR(raw_corpus_bleu({"a little test"}, {{"a test"}}, .01).score / 100,
              0.03218297948685433, 1e-8);
}

// test/test_bleu.py: test_case_statistics and test_case_offset.
TEST(Bleu, StatisticsAndFloorOffset) {
  const std::vector<std::string> hyp = {"am I am a character sequence"};
  const std::vector<std::vector<std::string>> ref = {{"I am a symbol string sequence a a"}};
  const auto s = raw_corpus_bleu(hyp, ref, .01);
  EXPECT_EQ(s.counts, (std::vector<int64_t>{4, 2, 1, 0}));
  EXPECT_EQ(s.totals, (std::vector<int64_t>{6, 5, 4, 3}));
  EXPECT_NEAR(raw_corpus_bleu(hyp, ref, 0.0).score / 100, 0.0, 1e-8);
  EXPECT_NEAR(raw_corpus_bleu(hyp, ref, std::nullopt).score / 100, 0.1555722182, 1e-8);
  EXPECT_NEAR(raw_corpus_bleu(hyp, ref, 0.1).score / 100, 0.1555722182, 1e-8);
}

// test/test_bleu.py: test_case_scoring (compute_bleu's default smooth_method 'none') and
// test_case_degenerate_stats (floor smoothing; exact equality with 0.0).
TEST(Bleu, ComputeFromStatistics) {
  auto stats = [](std::vector<int64_t> c, std::vector<int64_t> t, int64_t sys, int64_t ref) {
    BleuStats s;
    s.correct = std::move(c);
    s.total = std::move(t);
    s.sys_len = sys;
    s.ref_len = ref;
    return s;
  };
  EXPECT_NEAR(
      bleu_from_stats(stats({9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11), with(BleuSmooth::kNone)).score /
          100,
      0.8375922397, 1e-8);
  struct Case {
    BleuStats s;
    double offset;
  };
  const Case degenerate[] = {
      {stats({0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1), 0.0},
      {stats({0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10), 0.0},
      {stats({0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0), 0.0},
      {stats({6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6), 0.0},
      {stats({0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0), 0.1},
      {stats({0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5), 0.01},
  };
  for (const auto& c : degenerate) {
    EXPECT_EQ(bleu_from_stats(c.s, with(BleuSmooth::kFloor, c.offset)).score, 0.0);
  }
}

// test/test_sentence_bleu.py: test_cases (effective_order=True, EPSILON = 1e-3); the 'intl' and
// 'char' tokenizer rows are not implemented here.
TEST(Bleu, SentenceBleuSmoothingTable) {
  const std::string hyp = golden_lines("sacrebleu/sentence_bleu_ro.hyp").at(0);
  const std::string ref = golden_lines("sacrebleu/sentence_bleu_ro.ref").at(0);
  struct Case {
    BleuSmooth smooth;
    std::optional<double> value;
    BleuTokenizer tok;
    double expected;
  };
  const Case cases[] = {
      {BleuSmooth::kExp, std::nullopt, BleuTokenizer::k13a, 8.493},
      {BleuSmooth::kNone, std::nullopt, BleuTokenizer::k13a, 0.0},
      {BleuSmooth::kFloor, std::nullopt, BleuTokenizer::k13a, 4.51688},
      {BleuSmooth::kFloor, 0.1, BleuTokenizer::k13a, 4.51688},
      {BleuSmooth::kFloor, 0.5, BleuTokenizer::k13a, 10.10},
      {BleuSmooth::kAddK, std::nullopt, BleuTokenizer::k13a, 14.882},
      {BleuSmooth::kAddK, 1.0, BleuTokenizer::k13a, 14.882},
      {BleuSmooth::kAddK, 2.0, BleuTokenizer::k13a, 21.389},
      {BleuSmooth::kExp, std::nullopt, BleuTokenizer::kNone, 7.347},
  };
  for (const auto& c : cases) {
    BleuOptions o = sentence_bleu_options();
    o.smooth = c.smooth;
    o.smooth_value = c.value;
    o.tokenize = c.tok;
    EXPECT_NEAR(sentence_bleu(hyp, {ref}, o).score, c.expected, 1e-3)
        << "smooth " << static_cast<int>(c.smooth) << " value " << c.value.value_or(-1);
  }
  // sacrebleu.sentence_bleu defaults (compat.py): exp smoothing, 13a, effective order.
  EXPECT_NEAR(sentence_bleu(hyp, {ref}).score, 8.493, 1e-3);
  EXPECT_EQ(sentence_bleu(hyp, {ref}).signature,
            "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.0.0+engram");
}

// test/test_sentence_bleu.py: test_cases_zero_bleu (issue #141: no matching n-gram -> 0).
TEST(Bleu, SentenceBleuZero) {
  for (auto smooth : {BleuSmooth::kExp, BleuSmooth::kNone, BleuSmooth::kFloor, BleuSmooth::kAddK}) {
    BleuOptions o = sentence_bleu_options();
    o.smooth = smooth;
    EXPECT_NEAR(sentence_bleu("this is a cat", {"okay thanks"}, o).score, 0.0, 1e-3);
  }
}

TEST(Bleu, Signatures) {
  BleuOptions o;
  EXPECT_EQ(bleu_signature(o, 1, /*short_form=*/true),
            "#:1|c:mixed|e:no|tok:13a|s:exp|v:2.0.0+engram");
  o.smooth = BleuSmooth::kFloor;
  o.lowercase = true;
  EXPECT_EQ(bleu_signature(o, 1),
            "nrefs:1|case:lc|eff:no|tok:13a|smooth:floor[0.10]|version:2.0.0+engram");
  o.smooth = BleuSmooth::kAddK;
  o.tokenize = BleuTokenizer::kNone;
  EXPECT_EQ(bleu_signature(o, -1),
            "nrefs:var|case:lc|eff:no|tok:none|smooth:add-k[1.00]|version:2.0.0+engram");
}

TEST(Bleu, CorpusStatsAreTheSumOfSegmentStats) {
  Readme d;
  BleuStats sum;
  for (size_t i = 0; i < d.hyps.size(); ++i) {
    sum.add(bleu_segment_stats(d.hyps[i], {d.refs[0][i], d.refs[1][i]}, BleuOptions{}));
  }
  EXPECT_EQ(sum.correct, (std::vector<int64_t>{14, 7, 5, 3}));  // the README's statistics
  EXPECT_EQ(sum.total, (std::vector<int64_t>{17, 14, 11, 8}));
  EXPECT_EQ(sum.sys_len, 17);
  EXPECT_EQ(sum.ref_len, 18);
  EXPECT_NEAR(bleu_from_stats(sum, BleuOptions{}, 2).score, 48.530827, 1e-8);
  EXPECT_DOUBLE_EQ(bleu_from_stats(sum, BleuOptions{}, 2).score, corpus_bleu(d.hyps, d.refs).score);
}

TEST(Bleu, LowercaseOption) {
  BleuOptions o = sentence_bleu_options();
  // Case-sensitive, no unigram matches: 0 (as test_cases_zero_bleu).
  EXPECT_EQ(sentence_bleu("THE CAT SAT ON THE MAT", {"the cat sat on the mat"}, o).score, 0.0);
  o.lowercase = true;
  EXPECT_NEAR(sentence_bleu("THE CAT SAT ON THE MAT", {"the cat sat on the mat"}, o).score, 100.0,
              1e-9);
}

TEST(Bleu, BadInputIsAnError) {
  Readme d;
  EXPECT_THROW(corpus_bleu({"a", "b"}, d.refs), Error);  // stream length mismatch
  EXPECT_THROW(corpus_bleu({"a"}, {{""}}), Error);       // no non-empty reference
  EXPECT_THROW(corpus_bleu({"a"}, {}), Error);           // no reference stream
  try {
    corpus_bleu({"a", "b"}, {{"x", ""}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "BLEU: segment 2 has no non-empty reference");
  }
}

}  // namespace
}  // namespace engram::eval
