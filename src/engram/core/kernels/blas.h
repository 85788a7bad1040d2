// The one matrix-multiply entry point. Row-major: C[m,n] = alpha * op(A)[m,k] op(B)[k,n] + beta * C.
// lda/ldb/ldc are row strides of the matrices as stored. sgemm() dispatches by problem size to
// the backend measured fastest here (bench/RESULTS.md: oneDNN, Eigen for tiny products); the
// named backends stay callable so the benchmark compares them side by side.
#pragma once

#include <cstdint>

namespace engram::core::kernels {

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

void sgemm_openblas(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                    int lda, const float* b, int ldb, float beta, float* c, int ldc);
void sgemm_dnnl(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc);
void sgemm_eigen(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc);

// With several threads: products of at least kSplitWork multiply-adds are split over the calling
// thread's team (kernels::sgemm, gemm_bf16); from kOpenmpWork on (several milliseconds of work)
// oneDNN runs them on its own OpenMP threads instead (on_openmp, parallel.h), which beat two
// single-threaded halves there (bench/RESULTS.md).
constexpr int64_t kSplitWork = int64_t{1} << 18;
constexpr int64_t kOpenmpWork = int64_t{1} << 30;

// Threads a product started here may use: the calling thread's team (parallel.h; 1 on a team's
// helper, inside a part of the caller's own job and inside an OpenMP parallel region).
int blas_team_size();
// C's columns, or C's rows, split into one block per thread of the team, each a single-threaded
// oneDNN sgemm (blas_split.cc).
void sgemm_split_columns(int threads, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);
void sgemm_split_rows(int threads, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                      int lda, const float* b, int ldb, float beta, float* c, int ldc);

// y[m, n] = alpha * x[m, k] · W[n, k]ᵀ + beta * y for a few rows of x (gemv.cc): streams W once
// per 8 rows of x, its rows split over the calling thread's team. sgemm() sends x·Wᵀ products of up to 4
// rows here. The bf16 variant reads W rounded to bf16 (to_bf16) and rounds x's rows to bf16,
// widening both to fp32 for the FMAs (sums in fp32): weight_product (ops/matmul.h) uses it for
// few-row bf16 products on a weight without a packed copy (the packed kernel below is faster).
constexpr int kSmallRows = 8;
void sgemm_small_m(int m, int n, int k, float alpha, const float* x, int ldx, const float* w, int ldw, float beta,
                   float* y, int ldy);
void gemm_small_m_bf16(int m, int n, int k, float alpha, const float* x, int ldx, const uint16_t* w, int ldw,
                       float beta, float* y, int ldy);
// The same few-row bf16 product on W packed by pack_bf16_pairs (packed_bf16_size(n, k) values):
// blocks of kPackCols outputs, each [ceil(k/2), kPackCols, 2], so vdpbf16ps sums straight into
// the output lanes. Only where packed_bf16_kernel() (AVX512-BF16 compiled in); else an Error.
constexpr int kPackCols = 64;
// Where oneDNN has a bf16 matmul (bf16_matmul_available()), the blocks are followed by W in bf16
// once more, in the weight layout that matmul picks (gemm_bf16.cc): packed_bf16_dnnl gives that
// copy (nullptr where there is none) for gemm_bf16_reordered.
int64_t packed_bf16_size(int n, int k);
void pack_bf16_pairs(const float* w, int n, int k, uint16_t* out);
const uint16_t* packed_bf16_dnnl(const uint16_t* packed, int n, int k);
bool packed_bf16_kernel();
// `bias` (n values, or null) is added to every row of alpha * x · Wᵀ in place of beta * y.
void gemm_small_m_bf16_packed(int m, int n, int k, float alpha, const float* x, int ldx, const uint16_t* packed,
                              float beta, float* y, int ldy, const float* bias = nullptr);
// Rows up to which weight_product (ops/matmul.h) multiplies by a packed fp32 copy of W instead of
// sgemm(): each of W's 64-output blocks is read from memory once and reused from cache for every
// group of 6 rows, so the kernel stays near the FMA peak well past kSmallRows; oneDNN catches up
// around 128 rows (the crossover measured: bench/RESULTS.md).
constexpr int kPackedRows = 64;
// The few-row fp32 product on W packed by pack_f32 (packed_f32_size(n, k) values): blocks of
// kPackCols outputs, each [k, kPackCols], so broadcast-x FMAs sum straight into the output lanes
// and each block is one contiguous stream. Only where packed_f32_kernel() (AVX-512 compiled in);
// else an Error. `bias` as for the bf16 packed kernel.
int64_t packed_f32_size(int n, int k);
void pack_f32(const float* w, int n, int k, float* out);
bool packed_f32_kernel();
void sgemm_small_m_packed(int m, int n, int k, float alpha, const float* x, int ldx, const float* packed, float beta,
                          float* y, int ldy, const float* bias = nullptr);
// y[m, n] = x[m, k] · W[n, k]ᵀ + beta * y with x rounded to bf16, W bf16, fp32 results: oneDNN's
// matmul (gemm_bf16.cc), for products of more rows than gemm_small_m_bf16 takes.
void gemm_bf16(int m, int n, int k, const float* x, int ldx, const uint16_t* w, int ldw, float beta, float* y,
               int ldy);
// The same product on W's copy in oneDNN's own weight layout (packed_bf16_dnnl; `w` [N, K] plain,
// row stride ldw, for a shape whose primitive wants another layout): one cached primitive per
// shape and thread. The sums may run in another order than gemm_bf16's. A bias [N] (beta 0) is
// added in the primitive (y is not written twice).
void gemm_bf16_reordered(int m, int n, int k, const float* x, int ldx, const uint16_t* w, int ldw,
                         const uint16_t* reordered, float beta, float* y, int ldy, const float* bias = nullptr);
// oneDNN's part of the packed copy: its size in bf16 values (0 where oneDNN has no bf16 matmul; room
// for 64-byte alignment included) and the reorder of W [N, K] rounded to bf16 into it.
int64_t bf16_dnnl_weights_size(int n, int k);
void pack_bf16_dnnl(const float* w, int n, int k, uint16_t* out);
// Mixed-precision training products: C = alpha * op(A) op(B) + beta * C with op(A) and op(B)
// rounded to bf16 and the sums, alpha, beta and C in fp32 (oneDNN's bf16 matmul, AVX512-BF16 or
// AMX). Same contract as sgemm(). Only where bf16_matmul_available(); else an Error.
void sgemm_bf16(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                const float* b, int ldb, float beta, float* c, int ldc);
// Whether oneDNN has a bf16 matmul for this CPU (probed once).
bool bf16_matmul_available();
// While a Bf16Products scope is open on a thread (and in the team parts that thread starts),
// sgemm() sends its products to sgemm_bf16, all but the tiny ones Eigen takes and the few-row
// x·Wᵀ ones gemv.cc streams: train.precision bf16 opens one around each batch's forward and
// backward. Operands inside [weights, weights + weights_count) (the model's parameters, which do
// not change while the scope is open) are rounded once per scope and thread, not once per product.
struct Bf16Scope {
  const float* weights = nullptr;
  int64_t weights_count = 0;
  uint64_t generation = 0;  // distinct for every scope opened in the process
};
const Bf16Scope* bf16_products();  // the open scope, or nullptr: fp32 products
class Bf16Products {
 public:
  explicit Bf16Products(bool on, const float* weights = nullptr, int64_t weights_count = 0);
  ~Bf16Products();
  Bf16Products(const Bf16Products&) = delete;
  Bf16Products& operator=(const Bf16Products&) = delete;

 private:
  Bf16Scope scope_;
  const Bf16Scope* was_;
};
// fp32 -> bf16 rounding to nearest even (NaN stays NaN), and back (exact).
uint16_t to_bf16(float v);
float from_bf16(uint16_t v);
void to_bf16(const float* x, uint16_t* y, int64_t n);

// Name of the backend sgemm() uses, for benchmark and log lines.
const char* blas_backend();
// Threads the BLAS may use (the caller's own threads must not oversubscribe the cores). Sets
// OpenBLAS's pool and the calling thread's team (parallel.h: engram's products and loops split
// over it; oneDNN itself runs on one thread); call it in each thread that multiplies (e.g. every
// serving worker). Unset, the team takes OpenMP's default (OMP_NUM_THREADS, or all cores).
void set_blas_threads(int n);

}  // namespace engram::core::kernels
