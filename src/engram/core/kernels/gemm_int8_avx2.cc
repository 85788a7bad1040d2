// The AVX2 int8 kernel, for CPUs without AVX-512 VNNI (gemm_int8.h has the maths and the packed
// layout). This file is compiled for AVX2 whatever the build's -march (CMakeLists.txt) and is
// called only where int8_avx2_kernel() says the CPU runs it; it includes no standard-library code,
// so no inline function compiled here can stand in for a portable one elsewhere.
//
// AVX2 has no vpdpbusd. vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16
// with saturation: u · q with u up to 255 could reach 2 · 255 · 127 > 2¹⁵. So the kernel takes
// a = u − 128 (u XOR 0x80, in [−127, 127]) and forms Σ a q as Σ |a| · (q · sign a): x's rows are
// turned once per call into a and |a| (the caller's scratch), vpsignb gives q · sign a, and a pair
// of vpmaddubsw is at most 2 · 127 · 127 < 2¹⁵, exact; vpmaddwd against ones adds the pairs into
// int32. The sum is d itself (the zero point's 128 c_n needs no subtracting), the integer the
// scalar kernel forms, so the outputs are bit-equal.
// Dims: M rows of x, N outputs, KQ = ceil(K/4) quads of inputs; a block's quad is 8 vectors of
// 8 outputs x 4 weights.
#include <immintrin.h>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"

namespace engram::core::kernels {

namespace {

constexpr int kVectors = kPackCols / 8;  // 32-byte vectors of one quad of a block

// The epilogue, as gemm_int8.cc's finish(): y = float(d) · (t_i s_n), fused with bias or beta · y, for
// the MR x NV accumulators of rows_vectors (outputs j0 + 8 v0 ...; `valid` of the block's are real).
template <int MR, int NV>
void finish(const __m256i (&acc)[MR][NV], int kq, const float* t, const int8_t* blk, int v0, float beta, float* y,
            int ldy, int j0, int valid, const float* bias) {
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

// Rows i .. i + MR of x (a and |a|, row stride lda) against vectors v0 .. v0 + NV of one block
// (8 outputs each, from output j0 + 8 v0; `valid` of the block's outputs are real): MR x NV int32
// accumulators. Per quad and accumulator: vpsignb, vpmaddubsw, vpmaddwd, vpaddd. Used for the 1 to
// 3 rows left over; groups of 4 rows take rows4_vectors2.
template <int MR, int NV>
void rows_vectors(int kq, const int8_t* a, const uint8_t* abs_a, int lda, const float* t, const int8_t* blk, int v0,
                  float beta, float* y, int ldy, int j0, int valid, const float* bias) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_si256();
  for (int p = 0; p < kq; ++p) {
    const int8_t* wp = blk + static_cast<int64_t>(p) * kPackCols * 4 + v0 * 32;
    __m256i w[NV];
    for (int v = 0; v < NV; ++v) w[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + v * 32));
    for (int i = 0; i < MR; ++i) {
      int32_t quad, abs_quad;
      __builtin_memcpy(&quad, a + static_cast<int64_t>(i) * lda + 4 * p, sizeof quad);
      __builtin_memcpy(&abs_quad, abs_a + static_cast<int64_t>(i) * lda + 4 * p, sizeof abs_quad);
      const __m256i s = _mm256_set1_epi32(quad), m = _mm256_set1_epi32(abs_quad);
      for (int v = 0; v < NV; ++v) {
        const __m256i pairs = _mm256_maddubs_epi16(m, _mm256_sign_epi8(w[v], s));
        acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(pairs, ones));
      }
    }
  }
  finish(acc, kq, t, blk, v0, beta, y, ldy, j0, valid, bias);
}

