// decode::gather (decode/state_buffers.h) against the rows it names: into another buffer (with
// repeats and growth, as a beam expands), in place with rows[i] >= i (finished rows dropped, in
// order or with later rows filling the gaps: no second buffer), and in place in any other order
// (beams reordered).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engram/decode/state_buffers.h"

namespace engram::decode {
namespace {

std::vector<float> rows_of(int n, int width) {  // row r holds r * 100 + column
  std::vector<float> v(static_cast<size_t>(n) * width);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < width; ++c) v[static_cast<size_t>(r) * width + c] = static_cast<float>(r * 100 + c);
  return v;
}

std::vector<float> expected(const std::vector<float>& in, const std::vector<int32_t>& rows, int width) {
  std::vector<float> out;
  for (int32_t r : rows) out.insert(out.end(), in.begin() + r * width, in.begin() + (r + 1) * width);
  return out;
}

TEST(Gather, EveryOrderIntoAnotherBufferAndInPlace) {
  const int width = 3;
  const std::vector<float> in = rows_of(6, width);
  const std::vector<std::vector<int32_t>> orders = {
      {0, 2, 3, 5}, {1, 2, 3, 4, 5}, {5}, {0, 1, 2, 3, 4, 5}, {3, 1, 4, 0}, {2, 2, 2, 0, 0, 5, 5, 5},
      {5, 4, 3, 2, 1, 0}, {0, 5, 2, 4}, {4, 5, 2}};
  for (const auto& rows : orders) {
    const std::vector<float> want = expected(in, rows, width);
    std::vector<float> other = {9.0f};  // another buffer, of another size
    gather(in, other, rows, width);
    EXPECT_EQ(other, want);
    std::vector<float> same = in;
    gather(same, same, rows, width);
    EXPECT_EQ(same, want);
  }
  // rows[i] >= i (finished rows dropped, later rows moved into the gaps) stays in its storage and
  // moves only the rows that change place; a row below its place does not.
  EXPECT_TRUE(in_place_rows(std::vector<int32_t>{0, 5, 2, 4}));
  EXPECT_TRUE(in_place_rows(std::vector<int32_t>{3, 3, 4}));
  EXPECT_FALSE(in_place_rows(std::vector<int32_t>{1, 0}));
  EXPECT_FALSE(in_place_rows(std::vector<int32_t>{0, 2, 1}));
  detail::spare_buffers().clear();
  std::vector<float> gaps = in;
  const float* storage = gaps.data();
  gather(gaps, gaps, std::vector<int32_t>{0, 5, 2, 4}, width, true);
  EXPECT_EQ(gaps, expected(in, {0, 5, 2, 4}, width));
  EXPECT_EQ(gaps.data(), storage);
  EXPECT_TRUE(detail::spare_buffers().empty()) << "no second buffer";
  std::vector<float> untouched = {1.0f, 2.0f};
  gather(std::vector<float>{}, untouched, std::vector<int32_t>{0}, width);
  EXPECT_EQ(untouched, (std::vector<float>{1.0f, 2.0f})) << "an empty input leaves the output as it is";
}

// A buffer given back is the storage the next reserve_buffer of a size it holds takes (no fresh
// block); the thread keeps at most kSpareBuffers, the largest; a gather with spares that reorders a buffer in
// place through a second one leaves its old storage as a spare.
TEST(SpareBuffers, GivenStorageIsReusedAndTheLargestAreKept) {
  detail::spare_buffers().clear();
  std::vector<float> big(1000, 1.0f);
  const float* storage = big.data();
  give_buffer(big);
  EXPECT_TRUE(big.empty());
  std::vector<float> want;
  reserve_buffer(want, 800);
  EXPECT_EQ(want.data(), storage) << "the spare that holds 800 floats";
  EXPECT_TRUE(detail::spare_buffers().empty());
  for (size_t i = 1; i <= kSpareBuffers + 3; ++i) {
    std::vector<float> v(i * 10);
    give_buffer(v);
  }
  ASSERT_EQ(detail::spare_buffers().size(), kSpareBuffers);
  for (const auto& v : detail::spare_buffers()) EXPECT_GT(v.capacity(), 30u) << "the three smallest went";
  detail::spare_buffers().clear();
  std::vector<float> in = rows_of(4, 2);
  const float* before = in.data();
  gather(in, in, std::vector<int32_t>{3, 2, 1, 0}, 2, true);
  EXPECT_EQ(in, expected(rows_of(4, 2), {3, 2, 1, 0}, 2));
  ASSERT_EQ(detail::spare_buffers().size(), 1u);
  EXPECT_EQ(detail::spare_buffers()[0].data(), before);
  detail::spare_buffers().clear();
  // Buffers of another element type are spares of their own type.
  std::vector<int8_t> bytes(5000, 1);
  const int8_t* byte_storage = bytes.data();
  give_buffer(bytes);
  EXPECT_TRUE(detail::spare_buffers().empty());
  std::vector<int8_t> again;
  reserve_buffer(again, 4000);
  EXPECT_EQ(again.data(), byte_storage);
  EXPECT_TRUE(detail::spare_buffers<int8_t>().empty());
}

}  // namespace
}  // namespace engram::decode
