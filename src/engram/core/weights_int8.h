// Int8Weights: int8 copies of the weight matrices of one or more flat parameter buffers for
// inference (kernels/gemm_int8.h: one scale per output row, packed for the int8 kernel). A Graph
// that is given one (Graph::use_int8_weights) runs its x·Wᵀ products on a listed W's int8 copy,
// x quantized per row at each product (ops/matmul.h weight_product): a quarter of fp32's bytes per
// weight, integer sums. Weights not listed as a matrix (biases, vectors, slices of a matrix) and
// every other value stay fp32. Several buffers serve an ensemble decoded in one graph. Built once
// from the fp32 values; it does not follow later changes to them.
// Dims: P parameters in a buffer, U buffers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engram/core/packed_matrices.h"

namespace engram::core {

class Int8Weights {
 public:
  using Matrix = WeightMatrix;  // W [rows, cols] at values + offset
  using Buffer = WeightBuffer;
  Int8Weights(std::span<const float> values, std::span<const Matrix> matrices);  // values [P]
  // One copy of each buffer [U]; the buffers must not overlap (an error).
  explicit Int8Weights(std::span<const Buffer> buffers);
  // The int8 copy (kernels::pack_int8 layout) of the listed matrix [n, k] starting at `p`, or nullptr.
  const int8_t* find(const float* p, int n, int k) const {
    for (const Part& s : parts_)
      if (p >= s.base && p < s.base + s.size) return s.packed.find(p, n, k);
    return nullptr;
  }

 private:
  struct Part {
    const float* base;              // the buffer's first fp32 value
    int64_t size;                   // P
    PackedMatrices<int8_t> packed;  // every listed matrix
  };
  void add(std::span<const float> values, std::span<const Matrix> matrices);
  std::vector<Part> parts_;  // [U]
};

}  // namespace engram::core
