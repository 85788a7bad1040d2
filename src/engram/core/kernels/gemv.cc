// y = x · Wᵀ for a few rows of x (decoding: one sentence, or K beams of one): fp32 W, fp32 W packed
// in blocks of 64 outputs, bf16 W, and bf16 W packed for vdpbf16ps. Such products read every
// weight once and do a handful of multiply-adds with it, so the bytes per weight and the layout
// decide their speed (`build/bench/blas_bench --benchmark_filter=few_rows`; figures in
// bench/RESULTS.md). The plain kernels stream W a few rows at a time against all rows of x held in registers
// (horizontal sums at the end); the packed ones sum straight into output lanes.
// W's rows are split over the calling thread's team (on_team, parallel.h); no Eigen here.
// Dims: M rows of x (<= kSmallRows), N rows of W (outputs), K the shared width.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core::kernels {

namespace {

// Weight loads: 16 lanes from fp32 or bf16 storage, with a masked tail.
#ifdef __AVX512F__
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
inline __m512 load16(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
inline __m512 load16(const uint16_t* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// Keeps a loaded vector in a register: without it GCC re-loads each weight vector once per row of x
// (two loads per FMA, load-bound at a third of the FMA rate).
template <class V>
inline V in_register(V v) {
  asm("" : "+v"(v));
  return v;
}

// The packed kernels' epilogue for one row of x: outputs j0 .. j0 + valid of `out_row` from NB
// accumulators of 16 output lanes each, y = alpha * acc + bias (when given) or + beta * y.
template <int NB>
inline void store_lanes(const __m512 (&acc)[NB], float alpha, float beta, float* out_row, int j0, int valid,
                        const float* bias) {
  for (int c = 0; c < NB; ++c) {
    const int col = c * 16;
    if (col >= valid) break;
    const __mmask16 m = valid - col >= 16 ? static_cast<__mmask16>(0xffff)
                                          : static_cast<__mmask16>((1u << (valid - col)) - 1);
    float* out = out_row + j0 + col;
    __m512 v = _mm512_mul_ps(acc[c], _mm512_set1_ps(alpha));
    if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + j0 + col));
    else if (beta != 0.0f) v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, out), _mm512_set1_ps(beta), v);
    _mm512_mask_storeu_ps(out, m, v);
  }
}

// The packed kernels take x in groups of at most 6 rows (6 x 4 accumulators + 4 weight vectors +
// 1 broadcast: 29 of the 32 registers): calls block(std::integral_constant<int, MR>, i) for rows
// i .. i + MR.
template <class Block>
void six_row_groups(int m, Block&& block) {
  for (int i = 0; i < m; i += 6) {
    switch (std::min(6, m - i)) {
      case 1: block(std::integral_constant<int, 1>{}, i); break;
      case 2: block(std::integral_constant<int, 2>{}, i); break;
      case 3: block(std::integral_constant<int, 3>{}, i); break;
      case 4: block(std::integral_constant<int, 4>{}, i); break;
      case 5: block(std::integral_constant<int, 5>{}, i); break;
      default: block(std::integral_constant<int, 6>{}, i); break;
    }
  }
}
#endif

#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
// The plain kernel on AVX2 (a build for a CPU without AVX-512): 8 lanes, 16 registers.
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
// The last k - kv < 8 values, zero past them.
inline __m256 load8_tail(const float* p, int /*count*/, __m256i mask) { return _mm256_maskload_ps(p, mask); }
inline __m256 load8_tail(const uint16_t* p, int count, __m256i) {
  uint16_t v[8] = {};
  std::memcpy(v, p, sizeof(uint16_t) * static_cast<size_t>(count));
  return load8(v);
}
inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
template <class V>
inline V keep_in_register(V v) {
  asm("" : "+x"(v));
  return v;
}

