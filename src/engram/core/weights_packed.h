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

#include "engram/core/packed_matrices.h"

namespace engram::core {

class PackedWeights {
 public:
  using Matrix = WeightMatrix;  // W [rows, cols] at values + offset
  PackedWeights(std::span<const float> values, std::span<const Matrix> matrices);  // values [P]
  // The packed copy of the listed matrix [n, k] starting at `p`, or nullptr.
  const float* find(const float* p, int n, int k) const { return packed_.find(p, n, k); }

 private:
  PackedMatrices<float> packed_;
};

}  // namespace engram::core
