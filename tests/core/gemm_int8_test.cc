// kernels::gemm_int8_packed (kernels/gemm_int8.h) against a double-precision product of the fp32
// operands: every output within the worst-case quantization bound the header derives, and the
// error's root mean square near the random-walk size of rounding errors (Δ²/12 per term), so a
// scale off by a factor or a missing zero-point term fails; the scalar, VNNI, AVX2 and oneDNN
// kernels give bit-equal outputs; bias, beta, zero rows, non-finite rows and bad shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"
#include "engram/core/rng.h"

namespace engram::core::kernels {
namespace {

struct Case {
  int m, n, k;
};
// Rows on both sides of the 6-row groups; outputs past one block and ragged; K not a multiple of 4.
// From kInt8DnnlRows rows the product runs on oneDNN where it can (150: past its 64-row chunks).
const Case kCases[] = {{1, 64, 32},   {3, 70, 37},   {6, 130, 256}, {7, 5, 3},
                       {13, 200, 301}, {16, 100, 64}, {64, 257, 512}, {150, 70, 129}};

struct Operands {
  std::vector<float> x, w, bias;
  std::vector<int8_t> packed;
};

Operands make(const Case& c, uint64_t seed) {
  Rng rng(seed);
  Operands o;
  o.x.resize(static_cast<size_t>(c.m) * c.k);
  o.w.resize(static_cast<size_t>(c.n) * c.k);
  o.bias.resize(c.n);
  for (auto& v : o.x) v = static_cast<float>(rng.normal());
  for (auto& v : o.w) v = static_cast<float>(0.1 * rng.normal());
  for (auto& v : o.bias) v = rng.uniform(-1, 1);
  o.packed.resize(packed_int8_size(c.n, c.k));
  pack_int8(o.w.data(), c.n, c.k, o.packed.data());
  return o;
}

float row_max(const float* v, int k) {
  float most = 0;
  for (int p = 0; p < k; ++p) most = std::max(most, std::fabs(v[p]));
  return most;
}

TEST(GemmInt8, WithinTheQuantizationBoundOfTheFp32Product) {
  for (const Case& c : kCases) {
    const Operands o = make(c, c.m * 7919 + c.n * 31 + c.k);
    std::vector<float> y(static_cast<size_t>(c.m) * c.n);
    gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), 0.0f, y.data(), c.n, o.bias.data());
    double sq_err = 0, sq_expected = 0;
    for (int i = 0; i < c.m; ++i) {
      const float* xi = o.x.data() + static_cast<size_t>(i) * c.k;
      const double t = row_max(xi, c.k) / 127.0;
      for (int j = 0; j < c.n; ++j) {
        const float* wj = o.w.data() + static_cast<size_t>(j) * c.k;
        const double s = row_max(wj, c.k) / 127.0;
        double want = o.bias[j], bound = 0, var = 0, mass = 0;
        for (int p = 0; p < c.k; ++p) {
          want += double(xi[p]) * wj[p];
          bound += std::fabs(xi[p]) * s / 2 + std::fabs(wj[p]) * t / 2 + t * s / 4;
          var += (double(xi[p]) * xi[p] * s * s + double(wj[p]) * wj[p] * t * t) / 12;
          mass += std::fabs(double(xi[p]) * wj[p]);
        }
        const double err = y[static_cast<size_t>(i) * c.n + j] - want;
        // fp32 rounding of the scaling and of the bias: a few ulps of the sums' size.
        EXPECT_LE(std::fabs(err), bound + 1e-6 * (mass + std::fabs(o.bias[j])))
            << "m=" << c.m << " n=" << c.n << " k=" << c.k << " i=" << i << " j=" << j;
        sq_err += err * err;
        sq_expected += var;
      }
    }
    // Rounding errors of independent terms add as a random walk: the measured mean square lies
    // near the predicted one (ratio about 1); a wrong scale or zero point makes it far larger.
    const double ratio = std::sqrt(sq_err / sq_expected);
    EXPECT_LT(ratio, 1.25) << "m=" << c.m << " n=" << c.n << " k=" << c.k;
    EXPECT_GT(ratio, 0.7) << "m=" << c.m << " n=" << c.n << " k=" << c.k;
  }
}

