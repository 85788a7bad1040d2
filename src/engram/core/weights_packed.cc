// PackedWeights: packs the listed matrices once (kernels::pack_f32).
#include "engram/core/weights_packed.h"

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"

namespace engram::core {

PackedWeights::PackedWeights(std::span<const float> values, std::span<const Matrix> matrices) {
  if (!kernels::packed_f32_kernel()) return;
  int64_t total = 0;
  for (const Matrix& m : matrices) {
    ENGRAM_CHECK(m.offset >= 0 && m.rows > 0 && m.cols > 0 &&
                     m.offset + int64_t{m.rows} * m.cols <= static_cast<int64_t>(values.size()),
                 "PackedWeights: matrix [{}, {}] at {} outside the {} values", m.rows, m.cols, m.offset,
                 values.size());
    total += kernels::packed_f32_size(m.rows, m.cols);
  }
  packed_.resize(static_cast<size_t>(total));
  int64_t at = 0;
  for (const Matrix& m : matrices) {
    kernels::pack_f32(values.data() + m.offset, m.rows, m.cols, packed_.data() + at);
    index_.emplace(values.data() + m.offset, Packed{at, m.rows, m.cols});
    at += kernels::packed_f32_size(m.rows, m.cols);
  }
}

const float* PackedWeights::find(const float* p, int n, int k) const {
  const auto it = index_.find(p);
  if (it == index_.end() || it->second.rows != n || it->second.cols != k) return nullptr;
  return packed_.data() + it->second.at;
}

}  // namespace engram::core
