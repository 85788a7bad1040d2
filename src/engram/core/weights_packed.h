// PackedWeights: an fp32 copy of a parameter buffer's weight matrices in the few-row kernel's
// packed layout (kernels/blas.h pack_f32: blocks of 64 outputs, each [K, 64]). A Graph that is
// given one (Graph::use_packed_weights) runs its few-row x·Wᵀ products (decoding one sentence, or
// the beams of one) on the packed copy of any listed W: the same fp32 values, read as contiguous
// streams with the sums in the output lanes. Built once from the fp32 values; it does not follow
// later changes to them. Empty where the CPU lacks AVX-512 (kernels::packed_f32_kernel()).
// Dims: P parameters in the buffer.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engram/core/weights_bf16.h"

namespace engram::core {

class PackedWeights {
 public:
  using Matrix = Bf16Weights::Matrix;  // W [rows, cols] at values + offset
  PackedWeights(std::span<const float> values, std::span<const Matrix> matrices);  // values [P]
  // The packed copy of the listed matrix [n, k] starting at `p`, or nullptr.
  const float* find(const float* p, int n, int k) const;
  int64_t bytes() const { return static_cast<int64_t>(packed_.size() * sizeof(float)); }

 private:
  struct Packed {
    int64_t at;  // index into packed_
    int rows, cols;
  };
  std::vector<float> packed_;                       // every listed matrix, packed
  std::unordered_map<const float*, Packed> index_;  // by the matrix's first fp32 value
};

}  // namespace engram::core
