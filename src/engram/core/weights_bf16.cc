// Bf16Weights: rounds the buffer once (kernels::to_bf16, nearest even) and packs the listed matrices.
#include "engram/core/weights_bf16.h"

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"

namespace engram::core {

Bf16Weights::Bf16Weights(std::span<const float> values, std::span<const Matrix> matrices)
    : base_(values.data()), bits_(values.size()) {
  kernels::to_bf16(values.data(), bits_.data(), static_cast<int64_t>(values.size()));
  if (!kernels::packed_bf16_kernel()) return;
  int64_t total = 0;
  for (const Matrix& m : matrices) {
    ENGRAM_CHECK(m.offset >= 0 && m.rows > 0 && m.cols > 0 &&
                     m.offset + int64_t{m.rows} * m.cols <= static_cast<int64_t>(values.size()),
                 "Bf16Weights: matrix [{}, {}] at {} outside the {} values", m.rows, m.cols, m.offset, values.size());
    total += kernels::packed_bf16_size(m.rows, m.cols);
  }
  packed_bits_.resize(static_cast<size_t>(total));
  int64_t at = 0;
  for (const Matrix& m : matrices) {
    kernels::pack_bf16_pairs(values.data() + m.offset, m.rows, m.cols, packed_bits_.data() + at);
    packed_.emplace(values.data() + m.offset, Packed{at, m.rows, m.cols});
    at += kernels::packed_bf16_size(m.rows, m.cols);
  }
}

const uint16_t* Bf16Weights::find_packed(const float* p, int n, int k) const {
  const auto it = packed_.find(p);
  if (it == packed_.end() || it->second.rows != n || it->second.cols != k) return nullptr;
  return packed_bits_.data() + it->second.at;
}

}  // namespace engram::core
