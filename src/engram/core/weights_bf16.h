// Bf16Weights: a bf16 copy of a flat parameter buffer for inference. A Graph that is given one
// (Graph::use_bf16_weights) runs its few-row x·Wᵀ products (decoding one sentence, or the beams
// of one) on the bf16 copy of any weight inside that buffer: half the bytes per step, sums still
// in fp32. Built once from the fp32 values; it does not follow later changes to them.
// Dims: P parameters in the buffer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace engram::core {

class Bf16Weights {
 public:
  explicit Bf16Weights(std::span<const float> values);  // [P]
  // The bf16 copy of the fp32 weight starting at `p`, or nullptr when p is outside the buffer.
  const uint16_t* find(const float* p) const {
    return p >= base_ && p < base_ + bits_.size() ? bits_.data() + (p - base_) : nullptr;
  }

 private:
  const float* base_;
  std::vector<uint16_t> bits_;  // [P]
};

}  // namespace engram::core
