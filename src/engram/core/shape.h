// Shape: the dimensions of a row-major float32 tensor, rank 0 (scalar) to 4.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "engram/core/error.h"

namespace engram::core {

constexpr int kMaxRank = 4;

class Shape {
 public:
  Shape() = default;  // rank-0 scalar, one element
  Shape(std::initializer_list<int> dims) {
    ENGRAM_CHECK(dims.size() <= kMaxRank, "shape of rank {} > {}", dims.size(), kMaxRank);
    for (int d : dims) {
      ENGRAM_CHECK(d >= 0, "negative dimension {}", d);
      dims_[rank_++] = d;
    }
  }
  template <class It>
  static Shape from(It begin, It end) {
    Shape s;
    for (It it = begin; it != end; ++it) {
      ENGRAM_CHECK(s.rank_ < kMaxRank, "shape of rank > {}", kMaxRank);
      ENGRAM_CHECK(*it >= 0, "negative dimension {}", *it);
      s.dims_[s.rank_++] = static_cast<int>(*it);
    }
    return s;
  }

  int rank() const { return rank_; }
  int operator[](int axis) const { return dims_[axis]; }
  int& operator[](int axis) { return dims_[axis]; }
  // Dimension with negative axes counted from the end (-1 = last).
  int dim(int axis) const { return dims_[norm_axis(axis)]; }
  int norm_axis(int axis) const {
    int a = axis < 0 ? axis + rank_ : axis;
    ENGRAM_CHECK(a >= 0 && a < rank_, "axis {} out of range for shape {}", axis, str());
    return a;
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  int last() const { return rank_ == 0 ? 1 : dims_[rank_ - 1]; }
  // Product of all dimensions but the last ("rows" of a row-major matrix view).
  int64_t rows() const { return rank_ == 0 ? 1 : numel() / (dims_[rank_ - 1] == 0 ? 1 : dims_[rank_ - 1]); }
  bool operator==(const Shape& o) const {
    if (rank_ != o.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;

 private:
  std::array<int, kMaxRank> dims_{};
  int rank_ = 0;
};

}  // namespace engram::core

template <>
struct fmt::formatter<engram::core::Shape> : fmt::formatter<std::string> {
  auto format(const engram::core::Shape& s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(s.str(), ctx);
  }
};