// Outputs j .. j + R for MR rows of x: MR x R accumulators (at most 12 of the 16 registers).
template <int MR, int R, class W, class Finish>
inline void dots_avx2(int j, int k, const float* x, int ldx, const W* w, int ldw, Finish&& finish) {
  const int kv = k / 8 * 8;
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(k - kv), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[R][MR];
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < MR; ++i) acc[r][i] = _mm256_setzero_ps();
  const W* w0 = w + static_cast<int64_t>(j) * ldw;
  for (int p = 0; p < kv; p += 8) {
    __m256 wr[R];
    for (int r = 0; r < R; ++r) wr[r] = keep_in_register(load8(w0 + static_cast<int64_t>(r) * ldw + p));
    for (int i = 0; i < MR; ++i) {
      const __m256 xv = _mm256_loadu_ps(x + static_cast<int64_t>(i) * ldx + p);
      for (int r = 0; r < R; ++r) acc[r][i] = _mm256_fmadd_ps(wr[r], xv, acc[r][i]);
    }
  }
  if (kv < k) {
    __m256 wr[R];
    for (int r = 0; r < R; ++r) wr[r] = load8_tail(w0 + static_cast<int64_t>(r) * ldw + kv, k - kv, mask);
    for (int i = 0; i < MR; ++i) {
      const __m256 xv = _mm256_maskload_ps(x + static_cast<int64_t>(i) * ldx + kv, mask);
      for (int r = 0; r < R; ++r) acc[r][i] = _mm256_fmadd_ps(wr[r], xv, acc[r][i]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < MR; ++i) finish(i, j + r, sum8(acc[r][i]));
}
#endif

inline float widen(float v) { return v; }
inline float widen(uint16_t v) {
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Rows j0..j1 of the output, for MR rows of x, NR rows of W at a time (compile-time counts so the
// MR x NR accumulators stay in registers; an AVX2 build takes R <= 12 / MR rows of W, as it has
// 16 registers): y[i, j] = alpha * x_i · w_j + beta * y[i, j].
template <int MR, int NR, class W>
void rows_block(int j0, int j1, int k, float alpha, const float* x, int ldx, const W* w, int ldw, float beta, float* y,
                int ldy) {
  auto finish = [&](int i, int j, float dot) {
    float& out = y[static_cast<int64_t>(i) * ldy + j];
    out = beta == 0.0f ? alpha * dot : alpha * dot + beta * out;
  };
#ifdef __AVX512F__
  const int kv = k / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (k - kv)) - 1);
  int j = j0;
  for (; j + NR <= j1; j += NR) {
    __m512 acc[NR][MR];
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < MR; ++i) acc[r][i] = _mm512_setzero_ps();
    const W* w0 = w + static_cast<int64_t>(j) * ldw;
    for (int p = 0; p <= k - 16; p += 16) {
      __m512 wr[NR];
      for (int r = 0; r < NR; ++r) wr[r] = in_register(load16(w0 + static_cast<int64_t>(r) * ldw + p));
      for (int i = 0; i < MR; ++i) {
        const __m512 xv = in_register(_mm512_loadu_ps(x + static_cast<int64_t>(i) * ldx + p));
        for (int r = 0; r < NR; ++r) acc[r][i] = _mm512_fmadd_ps(wr[r], xv, acc[r][i]);
      }
    }
    if (kv < k) {
      __m512 wr[NR];
      for (int r = 0; r < NR; ++r) wr[r] = load16(w0 + static_cast<int64_t>(r) * ldw + kv, tail);
      for (int i = 0; i < MR; ++i) {
        const __m512 xv = _mm512_maskz_loadu_ps(tail, x + static_cast<int64_t>(i) * ldx + kv);
        for (int r = 0; r < NR; ++r) acc[r][i] = _mm512_fmadd_ps(wr[r], xv, acc[r][i]);
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < MR; ++i) finish(i, j + r, _mm512_reduce_add_ps(acc[r][i]));
  }
  for (; j < j1; ++j) {
    __m512 acc[MR];
    for (int i = 0; i < MR; ++i) acc[i] = _mm512_setzero_ps();
    const W* wj = w + static_cast<int64_t>(j) * ldw;
    for (int p = 0; p <= k - 16; p += 16) {
      const __m512 wv = load16(wj + p);
      for (int i = 0; i < MR; ++i)
        acc[i] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + static_cast<int64_t>(i) * ldx + p), acc[i]);
    }
    if (kv < k) {
      const __m512 wv = load16(wj + kv, tail);
      for (int i = 0; i < MR; ++i)
        acc[i] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(tail, x + static_cast<int64_t>(i) * ldx + kv), acc[i]);
    }
    for (int i = 0; i < MR; ++i) finish(i, j, _mm512_reduce_add_ps(acc[i]));
  }
