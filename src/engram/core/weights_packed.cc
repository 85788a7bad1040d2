// PackedWeights: packs the listed matrices once (kernels::pack_f32).
#include "engram/core/weights_packed.h"

#include "engram/core/kernels/blas.h"

namespace engram::core {

PackedWeights::PackedWeights(std::span<const float> values, std::span<const Matrix> matrices) {
  if (kernels::packed_f32_kernel())
    packed_ = PackedMatrices<float>(values, matrices, "PackedWeights", kernels::packed_f32_size, kernels::pack_f32);
}

}  // namespace engram::core
