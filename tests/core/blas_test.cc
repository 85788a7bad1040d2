// kernels::sgemm and every named backend against a naive double-precision product: all four
// transpose combinations, row strides wider than the matrices, beta = 0 / 1 / 0.5, and shapes
// on both sides of the size dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "engram/core/error.h"
#include <fmt/format.h>

#include <cstdio>
#include <chrono>
#include <string>
#include <thread>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"
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

// The few-row kernels (gemv.cc) on their own: 1-13 rows (groups of 8 and ragged ones; the fp32 packed
// one also 51 and kPackedRows), widths
// with and without a vector tail, strides wider than the rows, beta 0 / 1 / 0.5, one and two
// threads (W's rows split over the team).
// mode 0 fp32, 1 bf16, 2 bf16 packed, 3 bf16 packed with a bias (added in place of beta * y),
// 4 fp32 packed, 5 fp32 packed with a bias
void check_small_m(int mode, int m, int n, int k, float beta, int threads) {
  const bool bf16 = mode >= 1 && mode <= 3, with_bias = mode == 3 || mode == 5;
  if (with_bias) beta = 0.0f;
  set_blas_threads(threads);
  Rng rng(m * 7919 + n * 31 + k + (bf16 ? 1 : 0));
  const int ldx = k + 5, ldw = k + 3, ldy = n + 2;
  std::vector<float> x(m * ldx), w(n * ldw), y(m * ldy), bias(n);
  for (auto* v : {&x, &w, &y, &bias})
    for (auto& e : *v) e = rng.uniform(-1, 1);
  std::vector<uint16_t> wb(w.size());
  to_bf16(w.data(), wb.data(), static_cast<int64_t>(w.size()));
  // Reference: W rounded to bf16 for the bf16 kernel; x as given (the kernel may round x to bf16
  // as well: allowed for by the tolerance, 2^-8 of the sum of |x w| terms).
  std::vector<double> want(m * n), scale(m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (int p = 0; p < k; ++p) {
        const double wv = bf16 ? from_bf16(wb[j * ldw + p]) : w[j * ldw + p];
        sum += x[i * ldx + p] * wv;
        mag += std::fabs(x[i * ldx + p] * wv);
      }
      want[i * n + j] = 0.75 * sum + (with_bias ? bias[j] : beta * y[i * ldy + j]);
      scale[i * n + j] = mag;
    }
  if (mode >= 2) {
    std::vector<float> dense(static_cast<size_t>(n) * k);  // W without its row padding
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) dense[static_cast<size_t>(j) * k + p] = w[j * ldw + p];
    const float* b = with_bias ? bias.data() : nullptr;
    std::vector<float> packed_f32(mode >= 4 ? static_cast<size_t>(packed_f32_size(n, k)) : 0);
    std::vector<uint16_t> packed_bf16(mode < 4 ? static_cast<size_t>(packed_bf16_size(n, k)) : 0);
    if (mode >= 4) pack_f32(dense.data(), n, k, packed_f32.data());
    else pack_bf16_pairs(dense.data(), n, k, packed_bf16.data());
    auto run = [&] {
      if (mode >= 4) sgemm_small_m_packed(m, n, k, 0.75f, x.data(), ldx, packed_f32.data(), beta, y.data(), ldy, b);
      else gemm_small_m_bf16_packed(m, n, k, 0.75f, x.data(), ldx, packed_bf16.data(), beta, y.data(), ldy, b);
    };
    if (!(mode >= 4 ? packed_f32_kernel() : packed_bf16_kernel())) {
      EXPECT_THROW(run(), engram::Error) << "built without AVX-512 / AVX512-BF16: the packed kernels refuse";
      set_blas_threads(1);
      return;
    }
    run();
  } else if (bf16) {
    gemm_small_m_bf16(m, n, k, 0.75f, x.data(), ldx, wb.data(), ldw, beta, y.data(), ldy);
  } else {
    sgemm_small_m(m, n, k, 0.75f, x.data(), ldx, w.data(), ldw, beta, y.data(), ldy);
  }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      const double tol = bf16 ? 0.75 * scale[i * n + j] / 256 + 1e-5 : 1e-4 * std::sqrt(k);
      ASSERT_NEAR(y[i * ldy + j], want[i * n + j], tol)
          << (mode == 5 ? "fp32 packed+bias" : mode == 4 ? "fp32 packed" : mode == 3 ? "bf16 packed+bias"
              : mode == 2 ? "bf16 packed" : bf16 ? "bf16" : "fp32") << " m=" << m << " n=" << n << " k=" << k << " beta=" << beta << " at " << i
          << "," << j;
    }
  set_blas_threads(1);
}