#elif defined(__AVX2__) && defined(__FMA__)
  constexpr int R = MR <= 3 ? 4 : MR == 4 ? 3 : MR <= 6 ? 2 : 1;  // MR x R <= 12 accumulators
  int j = j0;
  for (; j + R <= j1; j += R) dots_avx2<MR, R>(j, k, x, ldx, w, ldw, finish);
  for (; j < j1; ++j) dots_avx2<MR, 1>(j, k, x, ldx, w, ldw, finish);
#else
  for (int j = j0; j < j1; ++j) {
    const W* wj = w + static_cast<int64_t>(j) * ldw;
    for (int i = 0; i < MR; ++i) {
      const float* xi = x + static_cast<int64_t>(i) * ldx;
      float dot = 0.0f;
      for (int p = 0; p < k; ++p) dot += widen(wj[p]) * xi[p];
      finish(i, j, dot);
    }
  }
#endif
}

#ifdef __AVX512BF16__
// The packed layout (pack_bf16_pairs): W [N, K] as blocks of kPackCols outputs, each block
// [ceil(K/2), kPackCols, 2] — for a pair of inputs p, the block's 64 outputs' two weights side by
// side. One 512-bit load then feeds 16 outputs of one vdpbf16ps against a broadcast pair of x, so
// the sums land in the output lanes (no horizontal reductions) and each block is read as one
// contiguous stream.
template <int MR, int NB>
void packed_block(int kp, const uint32_t* xp, const uint16_t* blk, float alpha, float beta, float* y, int ldy,
                  int j0, int valid, const float* bias) {
  __m512 acc[MR][NB];
  for (int i = 0; i < MR; ++i)
    for (int c = 0; c < NB; ++c) acc[i][c] = _mm512_setzero_ps();
  for (int p = 0; p < kp; ++p) {
    const uint16_t* wp = blk + static_cast<int64_t>(p) * kPackCols * 2;
    __m512bh w[NB];
    for (int c = 0; c < NB; ++c) w[c] = in_register((__m512bh)_mm512_loadu_si512(wp + c * 32));
    for (int i = 0; i < MR; ++i) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[static_cast<int64_t>(i) * kp + p]));
      for (int c = 0; c < NB; ++c) acc[i][c] = _mm512_dpbf16_ps(acc[i][c], w[c], xv);
    }
  }
  for (int i = 0; i < MR; ++i) store_lanes<NB>(acc[i], alpha, beta, y + static_cast<int64_t>(i) * ldy, j0, valid, bias);
}

// Output blocks b0..b1 (kPackCols outputs each) for all m rows, in groups of at most 6 rows.
void packed_range(int m, int n, int kp, const uint32_t* xp, const uint16_t* w, int64_t b0, int64_t b1, float alpha,
                  float beta, float* y, int ldy, const float* bias) {
  constexpr int NB = kPackCols / 16;
  for (int64_t b = b0; b < b1; ++b) {
    const int j0 = static_cast<int>(b * kPackCols), valid = std::min(kPackCols, n - j0);
    const uint16_t* blk = w + b * static_cast<int64_t>(kp) * kPackCols * 2;
    six_row_groups(m, [&](auto mr, int i) {
      packed_block<decltype(mr)::value, NB>(kp, xp + static_cast<int64_t>(i) * kp, blk, alpha, beta,
                                            y + static_cast<int64_t>(i) * ldy, ldy, j0, valid, bias);
    });
  }
}
#endif

