// sgemm backends behind kernels/blas.h.
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

#include <cblas.h>
#include <dnnl.h>

#include <Eigen/Core>
#include <cstdint>


namespace engram::core::kernels {

namespace {
constexpr int64_t kTinyGemm = 32768;  // m*n*k at or below which Eigen's small product is fastest
// With several threads, products of at least kSplitWork multiply-adds (blas.h) are split over the
// team (blas_split.cc): by columns up to this many rows, by rows above it; from kOpenmpWork on,
// they run on oneDNN's own threads.
constexpr int kSplitMaxRows = 256;
// x·Wᵀ with at most kSmallRowsFp32 rows and a weight matrix of at least this many entries: the
// bandwidth-bound decoding products, streamed by gemv.cc, which beats oneDNN up to 4 rows
// (blas_bench few_rows; bench/RESULTS.md).
constexpr int kSmallRowsFp32 = 4;
constexpr int64_t kSmallMinWeights = 16384;
}  // namespace

void sgemm_openblas(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                    const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm_dnnl(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                const float* b, int ldb, float beta, float* c, int ldc) {
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm_eigen(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<Mat, 0, Stride> C(c, m, n, Stride(ldc));
  // op(A) is m x k; stored as k x m when transposed.
  Eigen::Map<const Mat, 0, Stride> A(a, ta ? k : m, ta ? m : k, Stride(lda));
  Eigen::Map<const Mat, 0, Stride> B(b, tb ? n : k, tb ? k : n, Stride(ldb));
  if (beta == 0.0f) {
    C.setZero();
  } else if (beta != 1.0f) {
    C *= beta;
  }
  if (!ta && !tb) C.noalias() += alpha * A * B;
  else if (ta && !tb) C.noalias() += alpha * A.transpose() * B;
  else if (!ta && tb) C.noalias() += alpha * A * B.transpose();
  else C.noalias() += alpha * A.transpose() * B.transpose();
}

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // C = beta * C
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  // Eigen's coefficient-based product for tiny problems (no packing, no call overhead: the
  // attention bmm slices), oneDNN's JIT sgemm for everything else (the crossover kTinyGemm and
  // its figures: bench/RESULTS.md); with several threads, the product is split over the calling
  // thread's team (blas_split.cc, one single-threaded oneDNN sgemm per block), or from kOpenmpWork
  // on given to oneDNN's own threads. Inside a Bf16Products scope the products above the tiny
  // ones run in bf16 (sgemm_bf16 splits them over the team itself).
  const int64_t work = static_cast<int64_t>(m) * n * k;
  const int threads = blas_team_size();  // first, as it also sets this thread's oneDNN to one thread
  if (!ta && tb && m <= kSmallRowsFp32 && int64_t{n} * k >= kSmallMinWeights) {
    sgemm_small_m(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (work <= kTinyGemm) {
    sgemm_eigen(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (bf16_products()) {
    sgemm_bf16(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (const int team = work >= kSplitWork ? threads : 1; team > 1 && m <= kSplitMaxRows && n >= 32) {
    sgemm_split_columns(team, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (team > 1 && work >= kOpenmpWork) {
    on_openmp(team, [&] { sgemm_dnnl(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  } else if (team > 1 && m > kSplitMaxRows) {
    sgemm_split_rows(team, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    sgemm_dnnl(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

const char* blas_backend() {
  return "dnnl (eigen for m*n*k <= 32768; split over the team by columns for m <= 256, by rows above; oneDNN's own "
         "threads from 2^30 multiply-adds)";
}

void set_blas_threads(int n) {
  openblas_set_num_threads(n);
  set_team_threads(n);  // engram's own team; oneDNN on one thread
}

}  // namespace engram::core::kernels
