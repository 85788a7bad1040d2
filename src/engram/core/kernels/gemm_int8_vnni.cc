// The AVX-512 VNNI int8 kernel (gemm_int8.h has the maths and the packed layout). This file is
// compiled for AVX-512 F/BW/VNNI whatever the build's -march (CMakeLists.txt) and is called only
// where int8_vnni_kernel() says the CPU runs it; it includes no standard-library code, so no
// inline function compiled here can stand in for a portable one elsewhere.
// Dims: M rows of x, N outputs, KQ = ceil(K/4) quads of inputs.
#include <immintrin.h>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"

namespace engram::core::kernels {

namespace {

constexpr int NB = kPackCols / 16;  // accumulators per row of x: 16 outputs each

// Keeps a loaded vector in a register (as gemv.cc: otherwise GCC reloads it once per row of x).
inline __m512i in_register(__m512i v) {
  asm("" : "+v"(v));
  return v;
}

// Rows i .. i + MR of x against one block (kPackCols outputs from j0, `valid` of them real): per
// quad p, NB loads of 16 outputs x 4 weights, and per row one broadcast quad of u, summed by
// vpdpbusd into MR x NB int32 accumulators (24 + 4 + 1 of the 32 registers at MR = 6).
template <int MR>
void block_rows(int kq, const uint8_t* u, int ldu, const float* t, const int8_t* blk, float beta, float* y, int ldy,
                int j0, int valid, const float* bias) {
  __m512i acc[MR][NB];
  for (int i = 0; i < MR; ++i)
    for (int c = 0; c < NB; ++c) acc[i][c] = _mm512_setzero_si512();
  for (int p = 0; p < kq; ++p) {
    const int8_t* wp = blk + static_cast<int64_t>(p) * kPackCols * 4;
    __m512i w[NB];
    for (int c = 0; c < NB; ++c) w[c] = in_register(_mm512_loadu_si512(wp + c * 64));
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, u + static_cast<int64_t>(i) * ldu + 4 * p, sizeof quad);
      const __m512i xv = _mm512_set1_epi32(quad);
      for (int c = 0; c < NB; ++c) acc[i][c] = _mm512_dpbusd_epi32(acc[i][c], xv, w[c]);
    }
  }
  // Epilogue, as gemm_int8.cc's finish(): y = float(d) · (t_i s_n), fused with bias or beta · y.
  const int8_t* tail = blk + static_cast<int64_t>(kq) * kPackCols * 4;
  const float* scale = reinterpret_cast<const float*>(tail);
  const int32_t* zero = reinterpret_cast<const int32_t*>(tail + kPackCols * sizeof(float));
  for (int c = 0; c < NB; ++c) {
    const int col = c * 16;
    if (col >= valid) break;
    const __mmask16 m = valid - col >= 16 ? static_cast<__mmask16>(0xffff)
                                          : static_cast<__mmask16>((1u << (valid - col)) - 1);
    const __m512 s = _mm512_loadu_ps(scale + col);
    const __m512i z = _mm512_loadu_si512(zero + col);
    for (int i = 0; i < MR; ++i) {
      const __m512 d = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[i][c], z));
      const __m512 ts = _mm512_mul_ps(_mm512_set1_ps(t[i]), s);
      float* out = y + static_cast<int64_t>(i) * ldy + j0 + col;
      __m512 v;
      if (bias) v = _mm512_fmadd_ps(d, ts, _mm512_maskz_loadu_ps(m, bias + j0 + col));
      else if (beta != 0.0f) v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, out), _mm512_set1_ps(beta), _mm512_mul_ps(d, ts));
      else v = _mm512_mul_ps(d, ts);
      _mm512_mask_storeu_ps(out, m, v);
    }
  }
}

}  // namespace

void gemm_int8_blocks_vnni(int m, int n, int kq, const uint8_t* u, const float* t, const int8_t* packed, int64_t b0,
                           int64_t b1, float beta, float* y, int ldy, const float* bias) {
  const int ldu = kq * 4;
  const int64_t block = int64_t{kq} * kPackCols * 4 + int64_t{kPackCols} * 8;
  for (int64_t b = b0; b < b1; ++b) {
    const int j0 = static_cast<int>(b * kPackCols);
    const int valid = n - j0 < kPackCols ? n - j0 : kPackCols;
    const int8_t* blk = packed + b * block;
    // x in groups of at most 6 rows; the block (kq · 256 bytes) stays in cache across the groups.
    for (int i = 0; i < m; i += 6) {
      const uint8_t* ui = u + static_cast<int64_t>(i) * ldu;
      float* yi = y + static_cast<int64_t>(i) * ldy;
      switch (m - i < 6 ? m - i : 6) {
        case 1: block_rows<1>(kq, ui, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
        case 2: block_rows<2>(kq, ui, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
        case 3: block_rows<3>(kq, ui, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
        case 4: block_rows<4>(kq, ui, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
        case 5: block_rows<5>(kq, ui, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
        default: block_rows<6>(kq, ui, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
      }
    }
  }
}

}  // namespace engram::core::kernels