#ifdef __AVX512F__
// The fp32 packed layout (pack_f32): W [N, K] as blocks of kPackCols outputs, each block
// [K, kPackCols] — for input p, the block's 64 outputs' weights side by side. Four 512-bit loads
// feed 4 x MR FMAs against a broadcast x value: the sums land in the output lanes (no horizontal
// reductions) and each block is read as one contiguous stream. With one or two rows of x the
// accumulator chains are doubled (even and odd p) so the FMAs' latency does not bound the loop.
template <int MR, int NB>
void f32_packed_block(int k, const float* x, int ldx, const float* blk, float alpha, float beta, float* y, int ldy,
                      int j0, int valid, const float* bias) {
  constexpr int S = MR <= 2 ? 2 : 1;  // accumulator sets
  __m512 acc[S][MR][NB];
  for (int s = 0; s < S; ++s)
    for (int i = 0; i < MR; ++i)
      for (int c = 0; c < NB; ++c) acc[s][i][c] = _mm512_setzero_ps();
  int p = 0;
  for (; p + S <= k; p += S)
    for (int s = 0; s < S; ++s) {
      const float* wp = blk + static_cast<int64_t>(p + s) * kPackCols;
      __m512 w[NB];
      for (int c = 0; c < NB; ++c) w[c] = in_register(_mm512_loadu_ps(wp + c * 16));
      for (int i = 0; i < MR; ++i) {
        const __m512 xv = _mm512_set1_ps(x[static_cast<int64_t>(i) * ldx + p + s]);
        for (int c = 0; c < NB; ++c) acc[s][i][c] = _mm512_fmadd_ps(w[c], xv, acc[s][i][c]);
      }
    }
  for (; p < k; ++p) {
    const float* wp = blk + static_cast<int64_t>(p) * kPackCols;
    for (int i = 0; i < MR; ++i) {
      const __m512 xv = _mm512_set1_ps(x[static_cast<int64_t>(i) * ldx + p]);
      for (int c = 0; c < NB; ++c) acc[0][i][c] = _mm512_fmadd_ps(_mm512_loadu_ps(wp + c * 16), xv, acc[0][i][c]);
    }
  }
  if constexpr (S == 2)
    for (int i = 0; i < MR; ++i)
      for (int c = 0; c < NB; ++c) acc[0][i][c] = _mm512_add_ps(acc[0][i][c], acc[1][i][c]);
  for (int i = 0; i < MR; ++i)
    store_lanes<NB>(acc[0][i], alpha, beta, y + static_cast<int64_t>(i) * ldy, j0, valid, bias);
}

// Output blocks b0..b1 (kPackCols outputs each) for all m rows, in groups of at most 6 rows.
void f32_packed_range(int m, int n, int k, const float* x, int ldx, const float* w, int64_t b0, int64_t b1,
                      float alpha, float beta, float* y, int ldy, const float* bias) {
  constexpr int NB = kPackCols / 16;
  for (int64_t b = b0; b < b1; ++b) {
    const int j0 = static_cast<int>(b * kPackCols), valid = std::min(kPackCols, n - j0);
    const float* blk = w + b * static_cast<int64_t>(k) * kPackCols;
    six_row_groups(m, [&](auto mr, int i) {
      f32_packed_block<decltype(mr)::value, NB>(k, x + static_cast<int64_t>(i) * ldx, ldx, blk, alpha, beta,
                                                y + static_cast<int64_t>(i) * ldy, ldy, j0, valid, bias);
    });
  }
}
#endif

// Rows j0..j1 for all m rows of x, in register-sized groups of at most 8 rows (W is read once
// per group: one pass for the kSmallRows the dispatch sends here).
template <class W>
void rows_range(int m, int j0, int j1, int k, float alpha, const float* x, int ldx, const W* w, int ldw, float beta,
                float* y, int ldy) {
  for (int i = 0; i < m; i += 8) {
    const float* xi = x + static_cast<int64_t>(i) * ldx;
    float* yi = y + static_cast<int64_t>(i) * ldy;
    switch (std::min(8, m - i)) {
      case 1: rows_block<1, 4>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      case 2: rows_block<2, 4>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      case 3: rows_block<3, 4>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      case 4: rows_block<4, 4>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      case 5: rows_block<5, 4>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      case 6: rows_block<6, 4>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      case 7: rows_block<7, 3>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
      default: rows_block<8, 3>(j0, j1, k, alpha, xi, ldx, w, ldw, beta, yi, ldy); break;
    }
  }
}

