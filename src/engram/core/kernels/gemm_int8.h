// int8 products y = x · Wᵀ for decoding (gemm_int8.cc, gemm_int8_vnni.cc): W quantized once per
// output row, x quantized per row at each call, integer sums, one fp32 scale per output.
//
// The maths. W [N, K] fp32 -> q [N, K] int8 with one scale per row n:
//   s_n = max_p |W[n, p]| / 127,   q[n, p] = round(W[n, p] / s_n) in [-127, 127]   (s_n = 0, q = 0 on a zero row)
// x [M, K] fp32 -> a [M, K] int8 with one scale per row i, stored as u8 with a zero point of 128
// (vpdpbusd multiplies unsigned by signed bytes):
//   t_i = max_p |x[i, p]| / 127,   a[i, p] = round(x[i, p] / t_i) in [-127, 127],   u[i, p] = a[i, p] + 128 in [1, 255]
// The integer sum the kernel forms is over u, so the zero point's share is taken off with the
// per-row sum of q (c_n, kept with the packed W):
//   d[i, n] = Σ_p u[i, p] q[n, p] − 128 c_n = Σ_p a[i, p] q[n, p],   c_n = Σ_p q[n, p]
//   y[i, n] = t_i · s_n · d[i, n]  (+ bias[n], or + beta · y[i, n])
// |d| ≤ K · 127² and every partial sum of u·q is at most K · 255 · 127 in size, so int32 never
// overflows for K ≤ kInt8MaxK. Error: with x = t a + e_x, W = s q + e_w, |e_x| ≤ t/2, |e_w| ≤ s/2
// per element (rounding to nearest, no clipping as the scale is the row's largest value),
//   |y − x·Wᵀ| ≤ Σ_p (|x_p| s_n / 2 + |W[n, p]| t_i / 2 + t_i s_n / 4)
// plus fp32 rounding of the final scaling (a relative 2⁻²³ or so of |t s d|).
// A row of x with a non-finite value gets a NaN scale: its outputs are NaN, as fp32's would be.
//
// Packed W (pack_int8, packed_int8_size(n, k) bytes): blocks of kPackCols outputs; each block is
// [ceil(K/4), kPackCols, 4] int8 — for a quad of inputs p, the block's 64 outputs' four weights
// side by side, zero past K and past N — followed by the block's kPackCols fp32 scales s_n and
// kPackCols int32 values 128 c_n (zero past N). One 512-bit load then feeds 16 outputs of one
// vpdpbusd against a broadcast quad of u, the sums landing in the output lanes. Where oneDNN has
// an int8 matmul for the CPU (int8_dnnl_available()), the blocks are followed by q once more in
// the layout of that matmul (gemm_int8_dnnl.cc), which products of kInt8DnnlRows rows or more use:
// they then take d from oneDNN and scale it as above.
// Dims: M rows of x, N outputs, K the shared width, KQ = ceil(K/4).
#pragma once

#include <cstdint>

namespace engram::core::kernels {

constexpr int kInt8MaxK = 65536;  // K · 255 · 127 < 2³¹

// From this many rows of x, gemm_int8_packed (Int8Kernel::kAuto) forms d on oneDNN's int8 matmul
// where int8_dnnl_available().
constexpr int kInt8DnnlRows = 8;

// Bytes of W [n, k] packed by pack_int8, and the packing (rounding to nearest, ties to even).
int64_t packed_int8_size(int n, int k);
void pack_int8(const float* w, int n, int k, int8_t* out);

// Quantizes rows of x [m, k] (row stride ldx) to u [m, 4·KQ] (zero point 128, padded with 128)
// and their scales t [m], as the header's maths says. Raw pointers, no allocation.
void quantize_rows_u8(int m, int k, const float* x, int ldx, uint8_t* u, float* t);

// Which integer kernel: the portable scalar loops, AVX-512 VNNI (vpdpbusd), AVX2 (vpmaddubsw on
// |a| and q · sign a: gemm_int8_avx2.cc), oneDNN's int8 matmul on the second copy, or the best this
// CPU runs (oneDNN from kInt8DnnlRows rows where available, else VNNI where int8_vnni_kernel(),
// else AVX2 where int8_avx2_kernel()). All give the same integer sums, so the same y.
enum class Int8Kernel { kAuto, kScalar, kVnni, kAvx2, kDnnl };
// Whether the VNNI kernel was compiled in and this CPU runs it (AVX-512 F, BW and VNNI; checked
// at run time, so a build without -march=native still uses it where the CPU has it); the same
// for the AVX2 kernel (AVX2 and FMA).
bool int8_vnni_kernel();
bool int8_avx2_kernel();

// y [m, n] (row stride ldy) from quantized x (u [m, 4·KQ], t [m]) and packed W, for output blocks
// b0 .. b1 (kPackCols outputs each): y = t_i s_n d + bias (bias given: n values) or + beta · y.
// kVnni where !int8_vnni_kernel(), kAvx2 where !int8_avx2_kernel(), are errors. Raw pointers, no allocation, one thread.
void gemm_int8_blocks(Int8Kernel kernel, int m, int n, int k, const uint8_t* u, const float* t, const int8_t* packed,
                      int64_t b0, int64_t b1, float beta, float* y, int ldy, const float* bias);

// The whole product for fp32 x [m, k] (row stride ldx): quantizes x into per-thread scratch, then
// gemm_int8_blocks with W's blocks split over the calling thread's team (parallel.h).
void gemm_int8_packed(int m, int n, int k, const float* x, int ldx, const int8_t* packed, float beta, float* y,
                      int ldy, const float* bias = nullptr, Int8Kernel kernel = Int8Kernel::kAuto);

// oneDNN's part (gemm_int8_dnnl.cc): whether it has an int8 matmul for this CPU (with AVX-512 VNNI),
// the bytes of its copy of q [n, k] (0 where not available; room for kInt8DnnlAlign included), the
// reorder of q [N, K] row-major into that copy, and d [m, n] (int32, row stride ldd) = u · qᵀ; false
// where the shape's primitive wants another layout (nothing written). One thread.
constexpr int kInt8DnnlAlign = 64;
bool int8_dnnl_available();
int64_t int8_dnnl_weights_size(int n, int k);
void pack_int8_dnnl(const int8_t* q, int n, int k, int8_t* out);
bool gemm_int8_dnnl(int m, int n, int k, const uint8_t* u, const int8_t* weights, void* d, int ldd);

// The VNNI blocks (gemm_int8_vnni.cc, compiled for AVX-512 VNNI whatever the build's -march):
// call only where int8_vnni_kernel().
void gemm_int8_blocks_vnni(int m, int n, int kq, const uint8_t* u, const float* t, const int8_t* packed, int64_t b0,
                           int64_t b1, float beta, float* y, int ldy, const float* bias);
// The AVX2 blocks (gemm_int8_avx2.cc, compiled for AVX2 and FMA): call only where int8_avx2_kernel().
// `scratch` holds 2 · m · 4 · KQ bytes (x's rows as a = u − 128 and as |a|).
void gemm_int8_blocks_avx2(int m, int n, int kq, const uint8_t* u, const float* t, const int8_t* packed, int64_t b0,
                           int64_t b1, uint8_t* scratch, float beta, float* y, int ldy, const float* bias);

}  // namespace engram::core::kernels