TEST(Blas, FewRowKernelsMatchANaiveProduct) {
  const int shapes[][2] = {{1, 64}, {37, 16}, {300, 48}, {513, 33}, {1001, 512}, {130, 7}};
  for (int mode : {0, 1, 2, 3, 4, 5})
    for (int m : {1, 2, 3, 4, 5, 6, 7, 8, 13})
      for (auto& s : shapes)
        for (float beta : {0.0f, 1.0f, 0.5f}) check_small_m(mode, m, s[0], s[1], beta, 1);
  for (int mode : {0, 1, 2, 3, 4, 5})
    for (int m : {1, 5}) check_small_m(mode, m, 1001, 512, 0.5f, 2);
  // The fp32 packed kernel serves weight_product up to kPackedRows rows (groups of 6 and a ragged one).
  for (int mode : {4, 5})
    for (int m : {51, kPackedRows})
      for (int threads : {1, 2}) check_small_m(mode, m, 300, 48, 0.5f, threads);
}

// The packed layout: blocks of kPackCols outputs, each [ceil(k/2), kPackCols, 2], zero padded.
TEST(Blas, PackedBf16LayoutPairsInputsPerOutput) {
  const int n = 70, k = 5;  // two blocks (the second holds 6 outputs), three input pairs (the last half empty)
  std::vector<float> w(n * k);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p) w[j * k + p] = static_cast<float>(j * 8 + p);  // exact in bf16
  ASSERT_EQ(packed_bf16_size(n, k), 2 * 3 * kPackCols * 2 + bf16_dnnl_weights_size(n, k));
  std::vector<uint16_t> packed(packed_bf16_size(n, k));
  pack_bf16_pairs(w.data(), n, k, packed.data());
  auto at = [&](int block, int pair, int col, int half) {
    return from_bf16(packed[((block * 3 + pair) * kPackCols + col) * 2 + half]);
  };
  EXPECT_EQ(at(0, 0, 0, 1), w[0 * k + 1]);
  EXPECT_EQ(at(0, 1, 63, 0), w[63 * k + 2]);
  EXPECT_EQ(at(1, 2, 5, 0), w[69 * k + 4]);
  EXPECT_EQ(at(1, 2, 5, 1), 0.0f) << "k padded to an even count";
  EXPECT_EQ(at(1, 0, 6, 0), 0.0f) << "outputs padded to whole blocks";
}

// gemm_bf16_reordered (batched decoding on the packed copy's oneDNN part) against a double sum of
// the bf16-rounded operands: ragged shapes, beta or a bias (added in the primitive), a row stride
// past n, one and two threads.
TEST(Blas, ReorderedBf16ProductSumsTheRoundedOperands) {
  if (!bf16_matmul_available()) {
    std::printf("SKIPPED: oneDNN has no bf16 matmul for this CPU\n");
    return;
  }
  for (int threads : {1, 2}) {
    set_blas_threads(threads);
    for (const auto& [m, n, k] : {std::tuple{9, 70, 5}, {64, 300, 64}, {70, 130, 129}})
      for (float beta : {0.0f, 0.5f, -1.0f})  // -1: beta 0 and a bias
        for (int pad : {0, 3}) {  // y dense, as weight_product passes it, and with a row stride past n
          Rng rng(m * 31 + n + k);
          const int ldx = k + 2, ldy = n + pad;
          std::vector<float> x(static_cast<size_t>(m) * ldx), w(static_cast<size_t>(n) * k), y0(static_cast<size_t>(m) * ldy);
          for (auto* v : {&x, &w, &y0})
            for (auto& e : *v) e = rng.uniform(-1, 1);
          std::vector<uint16_t> plain(w.size()), packed(packed_bf16_size(n, k));
          to_bf16(w.data(), plain.data(), static_cast<int64_t>(w.size()));
          pack_bf16_pairs(w.data(), n, k, packed.data());
          const uint16_t* reordered = packed_bf16_dnnl(packed.data(), n, k);
          ASSERT_NE(reordered, nullptr) << "oneDNN's copy missing from the packed weights";
          std::vector<float> y = y0, bias(static_cast<size_t>(n));
          for (auto& e : bias) e = rng.uniform(-1, 1);
          const bool biased = beta < 0.0f;
          if (biased) beta = 0.0f;
          gemm_bf16_reordered(m, n, k, x.data(), ldx, plain.data(), k, reordered, beta, y.data(), ldy,
                              biased ? bias.data() : nullptr);
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < ldy; ++j) {
              const size_t at = static_cast<size_t>(i) * ldy + j;
              if (j >= n) {
                ASSERT_EQ(y[at], y0[at]) << "past n";
                continue;
              }
              double want = biased ? bias[static_cast<size_t>(j)] : beta * y0[at];
              for (int p = 0; p < k; ++p)
                want += double(from_bf16(to_bf16(x[static_cast<size_t>(i) * ldx + p]))) * from_bf16(plain[static_cast<size_t>(j) * k + p]);
              ASSERT_NEAR(y[at], want, 1e-5 * k) << "m=" << m << " n=" << n << " k=" << k << " beta=" << beta
                                                  << " threads=" << threads << " at " << i << "," << j;
            }
        }
  }
  set_blas_threads(1);
}

