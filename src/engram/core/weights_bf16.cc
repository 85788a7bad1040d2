// Bf16Weights: rounds the buffer once (kernels::to_bf16, nearest even) and packs the listed matrices.
#include "engram/core/weights_bf16.h"

#include "engram/core/kernels/blas.h"

namespace engram::core {

Bf16Weights::Bf16Weights(std::span<const float> values, std::span<const Matrix> matrices)
    : base_(values.data()), bits_(values.size()) {
  kernels::to_bf16(values.data(), bits_.data(), static_cast<int64_t>(values.size()));
  if (kernels::packed_bf16_kernel())
    packed_ = PackedMatrices<uint16_t>(values, matrices, "Bf16Weights", kernels::packed_bf16_size,
                                       kernels::pack_bf16_pairs);
}

}  // namespace engram::core
