// Bf16Weights: a bf16 copy of a flat parameter buffer for inference. A Graph that is given one
// (Graph::use_bf16_weights) runs its x·Wᵀ products on the bf16 copy of any weight inside that
// buffer (ops/matmul.h weight_product): half the bytes per step, sums still in fp32. The weight
// matrices it is told about are also kept packed for the few-row kernel (kernels/blas.h
// pack_bf16_pairs), where the CPU has AVX512-BF16. Built once from the fp32 values; it does not
// follow later changes to them.
// Dims: P parameters in the buffer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engram/core/packed_matrices.h"

namespace engram::core {

class Bf16Weights {
 public:
  using Matrix = WeightMatrix;  // W [rows, cols] at values + offset
  explicit Bf16Weights(std::span<const float> values, std::span<const Matrix> matrices = {});  // [P]
  // The bf16 copy of the fp32 weight starting at `p`, or nullptr when p is outside the buffer.
  const uint16_t* find(const float* p) const {
    return p >= base_ && p < base_ + bits_.size() ? bits_.data() + (p - base_) : nullptr;
  }
  // The packed copy of the listed matrix [n, k] starting at `p`, or nullptr.
  const uint16_t* find_packed(const float* p, int n, int k) const { return packed_.find(p, n, k); }

 private:
  const float* base_;
  std::vector<uint16_t> bits_;       // [P]
  PackedMatrices<uint16_t> packed_;  // every listed matrix (where the CPU has AVX512-BF16)
};

}  // namespace engram::core
