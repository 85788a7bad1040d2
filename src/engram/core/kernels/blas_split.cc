// The column split of kernels::sgemm for skinny products on several threads. oneDNN parallelises
// a product with few rows poorly (bench/RESULTS.md: 64x512x1536 x·Wᵀ at 91 GFLOP/s on 2 threads
// against 89 on one), so engram splits C's columns over the OpenMP team itself (on_team) and runs
// one single-threaded oneDNN sgemm per block (oneDNN runs sequentially inside a parallel region).
// Compiled with -fopenmp (CMakeLists.txt) for omp_in_parallel: it includes no Eigen, so every
// other translation unit sees Eigen exactly as configured.
#include <omp.h>

#include <algorithm>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core::kernels {

int blas_team_size() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

void sgemm_split_columns(int threads, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc) {
  // Blocks of whole 16-column panels (one AVX-512 vector), as even as that allows.
  const int panels = (n + 15) / 16;
  const int parts = std::max(1, std::min(threads, panels));
  on_team(parts, [&](int t, int nt) {
    const int j0 = std::min(n, panels * t / nt * 16), j1 = std::min(n, panels * (t + 1) / nt * 16);
    if (j1 > j0) {
      // Columns j0..j1 of C: rows j0.. of B when it is stored transposed ([N, K]), else columns.
      const float* bj = tb ? b + static_cast<long>(j0) * ldb : b + j0;
      sgemm_dnnl(ta, tb, m, j1 - j0, k, alpha, a, lda, bj, ldb, beta, c + j0, ldc);
    }
  });
}

}  // namespace engram::core::kernels
