// int8 products (gemm_int8.h has the maths): W's packing, x's quantization, the portable scalar
// kernel, and the split over the team. The VNNI and AVX2 kernels are gemm_int8_vnni.cc and
// gemm_int8_avx2.cc, chosen at run time.
// Dims: M rows of x, N outputs, K the shared width, KQ = ceil(K/4).
#include "engram/core/kernels/gemm_int8.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core::kernels {

namespace {

constexpr int64_t kBlockTail = int64_t{kPackCols} * 8;  // a block's scales (fp32) and 128·c_n (int32)

int64_t block_bytes(int kq) { return int64_t{kq} * kPackCols * 4 + kBlockTail; }

// The epilogue both kernels share, value for value: y = t s d (+ bias, or + beta y), with the
// same fused operations so that equal integer sums give bit-equal outputs.
inline float finish(int32_t d, float ts, float beta, float old, const float* bias, int j) {
  const float v = static_cast<float>(d);
  if (bias) return std::fma(v, ts, bias[j]);
  if (beta != 0.0f) return std::fma(old, beta, v * ts);
  return v * ts;
}

void blocks_scalar(int m, int n, int kq, const uint8_t* u, const float* t, const int8_t* packed, int64_t b0,
                   int64_t b1, float beta, float* y, int ldy, const float* bias) {
  const int ldu = kq * 4;
  for (int64_t b = b0; b < b1; ++b) {
    const int8_t* blk = packed + b * block_bytes(kq);
    const int8_t* tail = blk + int64_t{kq} * kPackCols * 4;
    float scale[kPackCols];
    int32_t zero[kPackCols];  // 128 c_n
    std::memcpy(scale, tail, sizeof scale);
    std::memcpy(zero, tail + sizeof scale, sizeof zero);
    const int j0 = static_cast<int>(b * kPackCols), valid = std::min(kPackCols, n - j0);
    for (int i = 0; i < m; ++i) {
      const uint8_t* ui = u + static_cast<int64_t>(i) * ldu;
      int32_t acc[kPackCols] = {};
      for (int p = 0; p < kq; ++p) {
        const int8_t* wp = blk + static_cast<int64_t>(p) * kPackCols * 4;
        for (int c = 0; c < kPackCols; ++c)
          for (int h = 0; h < 4; ++h) acc[c] += int32_t{ui[4 * p + h]} * int32_t{wp[c * 4 + h]};
      }
      float* yi = y + static_cast<int64_t>(i) * ldy + j0;
      for (int c = 0; c < valid; ++c)
        yi[c] = finish(acc[c] - zero[c], t[i] * scale[c], beta, beta != 0.0f ? yi[c] : 0.0f, bias ? bias + j0 : nullptr,
                       c);
    }
  }
}

int64_t blocks_size(int n, int k) {  // the kernel blocks' bytes, before oneDNN's copy
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  return blocks * block_bytes((k + 3) / 4);
}

// y [m, n] from oneDNN's integer sums of the same rows, held as int32 bit patterns in float
// storage: in y itself when beta == 0 (each output read before it is written, + bias where given),
// else in `d` (row stride ldd, another buffer) and added to beta · y. Each block's scales and zero
// points, then finish() as the kernels do.
void finish_rows(int m, int n, int kq, const float* d, int ldd, const float* t, const int8_t* packed, float beta,
                 float* y, int ldy, const float* bias) {
  ENGRAM_CHECK((beta == 0.0f) == (d == y && ldd == ldy) && (!bias || beta == 0.0f),
               "finish_rows: the sums sit in y exactly when beta is 0 (bias only then)");
  // Every block's scales and zero points side by side first [N], so that each row is one long
  // loop over its N outputs (read and written in order).
  thread_local std::vector<float> scale;
  thread_local std::vector<int32_t> zero;
  scale.resize(static_cast<size_t>(n));
  zero.resize(static_cast<size_t>(n));
  for (int j0 = 0, b = 0; j0 < n; j0 += kPackCols, ++b) {
    const int8_t* tail = packed + int64_t{b} * block_bytes(kq) + int64_t{kq} * kPackCols * 4;
    const int valid = std::min(kPackCols, n - j0);
    std::memcpy(scale.data() + j0, tail, sizeof(float) * valid);
    std::memcpy(zero.data() + j0, tail + sizeof(float) * kPackCols, sizeof(int32_t) * valid);
  }
  const float* s = scale.data();
  const int32_t* z = zero.data();
  // finish() of each output, written out per case so it vectorises. In place the loop reads and
  // writes through y alone: g++'s aliasing check of a second pointer d against y fails when they
  // are equal, and its scalar loop runs.
  for (int i = 0; i < m; ++i) {
    float* yi = y + static_cast<int64_t>(i) * ldy;
    const float ti = t[i];
    if (beta != 0.0f) {
      const float* di = d + static_cast<int64_t>(i) * ldd;
      for (int c = 0; c < n; ++c)
        yi[c] = std::fma(yi[c], beta, static_cast<float>(std::bit_cast<int32_t>(di[c]) - z[c]) * (ti * s[c]));
    } else if (bias) {
      for (int c = 0; c < n; ++c)
        yi[c] = std::fma(static_cast<float>(std::bit_cast<int32_t>(yi[c]) - z[c]), ti * s[c], bias[c]);
    } else {
      for (int c = 0; c < n; ++c) yi[c] = static_cast<float>(std::bit_cast<int32_t>(yi[c]) - z[c]) * (ti * s[c]);
    }
  }
}

}  // namespace

