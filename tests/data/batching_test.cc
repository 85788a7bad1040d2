// Batching: determinism by seed, the token budget, coverage of every example, and the
// time-major padded layout with <go>/<eos> decoder inputs and outputs.
#include "engram/data/batching.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/data/vocab.h"

namespace engram::data {
namespace {

std::vector<Example> random_examples(int n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<Example> out(n);
  for (auto& e : out) {
    e.src.resize(1 + rng.below(30));
    e.tgt.resize(rng.below(25));
    for (auto& id : e.src) id = kNumSpecial + static_cast<int32_t>(rng.below(100));
    for (auto& id : e.tgt) id = kNumSpecial + static_cast<int32_t>(rng.below(100));
  }
  return out;
}

TEST(Batching, DeterministicForASeed) {
  const auto ex = random_examples(500, 1);
  BatchOptions o;
  o.max_tokens = 256;
  core::Rng a(42), b(42), c(43);
  const auto pa = plan_batches(ex, o, &a);
  const auto pb = plan_batches(ex, o, &b);
  const auto pc = plan_batches(ex, o, &c);
  EXPECT_EQ(pa, pb);
  EXPECT_NE(pa, pc);
  // The next epoch from the same generator differs from the first one.
  EXPECT_NE(plan_batches(ex, o, &a), pa);
}

TEST(Batching, TokenBudgetAndCoverage) {
  const auto ex = random_examples(1000, 2);
  for (int64_t budget : {31, 64, 300, 2000}) {
    BatchOptions o;
    o.max_tokens = budget;
    o.max_sentences = 40;
    core::Rng rng(5);
    const auto plan = plan_batches(ex, o, &rng);
    std::vector<int> seen(ex.size(), 0);
    int64_t padded_total = 0, real_total = 0;
    for (const auto& batch : plan) {
      ASSERT_FALSE(batch.empty());
      EXPECT_LE(static_cast<int64_t>(batch.size()), o.max_sentences);
      int64_t steps = 0;
      for (int64_t i : batch) {
        ++seen[i];
        steps = std::max(steps, example_steps(ex[i]));
        real_total += example_steps(ex[i]);
      }
      EXPECT_LE(static_cast<int64_t>(batch.size()) * steps, budget);
      const Batch b = collate(ex, batch);
      EXPECT_LE(b.batch_size * std::max(b.src_steps, b.tgt_steps), budget);
      padded_total += b.batch_size * std::max(b.src_steps, b.tgt_steps);
    }
    for (int s : seen) EXPECT_EQ(s, 1);
    // Bucketing keeps padding small: padded cells stay within 1.5x of the real ones.
    EXPECT_LT(padded_total, real_total * 3 / 2) << "budget " << budget;
  }
}

TEST(Batching, CollateTimeMajorLayout) {
  std::vector<Example> ex = {{{10, 11, 12}, {20, 21}}, {{13}, {}}, {{14, 15}, {22, 23, 24}}};
  const std::vector<int64_t> idx = {0, 1, 2};
  const Batch b = collate(ex, idx);
  EXPECT_EQ(b.batch_size, 3);
  EXPECT_EQ(b.src_steps, 3);
  EXPECT_EQ(b.tgt_steps, 4);
  EXPECT_EQ(b.src_len, (std::vector<int32_t>{3, 1, 2}));
  EXPECT_EQ(b.tgt_len, (std::vector<int32_t>{3, 1, 4}));
  // src [S, B]
  EXPECT_EQ(b.src, (std::vector<int32_t>{10, 13, 14, 11, kPadId, 15, 12, kPadId, kPadId}));
  // tgt_in [T, B]: <go> y ...
  EXPECT_EQ(b.tgt_in, (std::vector<int32_t>{kGoId, kGoId, kGoId, 20, kPadId, 22, 21, kPadId, 23,
                                            kPadId, kPadId, 24}));
  // tgt_out [T, B]: y ... <eos>
  EXPECT_EQ(b.tgt_out, (std::vector<int32_t>{20, kEosId, 22, 21, kPadId, 23, kEosId, kPadId, 24,
                                             kPadId, kPadId, kEosId}));
  EXPECT_EQ(b.src_at(1, 2), 15);
  EXPECT_EQ(b.tgt_out_at(3, 2), kEosId);
  EXPECT_EQ(b.index, idx);
}

TEST(Batching, NoShuffleNoSortKeepsOrder) {
  const auto ex = random_examples(50, 3);
  BatchOptions o;
  o.max_tokens = 100;
  o.shuffle = false;
  o.sort_by_length = false;
  const auto plan = plan_batches(ex, o, nullptr);
  std::vector<int64_t> flat;
  for (const auto& b : plan) flat.insert(flat.end(), b.begin(), b.end());
  std::vector<int64_t> expected(ex.size());
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int64_t>(i);
  EXPECT_EQ(flat, expected);
}

TEST(Batching, Errors) {
  std::vector<Example> ex = {{std::vector<int32_t>(50, 5), {}}};
  BatchOptions o;
  o.max_tokens = 40;
  core::Rng rng(1);
  EXPECT_THROW(plan_batches(ex, o, &rng), Error);  // one example over the budget
  o.max_tokens = 100;
  EXPECT_THROW(plan_batches(ex, o, nullptr), Error);  // shuffle without an Rng
  EXPECT_THROW(collate(ex, std::vector<int64_t>{3}), Error);
  EXPECT_THROW(collate(ex, std::vector<int64_t>{}), Error);
}

}  // namespace
}  // namespace engram::data
