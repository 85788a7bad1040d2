// Bf16Weights: rounds each buffer once (kernels::to_bf16, nearest even) and packs the listed matrices.
#include "engram/core/weights_bf16.h"

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"

namespace engram::core {

Bf16Weights::Bf16Weights(std::span<const float> values, std::span<const Matrix> matrices) { add(values, matrices); }

Bf16Weights::Bf16Weights(std::span<const Buffer> buffers) {
  parts_.reserve(buffers.size());
  for (const Buffer& b : buffers) add(b.values, b.matrices);
}

void Bf16Weights::add(std::span<const float> values, std::span<const Matrix> matrices) {
  for (const Part& s : parts_)
    ENGRAM_CHECK(values.data() + values.size() <= s.base || values.data() >= s.base + s.bits.size(),
                 "Bf16Weights: buffer {} overlaps an earlier one", parts_.size());
  Part& s = parts_.emplace_back();
  s.base = values.data();
  s.bits.resize(values.size());
  kernels::to_bf16(values.data(), s.bits.data(), static_cast<int64_t>(values.size()));
  if (kernels::packed_bf16_kernel())
    s.packed = PackedMatrices<uint16_t>(values, matrices, "Bf16Weights", kernels::packed_bf16_size,
                                        kernels::pack_bf16_pairs);
}

}  // namespace engram::core