// Every kernel this CPU runs (kAuto always) against the scalar loops. The second pass puts every
// quantized value at ±127 (x and W of one magnitude, random signs): the AVX2 kernel's int16 pairs
// then reach their largest, 2 · 127 · 127; pairs of u · q (u up to 255) would saturate there.
TEST(GemmInt8, EveryKernelGivesTheScalarOutputs) {
  std::vector<Int8Kernel> kernels{Int8Kernel::kAuto};
  if (int8_vnni_kernel()) kernels.push_back(Int8Kernel::kVnni);
  if (int8_avx2_kernel()) kernels.push_back(Int8Kernel::kAvx2);
  if (int8_dnnl_available()) kernels.push_back(Int8Kernel::kDnnl);
  if (int8_vnni_kernel()) {
    EXPECT_TRUE(int8_dnnl_available()) << "oneDNN has no int8 matmul on a CPU with AVX-512 VNNI";
  }
  for (int extreme = 0; extreme < 2; ++extreme) {
    for (const Case& c : kCases) {
      Operands o = make(c, c.m + c.n + c.k);
      if (extreme) {
        for (float& v : o.x) v = v < 0 ? -1.0f : 1.0f;
        for (float& v : o.w) v = v < 0 ? -0.5f : 0.5f;
        pack_int8(o.w.data(), c.n, c.k, o.packed.data());
      }
      for (int mode = 0; mode < 3; ++mode) {  // 0: no bias, beta 0; 1: bias; 2: beta 0.5 onto y
        const float beta = mode == 2 ? 0.5f : 0.0f;
        const float* bias = mode == 1 ? o.bias.data() : nullptr;
        const int ldy = c.n + 3;
        std::vector<float> scalar(static_cast<size_t>(c.m) * ldy, 0.25f);
        gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), beta, scalar.data(), ldy, bias,
                         Int8Kernel::kScalar);
        for (const Int8Kernel kernel : kernels) {
          std::vector<float> y(scalar.size(), 0.25f);
          gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), beta, y.data(), ldy, bias, kernel);
          EXPECT_EQ(0, std::memcmp(scalar.data(), y.data(), scalar.size() * sizeof(float)))
              << "m=" << c.m << " n=" << c.n << " k=" << c.k << " mode=" << mode << " kernel=" << int(kernel)
              << " extreme=" << extreme;
        }
      }
    }
  }
}

// beta adds beta * y to the product and leaves the row stride's gap alone; split over two
// threads, the outputs are those of one thread.
TEST(GemmInt8, BetaStrideAndThreadSplit) {
  for (const Case c : {Case{5, 700, 200}, Case{40, 300, 200}}) {  // 40 rows: oneDNN's row split where available
    const Operands o = make(c, 5);
    const int ldy = c.n + 2;
    std::vector<float> plain(static_cast<size_t>(c.m) * ldy, 0.0f), with_beta(plain.size());
    for (size_t i = 0; i < with_beta.size(); ++i) with_beta[i] = static_cast<float>(i % 13) - 6.0f;
    const std::vector<float> before = with_beta;
    set_blas_threads(1);
    gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), 0.0f, plain.data(), ldy);
    gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), 0.5f, with_beta.data(), ldy);
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < ldy; ++j) {
        const size_t at = static_cast<size_t>(i) * ldy + j;
        if (j >= c.n) EXPECT_EQ(with_beta[at], before[at]);
        else EXPECT_NEAR(with_beta[at], plain[at] + 0.5f * before[at], 1e-5f * (1 + std::fabs(plain[at])));
      }
    set_blas_threads(2);
    std::vector<float> two(plain.size(), 0.0f);
    gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), 0.0f, two.data(), ldy);
    set_blas_threads(1);
    EXPECT_EQ(0, std::memcmp(plain.data(), two.data(), plain.size() * sizeof(float))) << "m=" << c.m;
  }
}

// A zero row of x gives the bias exactly; a row with a NaN or an infinity gives NaN (as fp32
// would), its neighbours unharmed.
TEST(GemmInt8, ZeroAndNonFiniteRows) {
  const Case c{3, 70, 37};
  Operands o = make(c, 3);
  std::fill(o.x.begin(), o.x.begin() + c.k, 0.0f);
  o.x[2 * c.k + 5] = INFINITY;
  std::vector<float> y(static_cast<size_t>(c.m) * c.n);
  gemm_int8_packed(c.m, c.n, c.k, o.x.data(), c.k, o.packed.data(), 0.0f, y.data(), c.n, o.bias.data());
  for (int j = 0; j < c.n; ++j) {
    EXPECT_EQ(y[j], o.bias[j]);
    EXPECT_TRUE(std::isfinite(y[c.n + j]));
    EXPECT_TRUE(std::isnan(y[2 * c.n + j]));
  }
}

TEST(GemmInt8, BadInputIsAnError) {
  std::vector<float> w(8, 1.0f);
  std::vector<int8_t> packed(packed_int8_size(2, 4));
  w[3] = NAN;
  EXPECT_THROW(pack_int8(w.data(), 2, 4, packed.data()), engram::Error);
  std::vector<float> x(4, 1.0f), y(2);
  EXPECT_THROW(gemm_int8_packed(1, 2, kInt8MaxK + 1, x.data(), 4, packed.data(), 0.0f, y.data(), 2), engram::Error);
  if (!int8_vnni_kernel()) {
    EXPECT_THROW(gemm_int8_packed(1, 2, 4, x.data(), 4, packed.data(), 0.0f, y.data(), 2, nullptr, Int8Kernel::kVnni),
                 engram::Error);
  }
  if (!int8_avx2_kernel()) {
    EXPECT_THROW(gemm_int8_packed(1, 2, 4, x.data(), 4, packed.data(), 0.0f, y.data(), 2, nullptr, Int8Kernel::kAvx2),
                 engram::Error);
  }
}

}  // namespace
}  // namespace engram::core::kernels
