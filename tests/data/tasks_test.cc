// Synthetic task generators: NTM copy / repeat copy / associative recall shapes and values,
// the dates task's formats and targets, and the toy bAbI stories.
#include <gtest/gtest.h>

#include <set>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/data/babi.h"
#include "engram/data/tasks/dates.h"
#include "engram/data/tasks/ntm_tasks.h"
#include "engram/data/tasks/toy_babi.h"
#include "engram/data/text.h"

namespace engram::data::tasks {
namespace {

using data::testing::TempDir;

TEST(NtmTasks, CopyTargetEqualsInput) {
  core::Rng rng(3);
  CopyOptions o;
  o.min_len = 4;
  o.max_len = 9;
  std::set<int64_t> lengths;
  double ones = 0, bits = 0;  // the data bits of the presented sequences
  for (int rep = 0; rep < 20; ++rep) {
    const SeqBatch s = make_copy_batch(o, 5, rng);
    const int64_t L = (s.steps - 1) / 2;
    lengths.insert(L);
    ASSERT_EQ(s.steps, 2 * L + 1);
    ASSERT_GE(L, 4);
    ASSERT_LE(L, 9);
    ASSERT_EQ(s.in_width, 9);
    ASSERT_EQ(s.out_width, 8);
    ASSERT_EQ(s.input.size(), static_cast<size_t>(s.steps * 5 * 9));
    for (int64_t b = 0; b < 5; ++b) {
      for (int64_t t = 0; t < s.steps; ++t) {
        const bool recall = t > L;
        EXPECT_EQ(s.msk(t, b), recall ? 1.0f : 0.0f);
        EXPECT_EQ(s.in(t, b, 8), t == L ? 1.0f : 0.0f);  // delimiter only at step L
        for (int k = 0; k < 8; ++k) {
          const float x = s.in(t, b, k);
          EXPECT_TRUE(x == 0.0f || x == 1.0f);
          if (t < L) ones += x, ++bits;
          if (recall) {
            EXPECT_EQ(x, 0.0f);                                // zero input while recalling
            EXPECT_EQ(s.tgt(t, b, k), s.in(t - L - 1, b, k));  // target = input sequence
          } else {
            EXPECT_EQ(s.tgt(t, b, k), 0.0f);
          }
        }
      }
    }
  }
  EXPECT_GT(lengths.size(), 3u);  // lengths are drawn from the range
  // Random bits, not a constant pattern: about half are 1 (~5,000 bits: 0.5 +- 0.05 is 7 sigma).
  EXPECT_NEAR(ones / bits, 0.5, 0.05) << bits << " bits";
  core::Rng r1(9), r2(9);
  EXPECT_EQ(make_copy_batch(o, 3, r1).input, make_copy_batch(o, 3, r2).input);
}

TEST(NtmTasks, RepeatCopy) {
  core::Rng rng(4);
  RepeatCopyOptions o;
  o.min_len = 2;
  o.max_len = 5;
  o.min_repeat = 1;
  o.max_repeat = 4;
  for (int rep = 0; rep < 20; ++rep) {
    const SeqBatch s = make_repeat_copy_batch(o, 3, rng);
    ASSERT_EQ(s.in_width, 10);
    ASSERT_EQ(s.out_width, 9);
    int64_t L = 0;  // the delimiter step
    while (s.in(L, 0, 8) == 0.0f) ++L;
    const int64_t R = (s.steps - L - 2) / L;
    ASSERT_EQ(s.steps, L + 1 + L * R + 1);
    const float count = s.in(L, 0, 9);
    EXPECT_FLOAT_EQ(count, normalised_repeat(static_cast<int>(R), o));
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t r = 0; r < R; ++r) {
        for (int64_t t = 0; t < L; ++t) {
          for (int k = 0; k < 8; ++k) EXPECT_EQ(s.tgt(L + 1 + r * L + t, b, k), s.in(t, b, k));
          EXPECT_EQ(s.tgt(L + 1 + r * L + t, b, 8), 0.0f);
        }
      }
      EXPECT_EQ(s.tgt(s.steps - 1, b, 8), 1.0f);  // end marker
      EXPECT_EQ(s.msk(L, b), 0.0f);
      EXPECT_EQ(s.msk(L + 1, b), 1.0f);
      EXPECT_EQ(s.msk(s.steps - 1, b), 1.0f);
    }
  }
  // Counts 1..4 normalised to mean 0 and variance 1.
  double mean = 0, var = 0;
  for (int r = 1; r <= 4; ++r) mean += normalised_repeat(r, o) / 4.0;
  for (int r = 1; r <= 4; ++r) var += std::pow(normalised_repeat(r, o) - mean, 2) / 4.0;
  EXPECT_NEAR(mean, 0.0, 1e-6);
  EXPECT_NEAR(var, 1.0, 1e-6);
}

