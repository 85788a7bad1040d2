// The OpenMP team (compiled with -fopenmp, no Eigen: see CMakeLists.txt): on_team and parallel_for.
#include "engram/core/kernels/parallel.h"

#include <omp.h>

#include <algorithm>

#include "engram/core/kernels/blas.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace engram::core::kernels {

namespace {

// ThreadSanitizer and the team. libgomp is not instrumented: TSan sees neither the fork (the team
// starts after the caller's code before the region) nor the join (the caller goes on once every
// thread of the team finished), and would report both as races. In a TSan build the region says
// so itself: the caller releases kFork before it and acquires kJoin after it; each team thread
// acquires kFork first and releases kJoin last. From its release to its own start as thread 0 the
// caller ignores its memory accesses: they are the stores of the region's arguments, which the
// compiler makes after the release call (the team reads them after its acquire). A race between
// two threads of one team, such as overlapping writes, is still reported. The two tokens serve
// every team, so teams of different callers at once (server workers with --threads > 1) are
// ordered with each other more than they are: a race between two such teams may be missed, none
// is invented. The tokens are never written: only their addresses name the synchronisation.
// __SANITIZE_THREAD__ is g++'s (make tsan); in other builds these are no-ops.
#if defined(__SANITIZE_THREAD__)
constexpr char kFork = 0, kJoin = 0;
thread_local bool t_forking = false;  // between team_fork() and this thread's start as thread 0
void* token(const char& t) { return const_cast<char*>(&t); }
void team_fork() {
  __tsan_release(token(kFork));
  t_forking = true;
  __tsan_ignore_thread_begin();
}
void team_join() { __tsan_acquire(token(kJoin)); }
struct TeamThread {
  TeamThread() {
    if (t_forking) {
      t_forking = false;
      __tsan_ignore_thread_end();
    }
    __tsan_acquire(token(kFork));
  }
  ~TeamThread() { __tsan_release(token(kJoin)); }
};
#else
void team_fork() {}
void team_join() {}
struct TeamThread {};
#endif

}  // namespace

void on_team_impl(int team, void (*fn)(void*, int, int), void* ctx) {
  if (team <= 1) {
    fn(ctx, 0, 1);
    return;
  }
  // The region reads its arguments through one aggregate (a pointer to it, loaded where used):
  // under TSan no argument is read before the team thread's acquire.
  struct Work {
    void (*fn)(void*, int, int);
    void* ctx;
  } const work{fn, ctx};
  team_fork();
#pragma omp parallel num_threads(team)
  {
    [[maybe_unused]] const TeamThread member{};
    work.fn(work.ctx, omp_get_thread_num(), omp_get_num_threads());
  }
  team_join();
}

void parallel_for_impl(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  if (n <= 0) return;
  const int64_t most = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int team = static_cast<int>(std::min<int64_t>(blas_team_size(), most));
  if (team <= 1) {
    fn(ctx, 0, n);
    return;
  }
  on_team(team, [&](int t, int nt) {
    const int64_t b = n * t / nt, e = n * (t + 1) / nt;
    if (e > b) fn(ctx, b, e);
  });
}

}  // namespace engram::core::kernels
