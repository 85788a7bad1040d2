// Shape ops: reshape and contiguous slices as zero-copy views, permute / transpose as a tiled
// strided copy, concat / split along any axis. A view shares its input's data, but its Node owns
// its own gradient buffer, which backward adds into the input's gradient.
// Dims: O product of the dims before `axis`, N the dim along `axis`, I product of the dims after it.
#include "engram/core/ops/shape_ops.h"

#include <algorithm>
#include <cstring>

namespace engram::core {

namespace {

// O and I of a shape around one (normalised) axis.
int64_t outer_of(const Shape& s, int axis) {
  int64_t o = 1;
  for (int i = 0; i < axis; ++i) o *= s[i];
  return o;
}
int64_t inner_of(const Shape& s, int axis) {
  int64_t in = 1;
  for (int i = axis + 1; i < s.rank(); ++i) in *= s[i];
  return in;
}

// dst[i] += src[i] for i < n.
void add_into(float* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

// ---- permute kernel
// dst = (or +=) src permuted: dst dim k is src dim order[k]; dst is contiguous. Size-1 axes are
// dropped, leaving at most 4 axes (d = sizes, st = strides in src, padded with size 1 at the
// front). If the innermost dst axis is also contiguous in src, rows are copied straight through;
// otherwise the two axes (p, 3) that are contiguous in src and in dst are walked in kTile x kTile
// tiles so both sides stay in cache.
constexpr int kTile = 32;

template <bool kAccumulate>
void permute_kernel(const float* src, const Shape& s, const int* order, float* dst) {
  const int r = s.rank();
  int64_t src_stride[kMaxRank];
  int64_t step = 1;
  for (int i = r - 1; i >= 0; --i) {
    src_stride[i] = step;
    step *= s[i];
  }
  if (step == 0) return;
  int64_t d[4] = {1, 1, 1, 1}, st[4] = {0, 0, 0, 0};
  int kept = 0;
  for (int k = r - 1; k >= 0; --k)  // fill from the back, skipping size-1 axes
    if (s[order[k]] != 1) {
      d[3 - kept] = s[order[k]];
      st[3 - kept] = src_stride[order[k]];
      ++kept;
    }
  int64_t ds[4];  // dst strides
  ds[3] = 1;
  for (int k = 2; k >= 0; --k) ds[k] = ds[k + 1] * d[k + 1];
  auto put = [](float& o, float v) {
    if constexpr (kAccumulate) o += v;
    else o = v;
  };
  if (st[3] == 1 || kept <= 1) {  // innermost axis contiguous on both sides
    for (int64_t i0 = 0; i0 < d[0]; ++i0)
      for (int64_t i1 = 0; i1 < d[1]; ++i1)
        for (int64_t i2 = 0; i2 < d[2]; ++i2) {
          const float* ps = src + i0 * st[0] + i1 * st[1] + i2 * st[2];
          float* pd = dst + i0 * ds[0] + i1 * ds[1] + i2 * ds[2];
          for (int64_t i3 = 0; i3 < d[3]; ++i3) put(pd[i3], ps[i3]);
        }
    return;
  }
  const int64_t s3 = st[3];
  int p = 0;  // dst axis that is contiguous in src (exists: src's innermost non-unit axis)
  while (st[p] != 1) ++p;
  int a = -1, b = -1;  // the two remaining axes
  for (int k = 0; k < 3; ++k)
    if (k != p) (a < 0 ? a : b) = k;
  for (int64_t ia = 0; ia < d[a]; ++ia)
    for (int64_t ib = 0; ib < d[b]; ++ib) {
      const float* ps = src + ia * st[a] + ib * st[b];
      float* pd = dst + ia * ds[a] + ib * ds[b];
      for (int64_t r0 = 0; r0 < d[p]; r0 += kTile)
        for (int64_t c0 = 0; c0 < d[3]; c0 += kTile) {
          const int64_t r1 = std::min(r0 + kTile, d[p]), c1 = std::min(c0 + kTile, d[3]);
          for (int64_t rr = r0; rr < r1; ++rr) {
            float* drow = pd + rr * ds[p];
            const float* scol = ps + rr;
            for (int64_t cc = c0; cc < c1; ++cc) put(drow[cc], scol[cc * s3]);
          }
        }
    }
}

// y = x permuted by `order` (normalised, validated);  dx += permute(dy, order^-1). i[0..3] = order.
Var permute_impl(Var x, const int* order) {
  const Shape& sx = x.shape();
  const int r = sx.rank();
  int dims[kMaxRank];
  for (int k = 0; k < r; ++k) dims[k] = sx[order[k]];
  Graph& g = *x.g;
  Tensor y = g.alloc(Shape::from(dims, dims + r));
  permute_kernel<false>(x.data(), sx, order, y.data);
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const int r = n.value.shape.rank();
    int inverse[kMaxRank];
    for (int k = 0; k < r; ++k) inverse[n.i[k]] = k;
    permute_kernel<true>(n.grad, n.value.shape, inverse, dx);
  }, {x});
  for (int k = 0; k < r; ++k) g.node(v).i[k] = order[k];
  return v;
}

}  // namespace

