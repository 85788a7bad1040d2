// Indexing ops. Index lists are plain int32 vectors copied into the graph's arena.
// Dims: V table rows, D row width, I number of indices.
#pragma once

#include <cstdint>
#include <vector>

#include "engram/core/graph.h"

namespace engram::core {

// Embedding lookup: table [V, D], ids [I] -> [I, D] (reshaped to `out_shape` + [D] if given).
// Backward touches only the rows used. Ids outside [0, V) are an error.
Var gather_rows(Var table, const std::vector<int32_t>& ids);
Var gather_rows(Var table, const int32_t* ids, int64_t count);
// out = base [V, D] with rows src[I, D] added at ids (out[ids[i]] += src[i]); differentiable in both.
Var scatter_add_rows(Var base, Var src, const std::vector<int32_t>& ids);
// Pick one element per row: x [R, C], idx [R] -> [R] with out[r] = x[r, idx[r]].
Var pick(Var x, const std::vector<int32_t>& idx);
// Select rows of a [N, ...] tensor along axis 0 by a weighting-free index: x[idx[i]] -> [I, ...].
Var select_rows(Var x, const std::vector<int32_t>& idx);

}  // namespace engram::core