// The 4 x 2 case of rows_vectors written out with named accumulators: g++ keeps an array of
// __m256i in registers only in part, spilling accumulators to the stack and reloading weights,
// where these 15 named values fit the 16 registers. Same sums, so the same outputs.
void rows4_vectors2(int kq, const int8_t* a, const uint8_t* abs_a, int lda, const float* t, const int8_t* blk, int v0,
                    float beta, float* y, int ldy, int j0, int valid, const float* bias) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const int8_t* wp = blk + v0 * 32;
  const int8_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
  const uint8_t *m0 = abs_a, *m1 = abs_a + lda, *m2 = abs_a + 2 * lda, *m3 = abs_a + 3 * lda;
  auto quad = [](const void* at) {
    int32_t q;
    __builtin_memcpy(&q, at, sizeof q);
    return _mm256_set1_epi32(q);
  };
  auto step = [&](__m256i& acc, __m256i w, __m256i s, __m256i m) {
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(m, _mm256_sign_epi8(w, s)), ones));
  };
  for (int p = 0; p < kq; ++p, wp += kPackCols * 4) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + 32));
    __m256i s = quad(a0 + 4 * p), m = quad(m0 + 4 * p);
    step(c00, w0, s, m), step(c01, w1, s, m);
    s = quad(a1 + 4 * p), m = quad(m1 + 4 * p);
    step(c10, w0, s, m), step(c11, w1, s, m);
    s = quad(a2 + 4 * p), m = quad(m2 + 4 * p);
    step(c20, w0, s, m), step(c21, w1, s, m);
    s = quad(a3 + 4 * p), m = quad(m3 + 4 * p);
    step(c30, w0, s, m), step(c31, w1, s, m);
  }
  const __m256i acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  finish(acc, kq, t, blk, v0, beta, y, ldy, j0, valid, bias);
}

// Rows i .. i + MR against the whole block, NV vectors at a time.
template <int MR, int NV>
void rows_block(int kq, const int8_t* a, const uint8_t* abs_a, int lda, const float* t, const int8_t* blk, float beta,
                float* y, int ldy, int j0, int valid, const float* bias) {
  for (int v0 = 0; v0 < kVectors && v0 * 8 < valid; v0 += NV)
    rows_vectors<MR, NV>(kq, a, abs_a, lda, t, blk, v0, beta, y, ldy, j0, valid, bias);
}

}  // namespace

void gemm_int8_blocks_avx2(int m, int n, int kq, const uint8_t* u, const float* t, const int8_t* packed, int64_t b0,
                           int64_t b1, uint8_t* scratch, float beta, float* y, int ldy, const float* bias) {
  const int ldu = kq * 4;
  const int64_t bytes = int64_t{m} * ldu;
  int8_t* a = reinterpret_cast<int8_t*>(scratch);
  uint8_t* abs_a = scratch + bytes;
  // a = u XOR 0x80 and |a|, 32 bytes at a time (ldu is a multiple of 4, so the tail is whole quads).
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  int64_t e = 0;
  for (; e + 32 <= bytes; e += 32) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + e)), flip);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a + e), v);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(abs_a + e), _mm256_abs_epi8(v));
  }
  for (; e < bytes; ++e) {
    const int v = int{u[e]} - 128;
    a[e] = static_cast<int8_t>(v);
    abs_a[e] = static_cast<uint8_t>(v < 0 ? -v : v);
  }
  const int64_t block = int64_t{kq} * kPackCols * 4 + int64_t{kPackCols} * 8;
  for (int64_t b = b0; b < b1; ++b) {
    const int j0 = static_cast<int>(b * kPackCols);
    const int valid = n - j0 < kPackCols ? n - j0 : kPackCols;
    const int8_t* blk = packed + b * block;
    // Groups of 4 rows, two vectors (one 64-byte line of each quad) at a time: the rows sweep the
    // same kq lines of the block while they sit in L1. The 1 to 3 rows left over read the block
    // at the end (one row: all 8 vectors together, each weight loaded once).
    for (int v0 = 0; v0 < kVectors && v0 * 8 < valid; v0 += 2)
      for (int i = 0; i + 4 <= m; i += 4)
        rows4_vectors2(kq, a + int64_t{i} * ldu, abs_a + int64_t{i} * ldu, ldu, t + i, blk, v0, beta,
                           y + int64_t{i} * ldy, ldy, j0, valid, bias);
    const int i = m / 4 * 4;
    const int64_t at = int64_t{i} * ldu;
    float* yi = y + int64_t{i} * ldy;
    switch (m - i) {
      case 3: rows_block<3, 2>(kq, a + at, abs_a + at, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
      case 2: rows_block<2, 4>(kq, a + at, abs_a + at, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
      case 1: rows_block<1, kVectors>(kq, a + at, abs_a + at, ldu, t + i, blk, beta, yi, ldy, j0, valid, bias); break;
      default: break;
    }
  }
}

}  // namespace engram::core::kernels