// The fp32 packed layout: blocks of kPackCols outputs, each [k, kPackCols], zero padded.
TEST(Blas, PackedF32LayoutPutsOutputsSideBySide) {
  const int n = 70, k = 5;  // two blocks, the second holding 6 outputs
  std::vector<float> w(n * k);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p) w[j * k + p] = static_cast<float>(j * 8 + p);
  ASSERT_EQ(packed_f32_size(n, k), 2 * k * kPackCols);
  std::vector<float> packed(packed_f32_size(n, k), -1.0f);
  pack_f32(w.data(), n, k, packed.data());
  auto at = [&](int block, int p, int col) { return packed[(block * k + p) * kPackCols + col]; };
  EXPECT_EQ(at(0, 1, 0), w[0 * k + 1]);
  EXPECT_EQ(at(0, 2, 63), w[63 * k + 2]);
  EXPECT_EQ(at(1, 4, 5), w[69 * k + 4]);
  EXPECT_EQ(at(1, 0, 6), 0.0f) << "outputs padded to whole blocks";
}

// Round to nearest, ties to even; NaN stays NaN, infinities and exact values survive the round trip.
TEST(Blas, Bf16RoundingIsNearestEven) {
  EXPECT_EQ(to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(from_bf16(to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(from_bf16(to_bf16(-2.5f)), -2.5f);
  EXPECT_EQ(from_bf16(to_bf16(1.0f + 0.7f / 128)), 1.0f + 1.0f / 128);  // nearer the upper neighbour
  const float tie_even = 1.0f + 0.5f / 128;  // halfway between 1 and 1 + 1/128: to 1 (even)
  EXPECT_EQ(from_bf16(to_bf16(tie_even)), 1.0f);
  // Halfway between 1 + 1/128 (odd last bit) and 1 + 2/128 (even): up to the even one.
  EXPECT_EQ(from_bf16(to_bf16(1.0f + 3.0f / 256)), 1.0f + 2.0f / 128);
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::nanf("")))));
  EXPECT_EQ(from_bf16(to_bf16(INFINITY)), INFINITY);
  EXPECT_EQ(from_bf16(to_bf16(-INFINITY)), -INFINITY);
  // 0.1f = 0x3DCCCCCD: the dropped half 0xCCCD is above 0x8000, so it rounds up to 0x3DCD
  // = 0.10009765625 (truncation would give 0x3DCC = 0.099609375).
  EXPECT_EQ(to_bf16(0.1f), 0x3DCD);
  EXPECT_EQ(from_bf16(to_bf16(0.1f)), 0.10009765625f);
}

// The bf16 training product: op(A) and op(B) rounded to bf16, sums in fp32. Against a naive
// double product of the rounded operands it agrees to fp32 summation error; against the fp32
// operands it does not (the rounding is real). Inside a Bf16Products scope sgemm() takes it, on
// the caller and in the parts the caller's team runs; a weight changed between two scopes is
// rounded afresh.
struct Bf16Case {
  int m, n, k;
  bool ta, tb;
  float beta;
};
// The largest |C - want| over C, for want from the bf16-rounded (true) or the fp32 operands.
double bf16_error(const Bf16Case& s, const std::vector<float>& a, int lda, const std::vector<float>& b, int ldb,
                  const std::vector<float>& c0, const std::vector<float>& c, int ldc, bool rounded) {
  auto r = [&](float v) { return rounded ? double(from_bf16(to_bf16(v))) : double(v); };
  double worst = 0;
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int p = 0; p < s.k; ++p)
        sum += r(s.ta ? a[p * lda + i] : a[i * lda + p]) * r(s.tb ? b[j * ldb + p] : b[p * ldb + j]);
      const double want = 0.75 * sum + s.beta * c0[i * ldc + j];
      worst = std::max(worst, std::fabs(c[i * ldc + j] - want));
    }
  return worst;
}

