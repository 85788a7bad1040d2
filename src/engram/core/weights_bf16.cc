// Bf16Weights: rounds the buffer once (kernels::to_bf16, nearest even).
#include "engram/core/weights_bf16.h"

#include "engram/core/kernels/blas.h"

namespace engram::core {

Bf16Weights::Bf16Weights(std::span<const float> values) : base_(values.data()), bits_(values.size()) {
  kernels::to_bf16(values.data(), bits_.data(), static_cast<int64_t>(values.size()));
}

}  // namespace engram::core