// y = x viewed as `shape` (shares data);  dx += dy
Var reshape(Var x, Shape shape) {
  ENGRAM_CHECK(shape.numel() == x.numel(), "reshape: cannot view {} ({} elements) as {} ({} elements)",
               x.shape(), x.numel(), shape, shape.numel());
  return x.g->view(x, 0, shape);  // gradient aliases x's: no backward pass
}

// y = x with axes axis0 and axis1 swapped (copy);  dx += dy with the same axes swapped back
Var transpose(Var x, int axis0, int axis1) {
  const Shape& sx = x.shape();
  const int a0 = sx.norm_axis(axis0), a1 = sx.norm_axis(axis1);
  int order[kMaxRank];
  for (int k = 0; k < sx.rank(); ++k) order[k] = k;
  std::swap(order[a0], order[a1]);
  return permute_impl(x, order);
}

// y dim k = x dim order[k] (copy);  dx += permute(dy, order^-1)
Var permute(Var x, std::initializer_list<int> order) {
  const Shape& sx = x.shape();
  ENGRAM_CHECK(static_cast<int>(order.size()) == sx.rank(), "permute: order of {} axes for shape {}",
               order.size(), sx);
  int ord[kMaxRank];
  bool seen[kMaxRank] = {};
  int k = 0;
  for (int axis : order) {
    const int a = sx.norm_axis(axis);
    ENGRAM_CHECK(!seen[a], "permute: axis {} repeated in the order for shape {}", axis, sx);
    seen[a] = true;
    ord[k++] = a;
  }
  return permute_impl(x, ord);
}

// y [O, sum_k N_k, I] = the x_k [O, N_k, I] side by side;  dx_k += the matching block of dy.
// Input ids live in aux (int32 [count]); i[0] = axis, i[1] = count.
Var concat(const std::vector<Var>& xs, int axis) {
  ENGRAM_CHECK(!xs.empty(), "concat of zero tensors");
  Graph& g = *xs[0].g;
  const Shape& s0 = xs[0].shape();
  const int a = s0.norm_axis(axis);
  Shape so = s0;
  so[a] = 0;
  bool needs = false;
  for (size_t k = 0; k < xs.size(); ++k) {
    ENGRAM_CHECK(xs[k].g == &g, "concat: input {} belongs to another graph", k);
    const Shape& sk = xs[k].shape();
    bool match = sk.rank() == s0.rank();
    for (int i = 0; match && i < s0.rank(); ++i) match = i == a || sk[i] == s0[i];
    ENGRAM_CHECK(match, "concat along axis {}: input {} has shape {}, input 0 has {} (only dim {} may differ)",
                 axis, k, sk, s0, a);
    so[a] += sk[a];
    needs = needs || xs[k].needs_grad();
  }
  const int64_t outer = outer_of(so, a), inner = inner_of(so, a);
  const int64_t row = static_cast<int64_t>(so[a]) * inner;  // y elements per outer index
  Tensor y = g.alloc(so);
  int64_t offset = 0;
  for (const Var& x : xs) {
    const int64_t chunk = static_cast<int64_t>(x.shape()[a]) * inner;
    const float* px = x.data();
    if (chunk > 0)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(y.data + o * row + offset, px + o * chunk, sizeof(float) * chunk);
    offset += chunk;
  }
  Var v = g.record(y, nullptr, {});
  Node& n = g.node(v);
  n.i[0] = a;
  n.i[1] = static_cast<int32_t>(xs.size());
  if (!(g.grad_enabled() && needs)) return v;
  int32_t* ids = g.arena().array<int32_t>(xs.size());
  for (size_t k = 0; k < xs.size(); ++k) {
    ids[k] = xs[k].id;
    if (k < 3) n.in[k] = xs[k].id;
  }
  n.aux = ids;
  n.needs_grad = true;
  n.backward = [](Graph& g, const Node& n) {
    const int a = n.i[0];
    const int32_t* ids = static_cast<const int32_t*>(n.aux);
    const int64_t outer = outer_of(n.value.shape, a), inner = inner_of(n.value.shape, a);
    const int64_t row = static_cast<int64_t>(n.value.shape[a]) * inner;
    int64_t offset = 0;
    for (int k = 0; k < n.i[1]; ++k) {
      const int64_t chunk = static_cast<int64_t>(g.node(ids[k]).value.shape[a]) * inner;
      if (float* dx = g.grad(ids[k]))
        for (int64_t o = 0; o < outer; ++o) add_into(dx + o * chunk, n.grad + o * row + offset, chunk);
      offset += chunk;
    }
  };
  return v;
}