int64_t packed_int8_size(int n, int k) { return blocks_size(n, k) + int8_dnnl_weights_size(n, k); }

void pack_int8(const float* w, int n, int k, int8_t* out) {
  ENGRAM_CHECK(n > 0 && k > 0 && k <= kInt8MaxK, "pack_int8: W [{}, {}] (1 <= K <= {})", n, k, kInt8MaxK);
  const int kq = (k + 3) / 4;
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  std::memset(out, 0, static_cast<size_t>(packed_int8_size(n, k)));
  const bool dnnl = int8_dnnl_available();
  std::vector<int8_t> all(dnnl ? static_cast<size_t>(n) * k : 0);  // q [N, K] for oneDNN's copy
  std::vector<int8_t> row(static_cast<size_t>(k));
  for (int64_t b = 0; b < blocks; ++b) {
    int8_t* blk = out + b * block_bytes(kq);
    int8_t* tail = blk + int64_t{kq} * kPackCols * 4;
    for (int c = 0; c < kPackCols && b * kPackCols + c < n; ++c) {
      const int64_t j = b * kPackCols + c;
      const float* wj = w + j * k;
      int8_t* q = dnnl ? all.data() + j * k : row.data();
      float most = 0.0f;
      for (int p = 0; p < k; ++p) {
        ENGRAM_CHECK(std::isfinite(wj[p]), "pack_int8: W[{}, {}] = {} is not finite", j, p, wj[p]);
        most = std::max(most, std::fabs(wj[p]));
      }
      const float scale = most / 127.0f, inv = most > 0.0f ? 127.0f / most : 0.0f;
      int32_t sum = 0;
      for (int p = 0; p < k; ++p) {
        q[p] = static_cast<int8_t>(std::clamp(std::nearbyint(wj[p] * inv), -127.0f, 127.0f));
        sum += q[p];
      }
      for (int p = 0; p < k; ++p) blk[(static_cast<int64_t>(p / 4) * kPackCols + c) * 4 + p % 4] = q[p];
      const int32_t zero = 128 * sum;
      std::memcpy(tail + c * sizeof(float), &scale, sizeof scale);
      std::memcpy(tail + kPackCols * sizeof(float) + c * sizeof(int32_t), &zero, sizeof zero);
    }
  }
  if (dnnl) pack_int8_dnnl(all.data(), n, k, out + blocks_size(n, k));
}

void quantize_rows_u8(int m, int k, const float* x, int ldx, uint8_t* u, float* t) {
  const int ldu = (k + 3) / 4 * 4;
  for (int i = 0; i < m; ++i) {
    const float* row = x + static_cast<int64_t>(i) * ldx;
    uint8_t* ui = u + static_cast<int64_t>(i) * ldu;
    // The largest |x| by its bits: without the sign bit, finite floats order as their bit
    // patterns do, and every infinity or NaN lies above the largest finite one (an integer max,
    // which vectorises where a float max with NaN rules does not).
    uint32_t most_bits = 0;
    for (int p = 0; p < k; ++p) most_bits = std::max(most_bits, std::bit_cast<uint32_t>(row[p]) & 0x7FFFFFFFu);
    std::fill(ui + k, ui + ldu, uint8_t{128});
    if (most_bits >= 0x7F800000u || most_bits == 0) {  // non-finite: NaN outputs; all zero: zero outputs
      t[i] = most_bits != 0 ? std::nanf("") : 0.0f;
      std::fill(ui, ui + k, uint8_t{128});
      continue;
    }
    const float most = std::bit_cast<float>(most_bits);
    t[i] = most / 127.0f;
    const float inv = 127.0f / most;
    for (int p = 0; p < k; ++p)
      ui[p] = static_cast<uint8_t>(std::clamp(std::nearbyint(row[p] * inv), -127.0f, 127.0f) + 128.0f);
  }
}

bool int8_vnni_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vnni");
  return has;
#else
  return false;
#endif
}

bool int8_avx2_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

