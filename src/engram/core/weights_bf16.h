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
#include <unordered_map>
#include <vector>

namespace engram::core {

class Bf16Weights {
 public:
  struct Matrix {  // a weight W [rows, cols] stored at values + offset
    int64_t offset;
    int rows, cols;
  };
  explicit Bf16Weights(std::span<const float> values, std::span<const Matrix> matrices = {});  // [P]
  // The bf16 copy of the fp32 weight starting at `p`, or nullptr when p is outside the buffer.
  const uint16_t* find(const float* p) const {
    return p >= base_ && p < base_ + bits_.size() ? bits_.data() + (p - base_) : nullptr;
  }
  // The packed copy of the listed matrix [n, k] starting at `p`, or nullptr.
  const uint16_t* find_packed(const float* p, int n, int k) const;

 private:
  struct Packed {
    int64_t at;  // index into packed_bits_
    int rows, cols;
  };
  const float* base_;
  std::vector<uint16_t> bits_;                          // [P]
  std::vector<uint16_t> packed_bits_;                   // every listed matrix, packed
  std::unordered_map<const float*, Packed> packed_;     // by the matrix's first fp32 value
};

}  // namespace engram::core