// y [O, end - begin, I] = x [O, begin:end, I] (a view when O == 1, e.g. axis 0; else a copy);
// dx [O, begin:end, I] += dy.  i[0] = axis, i[1] = begin.
Var slice(Var x, int axis, int begin, int end) {
  const Shape& sx = x.shape();
  const int a = sx.norm_axis(axis);
  ENGRAM_CHECK(0 <= begin && begin <= end && end <= sx[a], "slice [{}, {}) out of range for axis {} of {}",
               begin, end, axis, sx);
  Graph& g = *x.g;
  Shape so = sx;
  so[a] = end - begin;
  const int64_t outer = outer_of(sx, a), inner = inner_of(sx, a);
  const int64_t in_row = static_cast<int64_t>(sx[a]) * inner, out_row = so[a] * inner;
  const float* src = x.data() + begin * inner;
  if (outer == 1) return g.view(x, begin * inner, so);  // contiguous: value and gradient alias x
  Tensor y = g.alloc(so);
  for (int64_t o = 0; o < outer; ++o) std::memcpy(y.data + o * out_row, src + o * in_row, sizeof(float) * out_row);
  Var v = g.record(y, [](Graph& g, const Node& n) {
    float* dx = g.grad(n.in[0]);
    if (!dx) return;
    const Shape& sx = g.node(n.in[0]).value.shape;
    const int a = n.i[0];
    const int64_t outer = outer_of(sx, a), inner = inner_of(sx, a);
    const int64_t in_row = static_cast<int64_t>(sx[a]) * inner, out_row = n.value.shape[a] * inner;
    float* dst = dx + n.i[1] * inner;
    for (int64_t o = 0; o < outer; ++o) add_into(dst + o * in_row, n.grad + o * out_row, out_row);
  }, {x});
  g.node(v).i[0] = a;
  g.node(v).i[1] = begin;
  return v;
}

// Consecutive slices along `axis` (views along axis 0); each piece's backward adds into its block.
std::vector<Var> split(Var x, const std::vector<int>& sizes, int axis) {
  const Shape& sx = x.shape();
  const int a = sx.norm_axis(axis);
  int64_t total = 0;
  for (int s : sizes) {
    ENGRAM_CHECK(s >= 0, "split: negative size {} along axis {} of {}", s, axis, sx);
    total += s;
  }
  ENGRAM_CHECK(total == sx[a], "split: sizes sum to {} but axis {} of {} has {}", total, axis, sx, sx[a]);
  std::vector<Var> out;
  out.reserve(sizes.size());
  int begin = 0;
  for (int s : sizes) {
    out.push_back(slice(x, a, begin, begin + s));
    begin += s;
  }
  return out;
}

}  // namespace engram::core