TEST(NtmTasks, AssociativeRecall) {
  core::Rng rng(5);
  RecallOptions o;  // 6 bits, items of 3 vectors, 2..6 items
  std::set<int64_t> item_counts;
  for (int rep = 0; rep < 40; ++rep) {
    const SeqBatch s = make_recall_batch(o, 4, rng);
    const int64_t n = (s.steps - 8) / 4;
    item_counts.insert(n);
    ASSERT_EQ(s.steps, 4 * n + 8);
    ASSERT_GE(n, 2);
    ASSERT_LE(n, 6);
    ASSERT_EQ(s.in_width, 8);
    ASSERT_EQ(s.out_width, 6);
    const int64_t qd = 4 * n;  // query delimiter
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(s.in(4 * i, b, 6), 1.0f);
      EXPECT_EQ(s.in(qd, b, 7), 1.0f);
      EXPECT_EQ(s.in(qd + 4, b, 7), 1.0f);
      // Find the queried item and check the target is the next one.
      int64_t match = -1;
      for (int64_t i = 0; i + 1 < n && match < 0; ++i) {
        bool same = true;
        for (int j = 0; j < 3; ++j) {
          for (int k = 0; k < 6; ++k) same &= s.in(4 * i + 1 + j, b, k) == s.in(qd + 1 + j, b, k);
        }
        if (same) match = i;
      }
      ASSERT_GE(match, 0);
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(s.msk(qd + 5 + j, b), 1.0f);
        for (int k = 0; k < 6; ++k) {
          EXPECT_EQ(s.tgt(qd + 5 + j, b, k), s.in(4 * (match + 1) + 1 + j, b, k));
          EXPECT_EQ(s.in(qd + 5 + j, b, k), 0.0f);
        }
      }
      EXPECT_EQ(s.msk(qd + 4, b), 0.0f);
    }
  }
  EXPECT_EQ(item_counts.size(), 5u);
  o.min_items = 1;
  EXPECT_THROW(make_recall_batch(o, 1, rng), Error);
}

TEST(Dates, FormatsOfOneDate) {
  const Date d{2026, 11, 29};
  EXPECT_EQ(day_of_week(d), 6);  // a Sunday
  EXPECT_EQ(iso_date(d), "2026-11-29");
  const char* expected[] = {"29 November 2026",
                            "Nov 29, 2026",
                            "29/11/2026",
                            "2026年11月29日",
                            "Sunday, November 29, 2026",
                            "11.29.26",
                            "November 29, 2026",
                            "29 Nov 2026",
                            "2026/11/29",
                            "Sun 29 Nov 2026",
                            "29.11.2026",
                            "nov 29 2026",
                            "the 29th of November, 2026",
                            "29-Nov-26",
                            "20261129"};
  ASSERT_EQ(num_date_formats(), 15);
  for (int f = 0; f < num_date_formats(); ++f) EXPECT_EQ(format_date(d, f), expected[f]) << f;
  EXPECT_EQ(format_date({1999, 2, 1}, 5), "02.01.99");
  EXPECT_EQ(format_date({2001, 3, 2}, 12), "the 2nd of March, 2001");
  EXPECT_EQ(format_date({2001, 3, 11}, 12), "the 11th of March, 2001");
  EXPECT_EQ(day_of_week({1970, 1, 1}), 3);   // Thursday
  EXPECT_EQ(day_of_week({2000, 2, 29}), 1);  // Tuesday
  EXPECT_THROW(format_date({2023, 2, 29}, 0), Error);
  EXPECT_THROW(format_date(d, 15), Error);
}

