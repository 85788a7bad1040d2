// ROUGE against Google's rouge_score (google-research/google-research, rouge/): its unit tests
// (rouge/rouge_scorer_test.py, whose "ground truth scores are taken from manual runs of
// ROUGE-1.5.5") on its committed test data (tests/golden/rouge_score/, copied verbatim), its
// tokenizer rules (rouge/tokenize.py) and hand computations written out next to each assertion.
// The Porter stemmer is checked word by word against NLTK (tests/golden/porter/).
#include <gtest/gtest.h>

#include <sstream>

#include "engram/core/error.h"
#include "engram/eval/porter.h"
#include "engram/eval/rouge.h"
#include "eval/golden.h"

namespace engram::eval {
namespace {

using testing::golden_lines;

std::string golden_text(const std::string& relative) {
  std::string out;
  for (const auto& line : golden_lines(relative)) out += line + "\n";
  return out;
}

// Hand computation on rouge_score's usage example (rouge_scorer.py docstring and README):
// target 'The quick brown fox jumps over the lazy dog' (9 tokens), prediction 'The quick brown
// dog jumps on the log.' (8 tokens). Unigrams in common: the x2, quick, brown, dog, jumps = 6 ->
// P = 6/8, R = 6/9. LCS "the quick brown jumps the" = 5 -> P = 5/8, R = 5/9. Bigrams: 2 shared
// (the quick, quick brown) of 7 and 8 -> F = 2 (2/7)(1/4) / (2/7 + 1/4) = 28/105. One sentence
// each: ROUGE-Lsum is ROUGE-L. With the stemmer only "jumps" -> "jump" changes, on both sides.
TEST(Rouge, UsageExampleByHand) {
  for (bool stem : {false, true}) {
    const auto r = sentence_rouge("The quick brown dog jumps on the log.",
                                  "The quick brown fox jumps over the lazy dog", {stem});
    EXPECT_NEAR(r.rouge1.precision, 0.75, 1e-12);
    EXPECT_NEAR(r.rouge1.recall, 6.0 / 9.0, 1e-12);
    EXPECT_NEAR(r.rouge1.f1, 12.0 / 17.0, 1e-12);
    EXPECT_NEAR(r.rouge2.precision, 2.0 / 7.0, 1e-12);
    EXPECT_NEAR(r.rouge2.recall, 0.25, 1e-12);
    EXPECT_NEAR(r.rouge2.f1, 28.0 / 105.0, 1e-12);
    EXPECT_NEAR(r.rouge_l.precision, 0.625, 1e-12);
    EXPECT_NEAR(r.rouge_l.recall, 5.0 / 9.0, 1e-12);
    EXPECT_NEAR(r.rouge_l.f1, 10.0 / 17.0, 1e-12);
    EXPECT_NEAR(r.rouge_lsum.f1, r.rouge_l.f1, 1e-12);
  }
}

// rouge_scorer_test.py: testRouge1, testRouge2, testRougeLConsecutive, testRougeLNonConsecutive
// (score(target, prediction) is sentence_rouge(prediction, target)).
TEST(Rouge, ScorerUnitTests) {
  auto r = sentence_rouge("testing", "testing one two");
  EXPECT_NEAR(r.rouge1.precision, 1.0, 1e-12);
  EXPECT_NEAR(r.rouge1.recall, 1.0 / 3, 1e-12);
  EXPECT_NEAR(r.rouge1.f1, 0.5, 1e-12);
  r = sentence_rouge("testing one", "testing one two");
  EXPECT_NEAR(r.rouge2.precision, 1.0, 1e-12);
  EXPECT_NEAR(r.rouge2.recall, 0.5, 1e-12);
  EXPECT_NEAR(r.rouge2.f1, 2.0 / 3, 1e-12);
  EXPECT_NEAR(r.rouge_l.precision, 1.0, 1e-12);
  EXPECT_NEAR(r.rouge_l.recall, 2.0 / 3, 1e-12);
  EXPECT_NEAR(r.rouge_l.f1, 0.8, 1e-12);
  r = sentence_rouge("testing two", "testing one two");
  EXPECT_NEAR(r.rouge_l.precision, 1.0, 1e-12);
  EXPECT_NEAR(r.rouge_l.recall, 2.0 / 3, 1e-12);
  EXPECT_NEAR(r.rouge_l.f1, 0.8, 1e-12);
  // testRougeEmpty: an empty prediction scores 0 on every type.
  r = sentence_rouge("", "testing one two");
  for (const RougeScore* s : {&r.rouge1, &r.rouge2, &r.rouge_l, &r.rouge_lsum}) {
    EXPECT_EQ(s->precision, 0.0);
    EXPECT_EQ(s->recall, 0.0);
    EXPECT_EQ(s->f1, 0.0);
  }
}

// rouge_scorer_test.py testRouge{1,2,L}AgainstRouge155[WithStemming] on testdata/target.txt and
// prediction.txt (lines 0 and 1); values to 5 places from ROUGE-1.5.5 as given there.
TEST(Rouge, AgainstRouge155OnRougeScoreTestData) {
  const auto targets = golden_lines("rouge_score/target.txt");
  const auto predictions = golden_lines("rouge_score/prediction.txt");
  ASSERT_EQ(targets.size(), 2u);
  ASSERT_EQ(predictions.size(), 2u);
  struct Expect {
    bool stem;
    int line;
    double r1[3], r2[3], rl[3];  // recall, precision, F
  };
  const Expect cases[] = {
      {false, 0, {0.40741, 0.68750, 0.51163}, {0.30769, 0.53333, 0.39024}, {0.40741, 0.68750, 0.51163}},
      {false, 1, {0.40476, 0.65385, 0.50000}, {0.29268, 0.48000, 0.36364}, {0.40476, 0.65385, 0.50000}},
      {true, 0, {0.40741, 0.68750, 0.51163}, {0.30769, 0.53333, 0.39024}, {-1, -1, -1}},
      {true, 1, {0.42857, 0.69231, 0.52941}, {0.29268, 0.48000, 0.36364}, {-1, -1, -1}},
  };
  for (const Expect& e : cases) {
    SCOPED_TRACE(::testing::Message() << "stem " << e.stem << " line " << e.line);
    const auto r = sentence_rouge(predictions[e.line], targets[e.line], {e.stem});
    auto check = [](const RougeScore& s, const double* want) {
      if (want[0] < 0) return;  // not in rouge_score's tests
      EXPECT_NEAR(s.recall, want[0], 5e-6);
      EXPECT_NEAR(s.precision, want[1], 5e-6);
      EXPECT_NEAR(s.f1, want[2], 5e-6);
    };
    check(r.rouge1, e.r1);
    check(r.rouge2, e.r2);
    check(r.rouge_l, e.rl);
  }
}

// rouge_scorer_test.py testRougeLSumAgainstRouge155WithStemming: pyrouge_files/
// target_multi.0.txt vs prediction_multi.0.txt, one sentence per line -> R 0.36538, P 0.66667,
// F 0.47205.
TEST(Rouge, LsumAgainstRouge155WithStemming) {
  const auto r = sentence_rouge(golden_text("rouge_score/prediction_multi.0.txt"),
                                golden_text("rouge_score/target_multi.0.txt"), {true});
  EXPECT_NEAR(r.rouge_lsum.recall, 0.36538, 5e-6);
  EXPECT_NEAR(r.rouge_lsum.precision, 0.66667, 5e-6);
  EXPECT_NEAR(r.rouge_lsum.f1, 0.47205, 5e-6);
}

// rouge_scorer_test.py testRougeLsum / testSummaryLevelLcs (the union-LCS example of section 3.2
// of Lin's ROUGE paper): reference w1..w5; candidate sentences "w1 w2 w6 w7 w8" (LCS w1 w2) and
// "w1 w3 w8 w9 w5" (LCS w1 w3 w5); union {w1 w2 w3 w5} = 4 hits -> R = 4/5, P = 4/10.
// Second case, by hand: reference "a b\nb a", candidate "b a". Sentence [a b] vs [b a]: LCS 1,
// and rouge_score's backtracking (a tie moves up a row) reads back "a"; [b a] vs [b a]: "b a".
// Hits while both counts last (candidate a:1 b:1, reference a:2 b:2): a, b -> 2; the second "a"
// finds the candidate's "a" used up. R = 2/4, P = 2/2.
TEST(Rouge, LsumUnionLcs) {
  auto r = sentence_rouge("w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", "w1 w2 w3 w4 w5");
  EXPECT_NEAR(r.rouge_lsum.recall, 0.8, 1e-12);
  EXPECT_NEAR(r.rouge_lsum.precision, 0.4, 1e-12);
  EXPECT_NEAR(r.rouge_lsum.f1, 2 * 0.8 * 0.4 / 1.2, 1e-12);
  // Empty cases of testRougeLsum: empty prediction, empty target, prediction of non-word chars.
  EXPECT_EQ(sentence_rouge("", "w1 w2 w3 w4 w5").rouge_lsum.f1, 0.0);
  EXPECT_EQ(sentence_rouge("w1", "").rouge_lsum.recall, 0.0);
  EXPECT_EQ(sentence_rouge("/", "w1 w2 w3 w4 w5").rouge_lsum.precision, 0.0);
  r = sentence_rouge("b a", "a b\nb a");
  EXPECT_NEAR(r.rouge_lsum.recall, 0.5, 1e-12);
  EXPECT_NEAR(r.rouge_lsum.precision, 1.0, 1e-12);
  // Double counting is prevented: reference "x y\nx y", candidate "x y" -> both reference
  // sentences' unions are {x, y}, but the candidate has one x and one y: 2 hits, not 4.
  r = sentence_rouge("x y", "x y\nx y");
  EXPECT_NEAR(r.rouge_lsum.recall, 0.5, 1e-12);
  EXPECT_NEAR(r.rouge_lsum.precision, 1.0, 1e-12);
  // Empty lines are not sentences; newlines are plain spaces for ROUGE-1/2/L.
  const auto a = sentence_rouge("x y\n\n\nz", "x y z");
  EXPECT_NEAR(a.rouge1.f1, 1.0, 1e-12);
  EXPECT_NEAR(a.rouge2.precision, 1.0, 1e-12);  // "y z" is a bigram across the newline
  EXPECT_EQ(lsum_text({"a b.", "c d."}), "a b.\nc d.");
}

// rouge/tokenize.py: lower(), [^a-z0-9]+ -> " ", split, stem tokens longer than 3 characters.
TEST(Rouge, Tokenizer) {
  // Non-ASCII letters are not in [a-z0-9]: "Été" leaves only "t" (as in rouge_score).
  EXPECT_EQ(rouge_tokenize("Hello, World! Été"), (std::vector<std::string>{"hello", "world", "t"}));
  EXPECT_EQ(rouge_tokenize("中文 don't U.S. 3.5%"),
            (std::vector<std::string>{"don", "t", "u", "s", "3", "5"}));
  // Python's str.lower() maps U+212A KELVIN SIGN to "k" and U+0130 to "i" + U+0307.
  EXPECT_EQ(rouge_tokenize("\u212Aelvin \u0130stanbul"), (std::vector<std::string>{"kelvin", "i", "stanbul"}));
  EXPECT_TRUE(rouge_tokenize(" \t\n--- ").empty());
  // Stemming: "cats" -> "cat", "running" -> "run", "runs" -> "run"; "was" and "cat" (3 letters)
  // are left alone.
  EXPECT_EQ(rouge_tokenize("Cats were running, was cat", true),
            (std::vector<std::string>{"cat", "were", "run", "was", "cat"}));
  // Hand computation, stemmer off / on: hypothesis "The cats were running" vs reference "A cat
  // runs". Off: no shared token -> 0. On: [the cat were run] vs [a cat run] -> 2 shared,
  // P = 2/4, R = 2/3, F = 2 (1/2)(2/3) / (1/2 + 2/3) = 4/7; LCS "cat run" = 2 -> the same.
  EXPECT_EQ(sentence_rouge("The cats were running", "A cat runs").rouge1.f1, 0.0);
  const auto s = sentence_rouge("The cats were running", "A cat runs", {true});
  EXPECT_NEAR(s.rouge1.precision, 0.5, 1e-12);
  EXPECT_NEAR(s.rouge1.recall, 2.0 / 3, 1e-12);
  EXPECT_NEAR(s.rouge1.f1, 4.0 / 7, 1e-12);
  EXPECT_NEAR(s.rouge_l.f1, 4.0 / 7, 1e-12);
  EXPECT_NEAR(s.rouge2.f1, 0.0, 1e-12);  // bigrams: the cat / cat were / were run vs a cat / cat run
  // NLTK's extension keeps "say" in "says" (the original Porter algorithm gives "sai", and then
  // "say", too short to stem, would not match): R1 = 1.
  EXPECT_NEAR(sentence_rouge("he says", "he say", {true}).rouge1.f1, 1.0, 1e-12);
}

TEST(Rouge, CorpusMeanAndErrors) {
  const auto mean = corpus_rouge({"a b c", "x"}, {"a b c", "y"});
  EXPECT_DOUBLE_EQ(mean.rouge1.f1, 0.5);
  EXPECT_DOUBLE_EQ(mean.rouge_l.recall, 0.5);
  EXPECT_DOUBLE_EQ(mean.rouge_lsum.precision, 0.5);
  const auto same = sentence_rouge("a b c", "A, B. C!");
  EXPECT_DOUBLE_EQ(same.rouge2.f1, 1.0);
  EXPECT_EQ(corpus_rouge({}, {}).rouge1.f1, 0.0);
  EXPECT_THROW(corpus_rouge({"a"}, {}), Error);
}

// Every word of tests/golden/porter/nltk_porter.tsv (Porter's paper examples, the words NLTK's
// extensions are about, and a 1-in-20 sample of the BBC News vocabulary) stems exactly as
// nltk.stem.porter.PorterStemmer().stem does (the file is NLTK's output; make_golden.py).
TEST(Porter, MatchesNltkDefaultMode) {
  const auto lines = golden_lines("porter/nltk_porter.tsv");
  ASSERT_GT(lines.size(), 1000u);
  size_t wrong = 0;
  for (const auto& line : lines) {
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string word = line.substr(0, tab), want = line.substr(tab + 1);
    const std::string got = porter_stem(word);
    if (got != want && ++wrong <= 20) ADD_FAILURE() << word << ": " << got << " != NLTK's " << want;
  }
  EXPECT_EQ(wrong, 0u);
}

// Porter's paper, step by step, where the step's result is also the final stem (hand-checked
// through the later steps): caresses -> caress, ponies -> poni, hopping -> hop, filing -> file,
// relational -> relat, triplicate -> triplic, adoption -> adopt, roll -> roll; plus NLTK's departures (porter.h).
TEST(Porter, PaperExamplesAndNltkDepartures) {
  EXPECT_EQ(porter_stem("caresses"), "caress");
  EXPECT_EQ(porter_stem("ponies"), "poni");
  EXPECT_EQ(porter_stem("hopping"), "hop");
  EXPECT_EQ(porter_stem("filing"), "file");
  EXPECT_EQ(porter_stem("relational"), "relat");
  EXPECT_EQ(porter_stem("triplicate"), "triplic");
  EXPECT_EQ(porter_stem("adoption"), "adopt");
  EXPECT_EQ(porter_stem("roll"), "roll");
  EXPECT_EQ(porter_stem("ties"), "tie");    // four-letter -ies
  EXPECT_EQ(porter_stem("skies"), "sky");   // irregular form
  EXPECT_EQ(porter_stem("dying"), "die");   // irregular form
  EXPECT_EQ(porter_stem("says"), "say");    // y after a vowel stays
  EXPECT_EQ(porter_stem("cry"), "cri");     // y after a consonant
  EXPECT_EQ(porter_stem("generalli"), "gener");  // -alli first, step 2 again
  EXPECT_EQ(porter_stem("is"), "is");       // two letters: unchanged
}

}  // namespace
}  // namespace engram::eval
