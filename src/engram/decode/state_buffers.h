// Plain-buffer helpers for decode::DecodeState implementations: a model's decoder state lives in
// std::vector<float> buffers it owns (so the search may reset the graph every step), copied out
// of the graph after a step, viewed back in as graph inputs before the next, and re-gathered by
// row when beams are reordered. Header-only; used by every StepModel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "engram/core/graph.h"

namespace engram::decode {

// This thread's spare buffers: the storage of a finished batch's large state buffers, which the
// next batch decoded on the thread reuses. A large new block is fresh memory from the kernel, each
// page of it faulted in and zeroed on first touch; a beam's expanded encoder memory is tens of MB.
// At most kSpareBuffers of each element type are kept (the largest); what they hold stays
// allocated to the thread.
inline constexpr size_t kSpareBuffers = 8;
namespace detail {
template <class T = float>
std::vector<std::vector<T>>& spare_buffers() {
  thread_local std::vector<std::vector<T>> spares;
  return spares;
}
}  // namespace detail

// Gives v's storage to this thread's spares (v is left empty); past kSpareBuffers the smallest goes.
template <class T>
void give_buffer(std::vector<T>& v) {
  if (v.capacity() == 0) return;
  std::vector<std::vector<T>>& spares = detail::spare_buffers<T>();
  v.clear();
  spares.push_back(std::move(v));
  v = {};
  if (spares.size() > kSpareBuffers) {
    auto smallest = std::min_element(spares.begin(), spares.end(),
                                     [](const auto& a, const auto& b) { return a.capacity() < b.capacity(); });
    spares.erase(smallest);
  }
}

// Makes room for n elements in v: a spare of this thread's that holds n takes v's place (v's own
// storage becomes a spare), else v grows. v's contents are not kept.
template <class T>
void reserve_buffer(std::vector<T>& v, size_t n) {
  if (v.capacity() >= n) return;
  std::vector<std::vector<T>>& spares = detail::spare_buffers<T>();
  auto fit = spares.end();  // the smallest spare that holds n
  for (auto it = spares.begin(); it != spares.end(); ++it)
    if (it->capacity() >= n && (fit == spares.end() || it->capacity() < fit->capacity())) fit = it;
  if (fit == spares.end()) {
    v.clear();
    v.reserve(n);
    return;
  }
  std::vector<T> mine = std::move(*fit);
  spares.erase(fit);
  give_buffer(v);
  v = std::move(mine);
}

// Overwrites `dst` with v's values, reusing its storage; with `spares`, a spare's storage where
// dst's own is too small (for a buffer that goes back by give_buffer when its state ends).
inline void store(std::vector<float>& dst, core::Var v, bool spares = false) {
  if (spares) reserve_buffer(dst, static_cast<size_t>(v.numel()));
  dst.assign(v.data(), v.data() + v.numel());
}

// v's values as a new buffer.
inline std::vector<float> copy_of(core::Var v) { return std::vector<float>(v.data(), v.data() + v.numel()); }

// Whether gather can move these rows within one buffer: rows[i] >= i for every i.
inline bool in_place_rows(std::span<const int32_t> rows) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || static_cast<size_t>(rows[i]) < i) return false;
  return true;
}

// out row i = in row rows[i], rows of `width` elements (in and out may be the same buffer); an
// empty `in` leaves `out` as it is. Rows are copied straight into `out` when it is another buffer,
// or when it is `in` and rows[i] >= i for every i (finished rows dropped, the survivors in order or
// moved from the end into the gaps: going up in i, row rows[i] is read before anything overwrites
// it, and only the rows with rows[i] != i are copied); any other reordering of one buffer goes
// through a second buffer. Nothing is zero-filled first. With `spares` (buffers that go back by
// give_buffer when their state ends), storage comes from and returns to this thread's spares.
template <class T>
void gather(const std::vector<T>& in, std::vector<T>& out, std::span<const int32_t> rows, int64_t width,
            bool spares = false) {
  if (in.empty()) return;
  const size_t bytes = sizeof(T) * static_cast<size_t>(width), n = rows.size() * static_cast<size_t>(width);
  const bool same = &in == &out;
  if (same && in_place_rows(rows)) {
    for (size_t i = 0; i < rows.size(); ++i)
      if (static_cast<size_t>(rows[i]) != i) std::memmove(out.data() + i * width, in.data() + rows[i] * width, bytes);
    out.resize(n);
    return;
  }
  std::vector<T> next;
  std::vector<T>& to = same ? next : out;
  to.clear();
  if (spares) reserve_buffer(to, n);
  to.reserve(n);
  for (int32_t r : rows) to.insert(to.end(), in.begin() + r * width, in.begin() + (r + 1) * width);
  if (!same) return;
  out.swap(next);
  if (spares) give_buffer(next);
}

// The buffer as a graph input of `shape` (no copy; valid while the buffer is unchanged).
inline core::Var view(core::Graph& g, std::vector<float>& buf, core::Shape shape) {
  return g.input(core::Tensor{buf.data(), shape});
}

}  // namespace engram::decode
