// Tensor: a non-owning view of contiguous row-major float32 data with a Shape.
// Storage belongs to a ParamStore (parameters), a Graph's Arena (activations) or the caller.
#pragma once

#include <cstring>

#include "engram/core/shape.h"

namespace engram::core {

struct Tensor {
  float* data = nullptr;
  Shape shape;

  Tensor() = default;
  Tensor(float* d, Shape s) : data(d), shape(s) {}

  int64_t numel() const { return shape.numel(); }
  float* begin() const { return data; }
  float* end() const { return data + numel(); }
  float& operator[](int64_t i) const { return data[i]; }
  // Element of a rank-2 view.
  float& at(int64_t r, int64_t c) const { return data[r * shape.last() + c]; }
  // Same data, another shape with the same element count.
  Tensor reshaped(Shape s) const {
    ENGRAM_CHECK(s.numel() == numel(), "cannot view {} as {}", shape, s);
    return {data, s};
  }
  // Rows [begin, end) along axis 0 (a view: rows are contiguous).
  Tensor rows(int begin, int end) const {
    ENGRAM_CHECK(shape.rank() >= 1 && begin >= 0 && begin <= end && end <= shape[0],
                 "rows [{}, {}) out of range for {}", begin, end, shape);
    Shape s = shape;
    s[0] = end - begin;
    return {data + static_cast<int64_t>(begin) * (numel() / (shape[0] ? shape[0] : 1)), s};
  }
  void fill(float v) const {
    for (int64_t i = 0, n = numel(); i < n; ++i) data[i] = v;
  }
  void zero() const { std::memset(data, 0, sizeof(float) * numel()); }
  void copy_from(const Tensor& src) const {
    ENGRAM_CHECK(src.numel() == numel(), "copy of {} into {}", src.shape, shape);
    std::memcpy(data, src.data, sizeof(float) * numel());
  }
};

}  // namespace engram::core
