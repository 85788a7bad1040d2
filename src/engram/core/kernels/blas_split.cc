// The splits of kernels::sgemm on several threads. oneDNN runs on one thread inside engram
// (parallel.cc); engram splits a product over the calling thread's team (on_team) and runs one
// single-threaded oneDNN sgemm per block. Products with few rows are split by C's columns (oneDNN's
// own threads gain little on them: bench/RESULTS.md), taller ones by C's rows.
#include <algorithm>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core::kernels {

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

void sgemm_split_rows(int threads, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float beta, float* c, int ldc) {
  const int parts = std::max(1, std::min(threads, m));
  on_team(parts, [&](int t, int nt) {
    const int i0 = static_cast<int>(int64_t{m} * t / nt), i1 = static_cast<int>(int64_t{m} * (t + 1) / nt);
    if (i1 > i0) {
      // Rows i0..i1 of C: rows of A, or columns when it is stored transposed ([K, M]).
      const float* ai = ta ? a + i0 : a + static_cast<long>(i0) * lda;
      sgemm_dnnl(ta, tb, i1 - i0, n, k, alpha, ai, lda, b, ldb, beta, c + static_cast<long>(i0) * ldc, ldc);
    }
  });
}

}  // namespace engram::core::kernels
