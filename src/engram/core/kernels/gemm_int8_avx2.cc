// The AVX2 int8 kernel, for CPUs without AVX-512 VNNI (gemm_int8.h has the maths and the packed
// layout). This file is compiled for AVX2 whatever the build's -march (CMakeLists.txt) and is
// called only where int8_avx2_kernel() says the CPU runs it; it includes no standard-library code,
// so no inline function compiled here can stand in for a portable one elsewhere.
//
// AVX2 has no vpdpbusd. vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16
// with saturation: u · q with u up to 255 could reach 2 · 255 · 127 > 2¹⁵. So the kernel takes
// a = u − 128 (u XOR 0x80, in [−127, 127]) and forms Σ a q as Σ |q| · (a · sign q): vpsignb
// gives a · sign q, vpabsb |q| (q ≥ −127), and a pair is at most 2 · 127 · 127 < 2¹⁵, exact;
// vpmaddwd against ones adds the pairs into int32. The sum is d itself (the zero point's 128 c_n
// needs no subtracting), the integer the scalar kernel forms, so the outputs are bit-equal.
// Dims: M rows of x, N outputs, KQ = ceil(K/4) quads of inputs; a block's quad is 8 vectors of
// 8 outputs x 4 weights.
#include <immintrin.h>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"

namespace engram::core::kernels {

namespace {

constexpr int kVectors = kPackCols / 8;  // 32-byte vectors of one quad of a block

// Rows i .. i + MR of x against vectors v0 .. v0 + NV of one block (8 outputs each, from output
// j0 + 8 v0; `valid` of the block's outputs are real): MR x NV int32 accumulators.
template <int MR, int NV>
void rows_vectors(int kq, const uint8_t* u, int ldu, const float* t, const int8_t* blk, int v0, float beta, float* y,
                  int ldy, int j0, int valid, const float* bias) {
  const __m256i ones = _mm256_set1_epi16(1), flip = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_si256();
  for (int p = 0; p < kq; ++p) {
    const int8_t* wp = blk + static_cast<int64_t>(p) * kPackCols * 4 + v0 * 32;
    __m256i w[NV], aw[NV];
    for (int v = 0; v < NV; ++v) {
      w[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + v * 32));
      aw[v] = _mm256_abs_epi8(w[v]);
    }
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, u + static_cast<int64_t>(i) * ldu + 4 * p, sizeof quad);
      const __m256i a = _mm256_xor_si256(_mm256_set1_epi32(quad), flip);
      for (int v = 0; v < NV; ++v) {
        const __m256i pairs = _mm256_maddubs_epi16(aw[v], _mm256_sign_epi8(a, w[v]));
        acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(pairs, ones));
      }
    }
  }
  // Epilogue, as gemm_int8.cc's finish(): y = float(d) · (t_i s_n), fused with bias or beta · y.
  const float* scale = reinterpret_cast<const float*>(blk + static_cast<int64_t>(kq) * kPackCols * 4);
  for (int v = 0; v < NV; ++v) {
    const int col = (v0 + v) * 8;
    if (col >= valid) break;
    const int lanes = valid - col < 8 ? valid - col : 8;
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 s = _mm256_loadu_ps(scale + col);
    for (int i = 0; i < MR; ++i) {
      const __m256 d = _mm256_cvtepi32_ps(acc[i][v]);
      const __m256 ts = _mm256_mul_ps(_mm256_set1_ps(t[i]), s);
      float* out = y + static_cast<int64_t>(i) * ldy + j0 + col;
      __m256 r;
      if (bias) r = _mm256_fmadd_ps(d, ts, _mm256_maskload_ps(bias + j0 + col, mask));
      else if (beta != 0.0f) r = _mm256_fmadd_ps(_mm256_maskload_ps(out, mask), _mm256_set1_ps(beta), _mm256_mul_ps(d, ts));
      else r = _mm256_mul_ps(d, ts);
      _mm256_maskstore_ps(out, mask, r);
    }
  }
}

}  // namespace

void gemm_int8_blocks_avx2(int m, int n, int kq, const uint8_t* u, const float* t, const int8_t* packed, int64_t b0,
                           int64_t b1, float beta, float* y, int ldy, const float* bias) {
  const int ldu = kq * 4;
  const int64_t block = int64_t{kq} * kPackCols * 4 + int64_t{kPackCols} * 8;
  for (int64_t b = b0; b < b1; ++b) {
    const int j0 = static_cast<int>(b * kPackCols);
    const int valid = n - j0 < kPackCols ? n - j0 : kPackCols;
    const int8_t* blk = packed + b * block;
    // Groups of 4 rows over the block two vectors at a time (8 accumulators of the 16 registers);
    // a row left over reads the block once, all 8 vectors together.
    int i = 0;
    for (; i + 4 <= m; i += 4)
      for (int v0 = 0; v0 < kVectors; v0 += 2)
        rows_vectors<4, 2>(kq, u + static_cast<int64_t>(i) * ldu, ldu, t + i, blk, v0, beta,
                           y + static_cast<int64_t>(i) * ldy, ldy, j0, valid, bias);
    for (; i < m; ++i)
      rows_vectors<1, kVectors>(kq, u + static_cast<int64_t>(i) * ldu, ldu, t + i, blk, 0, beta,
                                y + static_cast<int64_t>(i) * ldy, ldy, j0, valid, bias);
  }
}

}  // namespace engram::core::kernels
