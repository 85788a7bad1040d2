// Int8Weights: quantizes and packs each buffer's listed matrices once (kernels::pack_int8).
#include "engram/core/weights_int8.h"

#include "engram/core/error.h"
#include "engram/core/kernels/gemm_int8.h"

namespace engram::core {

Int8Weights::Int8Weights(std::span<const float> values, std::span<const Matrix> matrices) { add(values, matrices); }

Int8Weights::Int8Weights(std::span<const Buffer> buffers) {
  parts_.reserve(buffers.size());
  for (const Buffer& b : buffers) add(b.values, b.matrices);
}

void Int8Weights::add(std::span<const float> values, std::span<const Matrix> matrices) {
  for (const Part& s : parts_)
    ENGRAM_CHECK(values.data() + values.size() <= s.base || values.data() >= s.base + s.size,
                 "Int8Weights: buffer {} overlaps an earlier one", parts_.size());
  Part& s = parts_.emplace_back();
  s.base = values.data();
  s.size = static_cast<int64_t>(values.size());
  s.packed = PackedMatrices<int8_t>(values, matrices, "Int8Weights", kernels::packed_int8_size, kernels::pack_int8);
}

}  // namespace engram::core
