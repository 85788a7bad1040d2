// Indexing ops: row gathers (embedding lookup, select_rows), row scatter-add and per-row pick.
// Every index is range-checked before anything is recorded; index lists needed by backward are
// copied into the graph's arena (aux). Dims: V table rows, D row width (product of the trailing
// dims), I number of indices, R rows of pick, C its last dim.
#include "engram/core/ops/index.h"

#include <cstring>
#include <limits>

namespace engram::core {

namespace {

// Throws unless every ids[i] is in [0, n); the message names the op, the id and the table size.
void check_ids(const char* op, const int32_t* ids, int64_t count, int n, const Shape& table) {
  for (int64_t i = 0; i < count; ++i)
    ENGRAM_CHECK(ids[i] >= 0 && ids[i] < n, "{}: id {} (position {}) out of range for table {} of {} rows", op,
                 ids[i], i, table, n);
}

int32_t* arena_copy(Graph& g, const int32_t* ids, int64_t count) {
  int32_t* p = g.arena().array<int32_t>(count);
  if (count) std::memcpy(p, ids, sizeof(int32_t) * count);
  return p;
}

// Elements per row of x viewed as [dim 0, D]: the product of the dims after the first.
int64_t row_width(const Shape& s) {
  int64_t d = 1;
  for (int i = 1; i < s.rank(); ++i) d *= s[i];
  return d;
}

// dst[r] += src[r] for r < n.
void add_row(float* dst, const float* src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) dst[j] += src[j];
}

// y [I, ...] = x [ids[i], ...];  dx [ids[i], ...] += dy [i, ...] (only the rows used). aux = ids.
Var take_rows(const char* op, Var x, const int32_t* ids, int64_t count) {
  const Shape& sx = x.shape();
  ENGRAM_CHECK(sx.rank() >= 1, "{}: cannot index rows of a scalar", op);
  ENGRAM_CHECK(count <= std::numeric_limits<int>::max(), "{}: {} ids is too many", op, count);
  check_ids(op, ids, count, sx[0], sx);
  Graph& g = *x.g;
  Shape so = sx;
  so[0] = static_cast<int>(count);
  const int64_t d = row_width(sx);
  Tensor y = g.alloc(so);
  const float* px = x.data();
  if (d > 0)
    for (int64_t i = 0; i < count; ++i) std::memcpy(y.data + i * d, px + ids[i] * d, sizeof(float) * d);
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const int32_t* ids = static_cast<const int32_t*>(n.aux);
    const int64_t d = row_width(n.value.shape), count = n.value.shape[0];
    for (int64_t i = 0; i < count; ++i) add_row(dx + ids[i] * d, n.grad + i * d, d);
  }, {x});
  if (v.needs_grad()) g.node(v).aux = arena_copy(g, ids, count);
  return v;
}

}  // namespace

// y [I, D] = table [ids[i], :];  dtable [ids[i], :] += dy [i, :] (repeated ids accumulate)
Var gather_rows(Var table, const int32_t* ids, int64_t count) {
  ENGRAM_CHECK(table.shape().rank() == 2, "gather_rows: table must be [V, D], got {}", table.shape());
  return take_rows("gather_rows", table, ids, count);
}

Var gather_rows(Var table, const std::vector<int32_t>& ids) {
  return gather_rows(table, ids.data(), static_cast<int64_t>(ids.size()));
}

// y [I, ...] = x [idx[i], ...];  dx [idx[i], ...] += dy [i, ...]
Var select_rows(Var x, const std::vector<int32_t>& idx) {
  return take_rows("select_rows", x, idx.data(), static_cast<int64_t>(idx.size()));
}

// y = base;  y [ids[i], :] += src [i, :].   dbase += dy;  dsrc [i, :] += dy [ids[i], :]
Var scatter_add_rows(Var base, Var src, const std::vector<int32_t>& ids) {
  const Shape &sb = base.shape(), &ss = src.shape();
  bool match = sb.rank() >= 1 && ss.rank() == sb.rank();
  for (int i = 1; match && i < sb.rank(); ++i) match = ss[i] == sb[i];
  ENGRAM_CHECK(match, "scatter_add_rows: src {} rows do not match base {} rows", ss, sb);
  const int64_t count = static_cast<int64_t>(ids.size());
  ENGRAM_CHECK(count == ss[0], "scatter_add_rows: {} ids for src {}", count, ss);
  check_ids("scatter_add_rows", ids.data(), count, sb[0], sb);
  Graph& g = *base.g;
  const int64_t d = row_width(sb);
  Tensor y = g.alloc(sb);
  y.copy_from(base.value());
  const float* ps = src.data();
  for (int64_t i = 0; i < count; ++i) add_row(y.data + ids[i] * d, ps + i * d, d);
  Var v = g.record(y, [](Graph& g, const Node& n) {
    const int64_t d = row_width(n.value.shape), total = n.value.numel();
    if (float* dbase = g.grad(n.in[0])) add_row(dbase, n.grad, total);
    float* dsrc = g.grad(n.in[1]);
    if (!dsrc) return;
    const int32_t* ids = static_cast<const int32_t*>(n.aux);
    const int64_t count = g.node(n.in[1]).value.shape[0];
    for (int64_t i = 0; i < count; ++i) add_row(dsrc + i * d, n.grad + ids[i] * d, d);
  }, {base, src});
  if (v.needs_grad()) g.node(v).aux = arena_copy(g, ids.data(), count);
  return v;
}

// y [R] = x [r, idx[r]] with x viewed as [R, C] (C = last dim; y drops it);  dx [r, idx[r]] += dy [r]
Var pick(Var x, const std::vector<int32_t>& idx) {
  const Shape& sx = x.shape();
  ENGRAM_CHECK(sx.rank() >= 1, "pick: needs at least one axis, got a scalar");
  const int64_t rows = sx.rows(), cols = sx.last();
  ENGRAM_CHECK(static_cast<int64_t>(idx.size()) == rows, "pick: {} indices for {} rows of {}", idx.size(), rows, sx);
  for (int64_t r = 0; r < rows; ++r)
    ENGRAM_CHECK(idx[r] >= 0 && idx[r] < cols, "pick: index {} (row {}) out of range for {} columns of {}", idx[r],
                 r, cols, sx);
  Graph& g = *x.g;
  int dims[kMaxRank];
  for (int i = 0; i + 1 < sx.rank(); ++i) dims[i] = sx[i];
  Tensor y = g.alloc(Shape::from(dims, dims + sx.rank() - 1));
  const float* px = x.data();
  for (int64_t r = 0; r < rows; ++r) y.data[r] = px[r * cols + idx[r]];
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const int32_t* idx = static_cast<const int32_t*>(n.aux);
    const int64_t rows = n.value.numel(), cols = g.node(n.in[0]).value.shape.last();
    for (int64_t r = 0; r < rows; ++r) dx[r * cols + idx[r]] += n.grad[r];
  }, {x});
  if (v.needs_grad()) g.node(v).aux = arena_copy(g, idx.data(), rows);
  return v;
}

}  // namespace engram::core