// Splits W's rows over the team (blocks of whole groups of 4 outputs) when W is big enough to
// share; run(j0, j1) computes outputs j0..j1.
template <class Run>
void split_rows(int n, int64_t weight_bytes, Run&& run) {
  const int groups = (n + 3) / 4;
  const int team = weight_bytes >= (int64_t{1} << 17) ? std::min(blas_team_size(), groups) : 1;
  if (team <= 1) {
    run(0, n);
    return;
  }
  on_team(team, [&](int t, int nt) {
    const int j0 = std::min(n, groups * t / nt * 4), j1 = std::min(n, groups * (t + 1) / nt * 4);
    if (j1 > j0) run(j0, j1);
  });
}

// The packed kernels' split: W's blocks of kPackCols outputs (n outputs in all) shared over the
// team when the packed W (`bytes`) is big enough to share; run(b0, b1) computes blocks b0..b1.
// Part t is always the same blocks, so a helper re-reads its share of W from its own L2 cache.
template <class Run>
void split_blocks(int n, int64_t bytes, Run&& run) {
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  const int team = bytes >= (int64_t{1} << 17) ? static_cast<int>(std::min<int64_t>(blas_team_size(), blocks)) : 1;
  if (team <= 1) {
    run(0, blocks);
    return;
  }
  on_team(team, [&](int t, int nt) {
    const int64_t b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
    if (b1 > b0) run(b0, b1);
  });
}

}  // namespace

void sgemm_small_m(int m, int n, int k, float alpha, const float* x, int ldx, const float* w, int ldw, float beta,
                   float* y, int ldy) {
  if (m <= 0 || n <= 0) return;
  split_rows(n, int64_t{n} * k * 4,
             [&](int j0, int j1) { rows_range(m, j0, j1, k, alpha, x, ldx, w, ldw, beta, y, ldy); });
}

void gemm_small_m_bf16(int m, int n, int k, float alpha, const float* x, int ldx, const uint16_t* w, int ldw,
                       float beta, float* y, int ldy) {
  if (m <= 0 || n <= 0) return;
  // x's rows rounded to bf16 (kept as fp32 values), as the packed kernel and oneDNN's bf16 matmul
  // see them: every bf16 path multiplies the same bf16 operands and sums in fp32.
  std::vector<float> xr(static_cast<size_t>(m) * k);  // [M, K]
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) xr[static_cast<size_t>(i) * k + p] = from_bf16(to_bf16(x[static_cast<int64_t>(i) * ldx + p]));
  split_rows(n, int64_t{n} * k * 2,
             [&](int j0, int j1) { rows_range(m, j0, j1, k, alpha, xr.data(), k, w, ldw, beta, y, ldy); });
}

namespace {
int64_t pair_blocks_size(int n, int k) {  // the few-row kernel's blocks, before oneDNN's copy
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  return blocks * ((k + 1) / 2) * kPackCols * 2;
}
}  // namespace

int64_t packed_bf16_size(int n, int k) { return pair_blocks_size(n, k) + bf16_dnnl_weights_size(n, k); }

void pack_bf16_pairs(const float* w, int n, int k, uint16_t* out) {
  const int kp = (k + 1) / 2;
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  for (int64_t b = 0; b < blocks; ++b)
    for (int p = 0; p < kp; ++p)
      for (int c = 0; c < kPackCols; ++c)
        for (int h = 0; h < 2; ++h) {
          const int64_t j = b * kPackCols + c;
          const int q = 2 * p + h;
          out[((b * kp + p) * kPackCols + c) * 2 + h] = j < n && q < k ? to_bf16(w[j * k + q]) : uint16_t{0};
        }
  if (bf16_dnnl_weights_size(n, k) > 0) pack_bf16_dnnl(w, n, k, out + pair_blocks_size(n, k));
}

const uint16_t* packed_bf16_dnnl(const uint16_t* packed, int n, int k) {
  return packed && bf16_matmul_available() ? packed + pair_blocks_size(n, k) : nullptr;
}

bool packed_bf16_kernel() {
#ifdef __AVX512BF16__
  return true;
#else
  return false;
#endif
}

