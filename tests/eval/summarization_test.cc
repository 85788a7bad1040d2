// Lead baselines and copy diagnostics (eval/summarization.h); every expected number is counted by
// hand in the comment above its assertion.
#include <gtest/gtest.h>

#include "engram/core/error.h"
#include "engram/eval/summarization.h"

namespace engram::eval {
namespace {

const std::vector<std::string> kBody = {"One two three.", "Four five.", "Six seven eight nine.", "Ten."};

TEST(Summarization, WordCount) {
  EXPECT_EQ(word_count("  a b\tc\n d "), 4u);
  EXPECT_EQ(word_count(""), 0u);
  EXPECT_EQ(word_count("U.S.-led, 3.5%"), 2u);
}

TEST(Summarization, LeadN) {
  EXPECT_EQ(lead_n(kBody, 3), (std::vector<std::string>{"One two three.", "Four five.", "Six seven eight nine."}));
  EXPECT_EQ(lead_n(kBody, 9), kBody);  // fewer sentences than asked: all of them
  EXPECT_TRUE(lead_n(kBody, 0).empty());
}

// Word counts of kBody: 3, 2, 4, 1 (running totals 3, 5, 9, 10). A reference of 4 words needs
// the first two sentences (3 < 4, 5 >= 4); 5 words: still two; 6: three; 3: one; 11: all.
TEST(Summarization, LeadWordsStopsAtTheReferenceLength) {
  EXPECT_EQ(lead_words(kBody, 4).size(), 2u);
  EXPECT_EQ(lead_words(kBody, 5).size(), 2u);
  EXPECT_EQ(lead_words(kBody, 6).size(), 3u);
  EXPECT_EQ(lead_words(kBody, 3).size(), 1u);
  EXPECT_EQ(lead_words(kBody, 11), kBody);
  EXPECT_TRUE(lead_words(kBody, 0).empty());
}

// "a b c a b c" has trigrams abc, bca, cab, abc: the 4th repeats the 1st -> 1 of 4.
// "x x x x" has xxx, xxx -> 1 of 2. "p q" has none. Pooled: 2 of 6.
TEST(Summarization, RepeatedTrigramRate) {
  const auto st = repeated_trigram_rate({{"a", "b", "c", "a", "b", "c"}, {"x", "x", "x", "x"}, {"p", "q"}});
  EXPECT_EQ(st.repeated, 2);
  EXPECT_EQ(st.total, 6);
  EXPECT_DOUBLE_EQ(st.rate, 2.0 / 6.0);
  // Repeats are counted within one output only: the same trigram in two outputs is no repeat.
  EXPECT_EQ(repeated_trigram_rate({{"a", "b", "c"}, {"a", "b", "c"}}).repeated, 0);
  EXPECT_EQ(repeated_trigram_rate({}).rate, 0.0);
}

// Vocabulary {the, said, in}. Example 1: source "the minister kaczynski said in warsaw", reference
// "kaczynski said kaczynski in warsaw poland", output "the kaczynski said in london".
// Reference words outside the vocabulary: kaczynski x2, warsaw, poland; of these in the source:
// kaczynski x2, warsaw -> 3 candidates. The output has kaczynski once (min(2, 1) = 1) and no
// warsaw -> 1 copied. Example 2: source "a zorb", reference "zorb", output "zorb zorb" -> 1
// candidate, min(1, 2) = 1 copied. Pooled: 2 of 4.
TEST(Summarization, OovCopyRate) {
  const std::unordered_set<std::string> vocab = {"the", "said", "in"};
  const auto st = oov_copy_rate({{"the", "minister", "kaczynski", "said", "in", "warsaw"}, {"a", "zorb"}},
                                {{"the", "kaczynski", "said", "in", "london"}, {"zorb", "zorb"}},
                                {{"kaczynski", "said", "kaczynski", "in", "warsaw", "poland"}, {"zorb"}}, vocab);
  EXPECT_EQ(st.candidates, 4);
  EXPECT_EQ(st.copied, 2);
  EXPECT_DOUBLE_EQ(st.rate, 0.5);
  // In-vocabulary reference words are never candidates; nothing to copy -> rate 0.
  const auto none = oov_copy_rate({{"the"}}, {{"the"}}, {{"the"}}, vocab);
  EXPECT_EQ(none.candidates, 0);
  EXPECT_EQ(none.rate, 0.0);
  EXPECT_THROW(oov_copy_rate({{"a"}}, {}, {{"a"}}, vocab), Error);
}

}  // namespace
}  // namespace engram::eval
