// Indexing ops. Index lists are plain int32 vectors, range-checked (an id outside the table is an
// engram::Error naming the id and the table size) and copied into the graph's arena for backward.
// Dims: V table rows, D row width, I number of indices, R rows, C columns.
#pragma once

#include <cstdint>
#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

// Embedding lookup: table [V, D], ids [I] -> [I, D] (reshape the result for [T, B, D] etc.).
// Backward touches only the rows used; repeated ids accumulate. Ids outside [0, V) are an error.
Var gather_rows(Var table, const std::vector<int32_t>& ids);
Var gather_rows(Var table, const int32_t* ids, int64_t count);
// out = base [V, D] with rows src[I, D] added at ids (out[ids[i]] += src[i]); differentiable in both.
Var scatter_add_rows(Var base, Var src, const std::vector<int32_t>& ids);
// Pick one element per row: x [R, C], idx [R] -> [R] with out[r] = x[r, idx[r]]. Leading dims
// are rows: x [T, B, C] with idx [T * B] -> [T, B]. idx outside [0, C) is an error.
Var pick(Var x, const std::vector<int32_t>& idx);
// Select rows of a [N, ...] tensor along axis 0 by a weighting-free index: x[idx[i]] -> [I, ...].
// Like gather_rows for any rank; backward adds into the rows used.
Var select_rows(Var x, const std::vector<int32_t>& idx);

}  // namespace engram::core