void gemm_int8_blocks(Int8Kernel kernel, int m, int n, int k, const uint8_t* u, const float* t, const int8_t* packed,
                      int64_t b0, int64_t b1, float beta, float* y, int ldy, const float* bias) {
  ENGRAM_CHECK(kernel != Int8Kernel::kVnni || int8_vnni_kernel(), "gemm_int8: this CPU lacks AVX-512 VNNI");
  ENGRAM_CHECK(kernel != Int8Kernel::kAvx2 || int8_avx2_kernel(), "gemm_int8: this CPU lacks AVX2");
  ENGRAM_CHECK(kernel != Int8Kernel::kDnnl, "gemm_int8_blocks: oneDNN's product is not split into blocks");
  const int kq = (k + 3) / 4;
  if (kernel == Int8Kernel::kAuto) kernel = int8_vnni_kernel()   ? Int8Kernel::kVnni
                                            : int8_avx2_kernel() ? Int8Kernel::kAvx2
                                                                 : Int8Kernel::kScalar;
  if (kernel == Int8Kernel::kVnni)
    gemm_int8_blocks_vnni(m, n, kq, u, t, packed, b0, b1, beta, y, ldy, bias);
  else if (kernel == Int8Kernel::kAvx2) {
    thread_local std::vector<uint8_t> scratch;  // x's rows as a and |a| (gemm_int8_avx2.cc)
    scratch.resize(static_cast<size_t>(m) * kq * 8);
    gemm_int8_blocks_avx2(m, n, kq, u, t, packed, b0, b1, scratch.data(), beta, y, ldy, bias);
  }
  else
    blocks_scalar(m, n, kq, u, t, packed, b0, b1, beta, y, ldy, bias);
}

void gemm_int8_packed(int m, int n, int k, const float* x, int ldx, const int8_t* packed, float beta, float* y,
                      int ldy, const float* bias, Int8Kernel kernel) {
  if (m <= 0 || n <= 0) return;
  ENGRAM_CHECK(k >= 1 && k <= kInt8MaxK, "gemm_int8: K {} outside 1 .. {}", k, kInt8MaxK);
  ENGRAM_CHECK(!bias || beta == 0.0f, "gemm_int8: a bias replaces beta * y (beta {} must be 0)", beta);
  const int ldu = (k + 3) / 4 * 4;
  // Per-thread scratch reused across calls (a decoding step makes several of these products).
  thread_local std::vector<uint8_t> u;
  thread_local std::vector<float> t;
  u.resize(static_cast<size_t>(m) * ldu);
  t.resize(static_cast<size_t>(m));
  quantize_rows_u8(m, k, x, ldx, u.data(), t.data());
  const uint8_t* ud = u.data();  // the caller's scratch (inside the team, u names each thread's own)
  const float* td = t.data();
  ENGRAM_CHECK(kernel != Int8Kernel::kDnnl || int8_dnnl_available(), "gemm_int8: oneDNN has no int8 matmul for this CPU");
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  if (kernel == Int8Kernel::kDnnl || (kernel == Int8Kernel::kAuto && m >= kInt8DnnlRows && int8_dnnl_available())) {
    // x's rows split over the team, each part oneDNN's sums of at most kDnnlChunk rows at a time
    // (bounding the scratch d), then the scaling; a shape whose primitive wants another weight
    // layout runs the VNNI kernel instead.
    constexpr int kDnnlChunk = 64;
    const int8_t* copy = packed + blocks_size(n, k);
    const int threads = blas_team_size();  // also sets this thread's oneDNN to one thread
    const int team = int64_t{m} * n * k >= kSplitWork ? std::min(threads, m) : 1;
    on_team(team, [&](int p, int np) {
      thread_local std::vector<float> scratch;  // d's int32 bits where y cannot hold them (beta != 0)
      for (int i0 = m * p / np, end = m * (p + 1) / np; i0 < end; i0 += kDnnlChunk) {
        const int rows = std::min(kDnnlChunk, end - i0);
        const uint8_t* ui = ud + static_cast<int64_t>(i0) * ldu;
        float* yi = y + static_cast<int64_t>(i0) * ldy;
        float* d = yi;  // the sums land in y and are scaled in place
        int ldd = ldy;
        if (beta != 0.0f) {
          scratch.resize(static_cast<size_t>(rows) * n);
          d = scratch.data(), ldd = n;
        }
        if (gemm_int8_dnnl(rows, n, k, ui, copy, d, ldd))
          finish_rows(rows, n, (k + 3) / 4, d, ldd, td + i0, packed, beta, yi, ldy, bias);
        else
          gemm_int8_blocks(Int8Kernel::kAuto, rows, n, k, ui, td + i0, packed, 0, blocks, beta, yi, ldy, bias);
      }
    });
    return;
  }
  // W's blocks shared over the team when W or the product is big enough to share; part t is always
  // the same blocks, so a helper re-reads its share of W from its own L2 cache (as gemv.cc).
  const bool share = blocks_size(n, k) >= (int64_t{1} << 17) || int64_t{m} * n * k >= kSplitWork;
  const int team = share ? static_cast<int>(std::min<int64_t>(blas_team_size(), blocks)) : 1;
  on_team(team, [&](int p, int np) {
    const int64_t b0 = blocks * p / np, b1 = blocks * (p + 1) / np;
    if (b1 > b0) gemm_int8_blocks(kernel, m, n, k, ud, td, packed, b0, b1, beta, y, ldy, bias);
  });
}

}  // namespace engram::core::kernels
