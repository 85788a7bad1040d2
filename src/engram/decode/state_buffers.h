// Plain-buffer helpers for decode::DecodeState implementations: a model's decoder state lives in
// std::vector<float> buffers it owns (so the search may reset the graph every step), copied out
// of the graph after a step, viewed back in as graph inputs before the next, and re-gathered by
// row when beams are reordered. Header-only; used by every StepModel.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "engram/core/graph.h"

namespace engram::decode {

// v's values as a new buffer.
inline std::vector<float> copy_of(core::Var v) { return std::vector<float>(v.data(), v.data() + v.numel()); }

// Overwrites `dst` with v's values, reusing its storage.
inline void store(std::vector<float>& dst, core::Var v) { dst.assign(v.data(), v.data() + v.numel()); }

// out row i = in row rows[i], rows of `width` elements (in and out may be the same buffer); an
// empty `in` leaves `out` as it is. Rows are copied straight into `out` when it is another buffer,
// or when it is `in` and `rows` rises strictly (dropping finished rows: rows[i] >= i, so each row
// is read before anything overwrites it); any other reordering of one buffer goes through a copy.
template <class T>
void gather(const std::vector<T>& in, std::vector<T>& out, std::span<const int32_t> rows, int64_t width) {
  if (in.empty()) return;
  const size_t bytes = sizeof(T) * static_cast<size_t>(width);
  const bool same = &in == &out;
  bool rising = true;
  for (size_t i = 1; i < rows.size() && rising; ++i) rising = rows[i] > rows[i - 1];
  if (same && !rising) {
    std::vector<T> next(rows.size() * width);
    for (size_t i = 0; i < rows.size(); ++i) std::memcpy(next.data() + i * width, in.data() + rows[i] * width, bytes);
    out.swap(next);
    return;
  }
  if (!same) out.resize(rows.size() * width);
  for (size_t i = 0; i < rows.size(); ++i)
    if (!same || static_cast<size_t>(rows[i]) != i)
      std::memmove(out.data() + i * width, in.data() + rows[i] * width, bytes);
  if (same) out.resize(rows.size() * width);
}

// The buffer as a graph input of `shape` (no copy; valid while the buffer is unchanged).
inline core::Var view(core::Graph& g, std::vector<float>& buf, core::Shape shape) {
  return g.input(core::Tensor{buf.data(), shape});
}

}  // namespace engram::decode