void gemm_small_m_bf16_packed(int m, int n, int k, float alpha, const float* x, int ldx, const uint16_t* packed,
                              float beta, float* y, int ldy, const float* bias) {
  if (m <= 0 || n <= 0) return;
#ifdef __AVX512BF16__
  const int kp = (k + 1) / 2;
  // [M, K/2] x as bf16 pairs, and one row's conversion; per-thread scratch reused across calls
  // (a decoding step makes several of these small products: no allocation each time).
  thread_local std::vector<uint32_t> xp;
  thread_local std::vector<uint16_t> row;
  xp.resize(static_cast<size_t>(m) * kp);
  row.resize(static_cast<size_t>(2) * kp);
  for (int i = 0; i < m; ++i) {
    row.back() = 0;
    to_bf16(x + static_cast<int64_t>(i) * ldx, row.data(), k);
    std::memcpy(xp.data() + static_cast<int64_t>(i) * kp, row.data(), sizeof(uint32_t) * kp);
  }
  const uint32_t* xpd = xp.data();  // the caller's scratch (inside the team, xp names each thread's own)
  split_blocks(n, pair_blocks_size(n, k) * 2, [&](int64_t b0, int64_t b1) {
    packed_range(m, n, kp, xpd, packed, b0, b1, alpha, beta, y, ldy, bias);
  });
#else
  (void)m, (void)n, (void)k, (void)alpha, (void)x, (void)ldx, (void)packed, (void)beta, (void)y, (void)ldy, (void)bias;
  ENGRAM_CHECK(false, "gemm_small_m_bf16_packed needs AVX512-BF16 (check packed_bf16_kernel() first)");
#endif
}

int64_t packed_f32_size(int n, int k) { return (n + kPackCols - 1) / kPackCols * int64_t{k} * kPackCols; }

void pack_f32(const float* w, int n, int k, float* out) {
  const int64_t blocks = (n + kPackCols - 1) / kPackCols;
  for (int64_t b = 0; b < blocks; ++b)
    for (int p = 0; p < k; ++p)
      for (int c = 0; c < kPackCols; ++c) {
        const int64_t j = b * kPackCols + c;
        out[(b * k + p) * kPackCols + c] = j < n ? w[j * k + p] : 0.0f;
      }
}

bool packed_f32_kernel() {
#ifdef __AVX512F__
  return true;
#else
  return false;
#endif
}

void sgemm_small_m_packed(int m, int n, int k, float alpha, const float* x, int ldx, const float* packed, float beta,
                          float* y, int ldy, const float* bias) {
  if (m <= 0 || n <= 0) return;
#ifdef __AVX512F__
  split_blocks(n, packed_f32_size(n, k) * 4, [&](int64_t b0, int64_t b1) {
    f32_packed_range(m, n, k, x, ldx, packed, b0, b1, alpha, beta, y, ldy, bias);
  });
#else
  (void)m, (void)n, (void)k, (void)alpha, (void)x, (void)ldx, (void)packed, (void)beta, (void)y, (void)ldy, (void)bias;
  ENGRAM_CHECK(false, "sgemm_small_m_packed needs AVX-512 (check packed_f32_kernel() first)");
#endif
}

uint16_t to_bf16(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t v) { return widen(v); }

void to_bf16(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
#ifdef __AVX512F__
  // 16 at a time, bit for bit the scalar rounding above: u + 0x7fff + ((u >> 16) & 1), NaN -> (u >> 16) | 0x40.
  const __m512i exp_mask = _mm512_set1_epi32(0x7f800000), man_mask = _mm512_set1_epi32(0x007fffff);
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_loadu_si512(x + i);
    const __mmask16 nan = _mm512_cmpeq_epi32_mask(_mm512_and_si512(u, exp_mask), exp_mask) &
                          _mm512_test_epi32_mask(u, man_mask);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one))), 16);
    const __m512i r = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(u, 16), quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtepi32_epi16(r));
  }
#endif
  for (; i < n; ++i) y[i] = to_bf16(x[i]);
}

}  // namespace engram::core::kernels