TEST(Blas, Bf16ProductsRoundTheOperandsAndSumInFp32) {
  if (!bf16_matmul_available()) {
    std::printf("SKIPPED: oneDNN has no bf16 matmul for this CPU\n");
    return;
  }
  for (int threads : {1, 2}) {
    set_blas_threads(threads);
    for (const Bf16Case& s : {Bf16Case{33, 65, 70, false, false, 0.0f}, {64, 1536, 96, false, true, 1.0f},
                              {300, 40, 128, true, false, 0.5f}, {17, 90, 200, true, true, 1.0f},
                              {512, 48, 64, false, true, 0.0f}}) {
      Rng rng(s.m * 7 + s.n);
      const int ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k, br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
      const int lda = ac + 3, ldb = bc + 2, ldc = s.n + 1;
      std::vector<float> a(ar * lda), b(br * ldb), c0(s.m * ldc);
      for (auto* v : {&a, &b, &c0})
        for (auto& x : *v) x = rng.uniform(-1, 1);
      const double tol = 1e-5 * s.k;
      std::vector<float> c = c0;
      sgemm_bf16(s.ta, s.tb, s.m, s.n, s.k, 0.75f, a.data(), lda, b.data(), ldb, s.beta, c.data(), ldc);
      const std::string what = fmt::format("m={} n={} k={} ta={} tb={} beta={} threads={}", s.m, s.n, s.k, s.ta, s.tb,
                                           s.beta, threads);
      EXPECT_LT(bf16_error(s, a, lda, b, ldb, c0, c, ldc, true), tol) << what;
      EXPECT_GT(bf16_error(s, a, lda, b, ldb, c0, c, ldc, false), 10 * tol) << what << ": not rounded to bf16";
      // sgemm() inside a scope, B listed as a weight: the same product.
      std::vector<float> c2 = c0;
      {
        const Bf16Products scope(true, b.data(), static_cast<int64_t>(b.size()));
        sgemm(s.ta, s.tb, s.m, s.n, s.k, 0.75f, a.data(), lda, b.data(), ldb, s.beta, c2.data(), ldc);
      }
      EXPECT_LT(bf16_error(s, a, lda, b, ldb, c0, c2, ldc, true), tol) << what << " (sgemm in a scope)";
    }
  }
  set_blas_threads(1);
}

TEST(Blas, Bf16ScopeReachesTeamPartsAndRoundsAChangedWeightAfresh) {
  if (!bf16_matmul_available()) {
    std::printf("SKIPPED: oneDNN has no bf16 matmul for this CPU\n");
    return;
  }
  const Bf16Case s{64, 96, 128, false, true, 0.0f};
  Rng rng(5);
  std::vector<float> a(s.m * s.k), w(s.n * s.k), c0(s.m * s.n, 0.0f);
  for (auto* v : {&a, &w})
    for (auto& x : *v) x = rng.uniform(-1, 1);
  const double tol = 1e-5 * s.k;
  // Part 1 of a two-thread team's job, an sgemm() of its own, in bf16 on the helper too. A sleeping
  // helper's part runs on the caller until the helper is scheduled again (parallel_test.cc): call
  // until part 1 has run on the helper 20 times (or 20 s passed).
  set_blas_threads(2);
  const std::thread::id caller = std::this_thread::get_id();
  int on_helper = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (on_helper < 20 && std::chrono::steady_clock::now() < deadline) {
    std::vector<float> c1 = c0;
    bool helper = false;
    {
      const Bf16Products scope(true);
      on_team(2, [&](int t, int) {
        if (t == 0) return;
        helper = std::this_thread::get_id() != caller;
        sgemm(false, true, s.m, s.n, s.k, 0.75f, a.data(), s.k, w.data(), s.k, 0.0f, c1.data(), s.n);
      });
    }
    if (!helper) continue;
    ++on_helper;
    ASSERT_LT(bf16_error(s, a, s.k, w, s.k, c0, c1, s.n, true), tol) << "a helper's part ran in fp32";
  }
  EXPECT_EQ(on_helper, 20) << "parts seldom or never ran on a helper";
  set_blas_threads(1);
  // W is cached while a scope lists it; changed after that scope, the next scope sees the change.
  std::vector<float> c = c0;
  {
    const Bf16Products scope(true, w.data(), static_cast<int64_t>(w.size()));
    sgemm(false, true, s.m, s.n, s.k, 0.75f, a.data(), s.k, w.data(), s.k, 0.0f, c.data(), s.n);
  }
  for (auto& x : w) x = -x + 0.25f;
  {
    const Bf16Products scope(true, w.data(), static_cast<int64_t>(w.size()));
    sgemm(false, true, s.m, s.n, s.k, 0.75f, a.data(), s.k, w.data(), s.k, 0.0f, c.data(), s.n);
  }
  EXPECT_LT(bf16_error(s, a, s.k, w, s.k, c0, c, s.n, true), tol) << "a stale bf16 copy of the changed weight";
  // Outside any scope: fp32 again.
  sgemm(false, true, s.m, s.n, s.k, 0.75f, a.data(), s.k, w.data(), s.k, 0.0f, c.data(), s.n);
  EXPECT_LT(bf16_error(s, a, s.k, w, s.k, c0, c, s.n, false), tol);
}

TEST(Blas, ZeroInnerDimensionScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1, 1.5f, 2}));
}

}  // namespace
}  // namespace engram::core::kernels
