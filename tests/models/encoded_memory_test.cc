// EncodedMemory (models/encoded_memory.h): the encoder memory of a decoder state's rows follows
// the rows' sources through beam expansion, reorders within a source and compaction, and moves
// within its buffers wherever a row of the source it needs sits at or after it.
// Dims: N rows, S = 2 source steps, C = 3 value width.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engram/models/encoded_memory.h"

namespace engram::models {
namespace {

constexpr int kMemSteps = 2, kMemWidth = 3;

// Source b's memory value at (step j, element c), and its mask at step j.
float memory_value(int32_t b, int j, int c) { return static_cast<float>(100 * b + 10 * j + c); }
float memory_mask(int32_t b, int j) { return static_cast<float>((b + j) % 2); }

// Every row holds its source's values and mask.
void expect_rows_hold_their_sources(const EncodedMemory& m) {
  ASSERT_EQ(m.values.size(), m.rows.size() * kMemSteps * kMemWidth);
  ASSERT_EQ(m.mask.size(), m.rows.size() * kMemSteps);
  for (size_t i = 0; i < m.rows.size(); ++i)
    for (int j = 0; j < kMemSteps; ++j) {
      EXPECT_EQ(m.mask[i * kMemSteps + j], memory_mask(m.rows[i], j)) << "row " << i;
      for (int c = 0; c < kMemWidth; ++c)
        EXPECT_EQ(m.values[(i * kMemSteps + j) * kMemWidth + c], memory_value(m.rows[i], j, c)) << "row " << i;
    }
}

TEST(EncodedMemory, RowsFollowTheirSourcesAndCompactionMovesInPlace) {
  EncodedMemory m;
  m.init(4, nullptr);
  m.src_len = kMemSteps, m.width = kMemWidth;
  for (int32_t b = 0; b < 4; ++b)
    for (int j = 0; j < kMemSteps; ++j) {
      m.mask.push_back(memory_mask(b, j));
      for (int c = 0; c < kMemWidth; ++c) m.values.push_back(memory_value(b, j, c));
    }
  // Beam expansion: two rows per source.
  const std::vector<int32_t> expand = {0, 0, 1, 1, 2, 2, 3, 3};
  EXPECT_TRUE(m.reorder(expand));
  EXPECT_EQ(m.rows, expand);
  expect_rows_hold_their_sources(m);
  // Beams reordered within their sources: nothing changes.
  const float* storage = m.values.data();
  EXPECT_FALSE(m.reorder(std::vector<int32_t>{1, 0, 3, 2, 4, 5, 7, 6}));
  EXPECT_EQ(m.rows, expand);
  // Source 1 (rows 2, 3) leaves; source 3's block (rows 6, 7, its beams swapped) fills the gap, and
  // source 0's beams swap too: rows 2 and 3 copy row 7, the others stay, in the same storage.
  EXPECT_TRUE(m.reorder(std::vector<int32_t>{1, 0, 7, 6, 4, 5}));
  EXPECT_EQ(m.rows, (std::vector<int32_t>{0, 0, 3, 3, 2, 2}));
  expect_rows_hold_their_sources(m);
  EXPECT_EQ(m.values.data(), storage);
  // Source 2 leaves from the end, order kept.
  EXPECT_TRUE(m.reorder(std::vector<int32_t>{0, 1, 3, 2}));
  EXPECT_EQ(m.rows, (std::vector<int32_t>{0, 0, 3, 3}));
  expect_rows_hold_their_sources(m);
  EXPECT_EQ(m.values.data(), storage);
  // A reorder no row can take in place (source 3 before source 0) still gives each row its source.
  EXPECT_TRUE(m.reorder(std::vector<int32_t>{2, 0}));
  EXPECT_EQ(m.rows, (std::vector<int32_t>{3, 0}));
  expect_rows_hold_their_sources(m);
}

}  // namespace
}  // namespace engram::models
