// kernels::sgemm and every named backend against a naive double-precision product: all four
// transpose combinations, row strides wider than the matrices, beta = 0 / 1 / 0.5, and shapes
// on both sides of the size dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engram/core/kernels/blas.h"
#include "engram/core/rng.h"

namespace engram::core::kernels {
namespace {

using Gemm = void (*)(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int);

// Three blocks whatever the thread setting (the split itself, not the dispatch).
void sgemm_split_columns_3(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                           int ldb, float beta, float* c, int ldc) {
  sgemm_split_columns(3, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void check(Gemm gemm, const char* name, int m, int n, int k, bool ta, bool tb, float beta) {
  Rng rng(m * 131 + n * 17 + k);
  const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const int lda = ac + 3, ldb = bc + 2, ldc = n + 1;
  std::vector<float> a(ar * lda), b(br * ldb), c(m * ldc);
  for (auto* v : {&a, &b, &c})
    for (auto& x : *v) x = rng.uniform(-1, 1);
  std::vector<double> want(m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      want[i * n + j] = 0.75 * s + beta * c[i * ldc + j];
    }
  gemm(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) worst = std::max(worst, std::fabs(c[i * ldc + j] - want[i * n + j]));
  EXPECT_LT(worst, 1e-4 * std::sqrt(k)) << name << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta
                                         << " tb=" << tb << " beta=" << beta;
}

TEST(Blas, EveryBackendMatchesANaiveProduct) {
  const int shapes[][3] = {{1, 20, 64}, {3, 5, 7}, {16, 48, 40}, {33, 65, 70}, {64, 96, 128}};
  for (auto [gemm, name] : {std::pair<Gemm, const char*>{sgemm, "sgemm"}, {sgemm_openblas, "openblas"},
                            {sgemm_dnnl, "dnnl"}, {sgemm_eigen, "eigen"}})
    for (auto& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (float beta : {0.0f, 1.0f, 0.5f}) check(gemm, name, s[0], s[1], s[2], ta, tb, beta);
}

// With two threads, skinny products above the split threshold are split by columns (odd column
// counts leave a ragged last block); a product inside a caller's parallel region is not.
TEST(Blas, ColumnSplitOnTwoThreadsMatchesANaiveProduct) {
  set_blas_threads(2);
  const int shapes[][3] = {{64, 1536, 512}, {16, 387, 128}, {5, 1001, 300}, {256, 100, 20}};
  for (auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) check(sgemm, "sgemm split", s[0], s[1], s[2], ta, tb, 0.5f);
  check(sgemm_split_columns_3, "split 3 blocks", 16, 70, 300, false, true, 1.0f);
  set_blas_threads(1);
  EXPECT_EQ(blas_team_size(), 1);
}

TEST(Blas, ZeroInnerDimensionScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1, 1.5f, 2}));
}

}  // namespace
}  // namespace engram::core::kernels
