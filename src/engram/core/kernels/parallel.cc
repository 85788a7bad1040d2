// parallel_for over the OpenMP team (compiled with -fopenmp, no Eigen: see CMakeLists.txt).
#include "engram/core/kernels/parallel.h"

#include <omp.h>

#include <algorithm>

#include "engram/core/kernels/blas.h"

namespace engram::core::kernels {

void parallel_for_impl(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  if (n <= 0) return;
  const int64_t most = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int team = static_cast<int>(std::min<int64_t>(blas_team_size(), most));
  if (team <= 1) {
    fn(ctx, 0, n);
    return;
  }
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = n * t / nt, e = n * (t + 1) / nt;
    if (e > b) fn(ctx, b, e);
  }
}

}  // namespace engram::core::kernels
