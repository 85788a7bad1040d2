// Matrix products through kernels::sgemm. Dims: R rows (any leading dims flattened), K in, N out,
// Bt batch of matrices. Weights follow PyTorch's layout W [N, K] so checkpoints map one to one.
#pragma once

#include <cstdint>

#include "engram/core/graph.h"

namespace engram::core {

// op(a) [M, K] x op(b) [K, N] -> [M, N]; a, b rank 2; trans_* multiplies by the transpose.
Var matmul(Var a, Var b, bool trans_a = false, bool trans_b = false);
// x [..., K], w [N, K], bias [N] (or invalid Var for none) -> [..., N] = x w^T + bias
Var affine(Var x, Var w, Var bias = {});
// a [Bt, M, K] (or [Bt, K, M] with trans_a) x b [Bt, K, N] (or [Bt, N, K]) -> [Bt, M, N]. With
// b_batch, product i takes b's matrix b_batch[i] of its Bb (b [Bb, K, N]: beams that share their
// source's memory); then no gradient flows (decoding only).
Var bmm(Var a, Var b, bool trans_a = false, bool trans_b = false, const int32_t* b_batch = nullptr);

// y [R, N] = x [R, K] · w [N, K]ᵀ + beta * y, or + bias [N] on every row (then beta must be 0),
// contiguous rows: kernels::sgemm, or, when the graph runs on bf16 weights
// (Graph::use_bf16_weights), a bf16 product on w's bf16 copy (the few-row kernel up to
// kernels::kSmallRows rows, which adds the bias in its epilogue; oneDNN's bf16 matmul above), or,
// when it runs on int8 weights (Graph::use_int8_weights) and w is a listed matrix, the int8
// product on w's int8 copy (kernels/gemm_int8.h: x quantized per row, any row count), or,
// when it runs on packed fp32 weights (Graph::use_packed_weights), the packed fp32 kernel for
// products of up to kernels::kPackedRows rows. The
// forward product of every op that multiplies by a weight matrix.
void weight_product(const Graph& g, int rows, int n, int k, const float* x, const float* w, float beta, float* y,
                    const float* bias = nullptr);
// weight_product's bf16 product on given copies of W: wb [N, K] rounded to bf16, and packed
// (kernels::pack_bf16_pairs, or null): the packed few-row kernel up to kernels::kSmallRows rows,
// oneDNN's bf16 matmul above (on the reordered copy that packed carries, where it does).
void bf16_weight_product(int rows, int n, int k, const float* x, const uint16_t* wb, const uint16_t* packed,
                         float beta, float* y, const float* bias = nullptr);

}  // namespace engram::core
