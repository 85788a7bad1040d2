// EncodedMemory (models/encoded_memory.h): the rows of a decoder state follow their sources
// through beam expansion, reorders within a source and dropped rows, each row's mask with them,
// while the memory stays one copy per source where the encoder put it; the attention's view reads
// it through the rows.
// Dims: N rows, B = 4 sources, S = 2 source steps, C = 3 value width.
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

// The memory is the sources' own, unmoved, and each row's mask is its source's.
void expect_rows_read_their_sources(const EncodedMemory& m) {
  ASSERT_EQ(m.values.size(), size_t{4} * kMemSteps * kMemWidth);
  for (int32_t b = 0; b < 4; ++b)
    for (int j = 0; j < kMemSteps; ++j)
      for (int c = 0; c < kMemWidth; ++c)
        EXPECT_EQ(m.values[(b * kMemSteps + j) * kMemWidth + c], memory_value(b, j, c)) << "source " << b;
  ASSERT_EQ(m.mask.size(), m.rows.size() * kMemSteps);
  for (size_t i = 0; i < m.rows.size(); ++i)
    for (int j = 0; j < kMemSteps; ++j) EXPECT_EQ(m.mask[i * kMemSteps + j], memory_mask(m.rows[i], j)) << "row " << i;
}

TEST(EncodedMemory, RowsFollowTheirSourcesAndTheMemoryStays) {
  EncodedMemory m;
  m.init(4, nullptr);
  m.src_len = kMemSteps, m.width = kMemWidth;
  for (int32_t b = 0; b < 4; ++b)
    for (int j = 0; j < kMemSteps; ++j) {
      m.mask.push_back(memory_mask(b, j));
      for (int c = 0; c < kMemWidth; ++c) m.values.push_back(memory_value(b, j, c));
    }
  const float* storage = m.values.data();
  // Beam expansion: two rows per source.
  const std::vector<int32_t> expand = {0, 0, 1, 1, 2, 2, 3, 3};
  EXPECT_TRUE(m.reorder(expand));
  EXPECT_EQ(m.rows, expand);
  expect_rows_read_their_sources(m);
  // Beams reordered within their sources: nothing changes.
  EXPECT_FALSE(m.reorder(std::vector<int32_t>{1, 0, 3, 2, 4, 5, 7, 6}));
  EXPECT_EQ(m.rows, expand);
  // Source 1 (rows 2, 3) leaves; source 3's block (rows 6, 7, its beams swapped) fills the gap.
  EXPECT_TRUE(m.reorder(std::vector<int32_t>{1, 0, 7, 6, 4, 5}));
  EXPECT_EQ(m.rows, (std::vector<int32_t>{0, 0, 3, 3, 2, 2}));
  expect_rows_read_their_sources(m);
  // Source 3 before source 0, one row each.
  EXPECT_TRUE(m.reorder(std::vector<int32_t>{2, 0}));
  EXPECT_EQ(m.rows, (std::vector<int32_t>{3, 0}));
  expect_rows_read_their_sources(m);
  EXPECT_EQ(m.values.data(), storage);
  // The view: the four sources' memory, read by the two rows.
  core::Graph g(false);
  const nn::AttentionMemory view = m.view(g);
  EXPECT_EQ(view.values.shape(), core::Shape({4, kMemSteps, kMemWidth}));
  EXPECT_EQ(view.batch, 2);
  ASSERT_NE(view.rows, nullptr);
  EXPECT_EQ(view.rows[0], 3);
  EXPECT_EQ(view.rows[1], 0);
  EXPECT_EQ(view.mask, m.mask.data());
}

}  // namespace
}  // namespace engram::models
