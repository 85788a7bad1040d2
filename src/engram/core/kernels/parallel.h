// parallel_for: splits [0, n) into one contiguous chunk per thread of the OpenMP team
// (blas_team_size(): the threads set by set_blas_threads, 1 inside a parallel region) and runs
// fn(begin, end) on each. Chunks hold at least `grain` items, so small loops stay on the caller's
// thread. The split depends only on n, grain and the team size: results of row-wise loops whose
// rows are independent do not depend on it at all.
//
// on_team: the one OpenMP parallel region of engram (parallel.cc); parallel_for and the kernels'
// own splits (blas_split.cc, gemv.cc) all run through it. In a ThreadSanitizer build it tells
// TSan about the team's fork and join, which libgomp (not instrumented) does not (parallel.cc).
#pragma once

#include <cstdint>
#include <type_traits>

namespace engram::core::kernels {

void parallel_for_impl(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx);
void on_team_impl(int team, void (*fn)(void*, int, int), void* ctx);

// Runs fn(t, nt) on each thread t of an OpenMP team of up to `team` threads (nt: the team's actual
// size, which OpenMP may make smaller); the caller is thread 0 and returns when all have finished.
// fn must not throw.
template <class Fn>
void on_team(int team, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  on_team_impl(
      team, [](void* c, int t, int nt) { (*static_cast<F*>(c))(t, nt); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

template <class Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  parallel_for_impl(
      n, grain, [](void* c, int64_t b, int64_t e) { (*static_cast<F*>(c))(b, e); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

// Rows [0, rows) of `row_values` values each, at least `min_values` values per thread (32k by
// default; cheaper-to-split work such as a beam's 5 x 8,000 log-softmax rows passes less).
template <class Fn>
void parallel_rows(int64_t rows, int64_t row_values, Fn&& fn, int64_t min_values = int64_t{1} << 15) {
  const int64_t grain = min_values / (row_values > 0 ? row_values : 1);
  parallel_for(rows, grain > 0 ? grain : 1, static_cast<Fn&&>(fn));
}

}  // namespace engram::core::kernels
