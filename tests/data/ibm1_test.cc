// IBM Model 1: the EM iterations of Koehn's worked example, the posterior, alignment learnt
// from a synthetic corpus whose true alignment is known, and fast_align's diagonal prior.
#include "engram/data/ibm1.h"

#include <gtest/gtest.h>

#include <cmath>

#include "data/test_util.h"
#include "engram/core/rng.h"

namespace engram::data {
namespace {

using testing::error_of;

// Koehn (2010), "Statistical Machine Translation", Figure 4.4: the corpus das Haus / the house,
// das Buch / the book, ein Buch / a book and t(e | f) after iterations 1, 2 and 3 of EM (printed
// to four places). Ids: das 0, Haus 1, Buch 2, ein 3; the 0, house 1, book 2, a 3.
TEST(Ibm1, KoehnsWorkedExample) {
  const std::vector<Example> corpus = {{{0, 1}, {0, 1}}, {{0, 2}, {0, 2}}, {{3, 2}, {3, 2}}};
  struct Row {
    int32_t f, e;
    double t[3];
  };
  const Row rows[] = {
      {0, 0, {0.5, 0.6364, 0.7479}},  {0, 2, {0.25, 0.1818, 0.1208}}, {0, 1, {0.25, 0.1818, 0.1313}},
      {2, 0, {0.25, 0.1818, 0.1208}}, {2, 2, {0.5, 0.6364, 0.7479}},  {2, 3, {0.25, 0.1818, 0.1313}},
      {3, 2, {0.5, 0.4286, 0.3466}},  {3, 3, {0.5, 0.5714, 0.6534}},  {1, 0, {0.5, 0.4286, 0.3466}},
      {1, 1, {0.5, 0.5714, 0.6534}},
  };
  for (int it = 1; it <= 3; ++it) {
    const Ibm1 m = Ibm1::train(corpus, it);
    EXPECT_EQ(m.pairs(), 10);
    for (const Row& r : rows) EXPECT_NEAR(m.prob(r.f, r.e), r.t[it - 1], 5e-5) << "f " << r.f << " e " << r.e << " it " << it;
    EXPECT_EQ(m.prob(1, 3), 0.0);  // Haus and a never meet
    EXPECT_EQ(m.prob(7, 0), 0.0);  // unknown source id
  }
}

TEST(Ibm1, PosteriorRowsAreTheNormalisedTranslationProbabilities) {
  const std::vector<Example> corpus = {{{0, 1}, {0, 1}}, {{0, 2}, {0, 2}}, {{3, 2}, {3, 2}}};
  const Ibm1 m = Ibm1::train(corpus, 3);
  const std::vector<int32_t> src = {0, 1, 9}, tgt = {1, 0, 8};  // das Haus <unseen> / house the <unseen>
  const std::vector<float> p = m.posterior(src, tgt);
  ASSERT_EQ(p.size(), 9u);
  // house: t(house | das) = 0.1313, t(house | Haus) = 0.6534 (Figure 4.4, iteration 3)
  EXPECT_NEAR(p[0], 0.1313 / (0.1313 + 0.6534), 1e-3);
  EXPECT_NEAR(p[1], 0.6534 / (0.1313 + 0.6534), 1e-3);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_NEAR(p[3], 0.7479 / (0.7479 + 0.3466), 1e-3);  // the: das / Haus
  for (int i = 6; i < 9; ++i) EXPECT_FLOAT_EQ(p[i], 1.0f / 3.0f);  // a token never seen with any source: uniform
  EXPECT_TRUE(m.posterior({}, tgt).empty());
}

// Each source id has one translation; the target is a random permutation of the translations:
// after EM the posterior's largest entry is the true position for nearly every token.
TEST(Ibm1, LearnsAKnownAlignment) {
  core::Rng rng(7);
  const int vocab = 40;
  std::vector<Example> corpus;
  std::vector<std::vector<int32_t>> where;  // where[p][j] = source position of target token j
  for (int p = 0; p < 400; ++p) {
    const int n = 2 + static_cast<int>(rng.below(6));
    Example e;
    std::vector<int32_t> perm(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) e.src.push_back(static_cast<int32_t>(rng.below(vocab))), perm[static_cast<size_t>(i)] = i;
    rng.shuffle(perm.begin(), perm.end());
    for (int32_t i : perm) e.tgt.push_back(100 + e.src[static_cast<size_t>(i)]);  // f -> e = f + 100
    where.push_back(perm);
    corpus.push_back(std::move(e));
  }
  const Ibm1 m = Ibm1::train(corpus, 10);
  int right = 0, total = 0;
  for (size_t p = 0; p < corpus.size(); ++p) {
    const Example& e = corpus[p];
    const std::vector<float> post = m.posterior(e.src, e.tgt);
    const size_t s = e.src.size();
    for (size_t j = 0; j < e.tgt.size(); ++j) {
      const size_t best = static_cast<size_t>(std::max_element(post.begin() + j * s, post.begin() + (j + 1) * s) -
                                              (post.begin() + j * s));
      right += e.src[best] == e.src[static_cast<size_t>(where[p][j])];  // a repeated source id is as right
      ++total;
    }
  }
  EXPECT_GT(right, total * 99 / 100) << right << " of " << total;
  EXPECT_GT(m.prob(5, 105), 0.9);
}

// Two tokens that always come together: Model 1 cannot tell which translates which (every t is
// ½); fast_align's prior (Dyer et al. 2013) with tension λ weighs target j's source i by
// exp(-λ |(i+½)/2 - (j+½)/2|), 1 on the diagonal and e^(-λ/2) off it, so one EM iteration from
// uniform t gives t(10 | 0) = 1 / (1 + e^(-λ/2)), and the posterior is t·d normalised.
TEST(Ibm1, DiagonalPriorBreaksTheTieOfTokensThatComeTogether) {
  const std::vector<Example> corpus(3, Example{{0, 1}, {10, 11}});
  const Ibm1 flat = Ibm1::train(corpus, 1);
  EXPECT_FLOAT_EQ(static_cast<float>(flat.prob(0, 10)), 0.5f);
  const double lambda = 4, off = std::exp(-lambda / 2), t = 1 / (1 + off);
  const Ibm1 m = Ibm1::train(corpus, 1, lambda);
  EXPECT_EQ(m.diagonal(), lambda);
  EXPECT_NEAR(m.prob(0, 10), t, 1e-6);
  EXPECT_NEAR(m.prob(1, 10), 1 - t, 1e-6);
  EXPECT_NEAR(m.prob(1, 11), t, 1e-6);
  const std::vector<float> p = m.posterior(corpus[0].src, corpus[0].tgt);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_NEAR(p[0], t / (t + (1 - t) * off), 1e-6);
  EXPECT_NEAR(p[3], t / (t + (1 - t) * off), 1e-6);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-6);
  EXPECT_GT(p[0], 0.98f);
}

TEST(Ibm1, RejectsBadInput) {
  EXPECT_NE(error_of([] { Ibm1::train(std::vector<Example>{{{0}, {0}}}, 0); }).find("iterations 0"), std::string::npos);
  EXPECT_NE(error_of([] { Ibm1::train(std::vector<Example>{{{-1}, {0}}}, 1); }).find("source id -1"), std::string::npos);
  EXPECT_NE(error_of([] { Ibm1::train(std::vector<Example>{{{1}, {-2}}}, 1); }).find("target id -2"), std::string::npos);
  EXPECT_NE(error_of([] { Ibm1::train(std::vector<Example>{{{0}, {0}}}, 1, -1); }).find("diagonal tension -1"),
            std::string::npos);
  EXPECT_NE(error_of([] { Ibm1::train(std::vector<Example>{{{0}, {0}}}, 1, std::nan("")); }).find("diagonal tension"),
            std::string::npos);
  const Ibm1 m = Ibm1::train(std::vector<Example>{{{}, {1}}, {{2}, {}}}, 1);  // empty sides skipped
  EXPECT_EQ(m.pairs(), 0);
}

}  // namespace
}  // namespace engram::data