TEST(Dates, RandomPairs) {
  core::Rng rng(11), again(11);
  const DatesOptions o;
  const auto pairs = make_date_pairs(3000, o, rng);
  EXPECT_EQ(pairs[17].source, make_date_pairs(3000, o, again)[17].source);
  std::set<int> formats;
  std::set<std::string> targets;
  for (const auto& p : pairs) {
    formats.insert(p.format);
    targets.insert(p.target);
    ASSERT_EQ(p.target.size(), 10u);
    const Date d{std::stoi(p.target.substr(0, 4)), std::stoi(p.target.substr(5, 2)),
                 std::stoi(p.target.substr(8, 2))};
    ASSERT_GE(d.year, 1970);
    ASSERT_LE(d.year, 2069);
    ASSERT_LE(d.day, days_in_month(d.year, d.month));
    EXPECT_EQ(p.source, format_date(d, p.format));
    EXPECT_FALSE(utf8_chars(p.source).empty());
  }
  EXPECT_EQ(formats.size(), 15u);
  EXPECT_GT(targets.size(), 2800u);  // ~2877 expected from 36,524 days
  DatesOptions only;
  only.formats = {3};
  core::Rng r(1);
  const auto zh = make_date_pair(only, r);
  EXPECT_EQ(zh.format, 3);
  EXPECT_NE(zh.source.find("年"), std::string::npos);
  DatesOptions wide;
  wide.min_year = 1900;
  EXPECT_THROW(random_date(wide, r), Error);  // two-digit years would be ambiguous
}

TEST(ToyBabi, StoriesAnswerTheLatestPlace) {
  core::Rng rng(21);
  const ToyBabiOptions o;
  const auto samples = make_toy_babi(300, o, rng);
  for (const auto& s : samples) {
    ASSERT_GE(s.memory().size(), 2u);
    ASSERT_LE(s.memory().size(), 6u);
    ASSERT_EQ(s.question.size(), 3u);
    const std::string& who = s.question[2];
    ASSERT_EQ(s.supporting.size(), 1u);
    const Sentence& fact = s.memory()[s.supporting[0]];
    EXPECT_EQ(fact.front(), who);
    EXPECT_EQ(fact.back(), s.answer);
    for (size_t i = s.supporting[0] + 1; i < s.memory().size(); ++i) {
      EXPECT_NE(s.memory()[i].front(), who);  // no later move of that person
    }
  }
}

TEST(ToyBabi, RoundTripsThroughTheReader) {
  core::Rng rng(22);
  TempDir tmp;
  const auto samples = make_toy_babi(50, ToyBabiOptions{}, rng);
  std::string text;
  for (const auto& s : samples) text += to_babi_text(s);
  const auto back = read_babi_file(tmp.write("qa1_toy_train.txt", text));
  ASSERT_EQ(back.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(back[i].question, samples[i].question);
    EXPECT_EQ(back[i].answer, samples[i].answer);
    EXPECT_EQ(back[i].supporting, samples[i].supporting);
    ASSERT_EQ(back[i].memory().size(), samples[i].memory().size());
    for (size_t m = 0; m < back[i].memory().size(); ++m) {
      EXPECT_EQ(back[i].memory()[m], samples[i].memory()[m]);
    }
  }
}

}  // namespace
}  // namespace engram::data::tasks
