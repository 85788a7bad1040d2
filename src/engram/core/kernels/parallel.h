// parallel_for: splits [0, n) into one contiguous chunk per thread of the calling thread's team
// (blas_team_size(): the threads set by set_blas_threads, 1 on a team's helper and inside a part
// of the caller's own job) and runs fn(begin, end) on each. Chunks hold at least `grain` items, so
// small loops stay on the caller's thread. The split depends only on n, grain and the team size:
// results of row-wise loops whose rows are independent do not depend on it at all.
//
// on_team: the one way engram runs work on several threads (parallel.cc); parallel_for and the
// kernels' own splits (blas_split.cc, gemv.cc, gemm_bf16.cc) all run through it. A team is the
// calling thread's own helper threads, which spin between jobs for a while and then sleep: a job
// is handed over in well under a microsecond, far less than an OpenMP region costs and less than
// a whole few-row product that reads 0.5 MiB of weights takes (the figures: bench/RESULTS.md,
// "Figures moved from source comments"), so splitting such a product pays. Part t of a job is always helper t's when it is awake, so a helper keeps re-reading the
// same share of a weight matrix from its own L2 cache. OpenMP itself is left to oneDNN, at one
// thread (parallel.cc), except for the largest products (on_openmp).
#pragma once

#include <cstdint>
#include <type_traits>

namespace engram::core::kernels {

void parallel_for_impl(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx);
void on_team_impl(int team, void (*fn)(void*, int, int), void* ctx);

void on_openmp_impl(int threads, void (*fn)(void*), void* ctx);

// Runs fn() on the calling thread with oneDNN allowed `threads` OpenMP threads of its own, the
// caller's helpers sent to sleep first so that OpenMP's threads have the cores: for the largest
// products (kernels::sgemm, from kOpenmpWork multiply-adds), where oneDNN's own threads beat two
// single-threaded oneDNN halves (bench/RESULTS.md). fn may throw.
template <class Fn>
void on_openmp(int threads, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  on_openmp_impl(
      threads, [](void* c) { (*static_cast<F*>(c))(); }, const_cast<void*>(static_cast<const void*>(&fn)));
}

// The calling thread's team size from now on (set_blas_threads, blas.h, calls it); oneDNN called
// by this thread runs on one thread. Unset, the first blas_team_size() takes OpenMP's default
// (OMP_NUM_THREADS, or all cores).
void set_team_threads(int n);

// Runs fn(t, nt) once for every part t in [0, team), nt = team: part 0 on the caller, part t on
// helper t or, where that helper has not taken it up in time (asleep, or off its core), on the
// caller after its own; returns when all have finished. On a team's helper, inside a part of the
// caller's own job, and for team <= 1, every part runs on the caller. fn should not throw; an
// exception from a part run on the caller is rethrown once every part has ended, one from a
// helper ends the process.
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
