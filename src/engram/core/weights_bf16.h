// Bf16Weights: a bf16 copy of one or more flat parameter buffers for inference. A Graph that is
// given one (Graph::use_bf16_weights) runs its x·Wᵀ products on the bf16 copy of any weight
// inside those buffers (ops/matmul.h weight_product): half the bytes per step, sums still in fp32.
// The weight matrices it is told about are also kept packed for the few-row kernel
// (kernels/blas.h pack_bf16_pairs), where the CPU has AVX512-BF16. Several buffers serve an
// ensemble decoded in one graph (one buffer per member's ParamStore). Built once from the fp32
// values; it does not follow later changes to them.
// Dims: P parameters in a buffer, U buffers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engram/core/packed_matrices.h"

namespace engram::core {

class Bf16Weights {
 public:
  using Matrix = WeightMatrix;  // W [rows, cols] at values + offset
  using Buffer = WeightBuffer;  // values [P] and the matrices to pack
  explicit Bf16Weights(std::span<const float> values, std::span<const Matrix> matrices = {});  // [P]
  // One copy of each buffer [U]; the buffers must not overlap (an error).
  explicit Bf16Weights(std::span<const Buffer> buffers);
  // The bf16 copy of the fp32 weight starting at `p`, or nullptr when p is outside every buffer.
  const uint16_t* find(const float* p) const {
    for (const Part& s : parts_)
      if (p >= s.base && p < s.base + s.bits.size()) return s.bits.data() + (p - s.base);
    return nullptr;
  }
  // The packed copy of the listed matrix [n, k] starting at `p`, or nullptr.
  const uint16_t* find_packed(const float* p, int n, int k) const {
    for (const Part& s : parts_)
      if (p >= s.base && p < s.base + s.bits.size()) return s.packed.find(p, n, k);
    return nullptr;
  }

 private:
  struct Part {
    const float* base;                // the buffer's first fp32 value
    std::vector<uint16_t> bits;       // [P]
    PackedMatrices<uint16_t> packed;  // every listed matrix (where the CPU has AVX512-BF16)
  };
  void add(std::span<const float> values, std::span<const Matrix> matrices);
  std::vector<Part> parts_;  // [U]
};

}  // namespace engram::core
