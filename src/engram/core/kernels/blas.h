// The one matrix-multiply entry point. Row-major: C[m,n] = alpha * op(A)[m,k] op(B)[k,n] + beta * C.
// lda/ldb/ldc are row strides of the matrices as stored. sgemm() dispatches by problem size to
// the backend measured fastest here (bench/RESULTS.md: oneDNN, Eigen for tiny products); the
// named backends stay callable so the benchmark compares them side by side.
#pragma once

namespace engram::core::kernels {

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

void sgemm_openblas(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                    int lda, const float* b, int ldb, float beta, float* c, int ldc);
void sgemm_dnnl(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc);
void sgemm_eigen(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc);

// Threads a product started here may use (1 inside an OpenMP parallel region).
int blas_team_size();
// C's columns split into one block per thread, each a single-threaded oneDNN sgemm (blas_split.cc).
void sgemm_split_columns(int threads, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);

// Name of the backend sgemm() uses, for benchmark and log lines.
const char* blas_backend();
// Threads the BLAS may use (the caller's own threads must not oversubscribe the cores). Sets
// OpenBLAS's pool and the calling thread's OpenMP team size (oneDNN); call it in each thread
// that multiplies (e.g. every serving worker). Unset, oneDNN uses OpenMP's default (all cores).
void set_blas_threads(int n);

}  // namespace engram::core::kernels
