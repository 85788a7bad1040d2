// y = x · Wᵀ with bf16 operands and fp32 results for many rows (batched decoding): oneDNN's
// matmul primitive (AVX512-BF16 kernels where the CPU has them). W [N, K] row-major is the
// matmul's weight [K, N] with strides (1, K), so the bf16 mirror of a parameter is used as it is.
// Primitives are created per shape; oneDNN's primitive cache makes a repeated shape cheap. On
// several threads x's rows are split over the team, one single-threaded primitive per block (the
// largest products: the primitive on oneDNN's own threads, as kernels::sgemm). Where
// oneDNN has no bf16 matmul for the CPU (oneDNN 2.6 on AVX2-only CPUs such as AMD Zen 3: "could
// not create a primitive descriptor iterator"), gemm_small_m_bf16 (gemv.cc) takes any row count:
// the same bf16 operands, summed in fp32 in another order, W streamed once per 8 rows.
// Dims: M rows of x, N outputs, K the shared width.
// sgemm_bf16 (training products): both operands rounded to compact bf16 copies, then the same
// primitive with alpha as its output scale and beta as a sum post-op, split over the team as
// sgemm() splits fp32 products.
#include <dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core::kernels {

namespace {

// The CPU engine: created once, never changed afterwards (oneDNN engines are immutable handles).
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Whether oneDNN has a bf16 matmul for this CPU (an ISA property, the same for every shape):
// probed once, on a [1, 1] x [1, 1] product, and never changed afterwards.
bool dnnl_bf16_matmul() {
  static const bool has = [] {
    using dt = dnnl::memory::data_type;
    using dims = dnnl::memory::dims;
    const dnnl::memory::desc one_bf16(dims{1, 1}, dt::bf16, dims{1, 1}), one_f32(dims{1, 1}, dt::f32, dims{1, 1});
    try {
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(one_bf16, one_bf16, one_f32), cpu_engine());
      return true;
    } catch (const dnnl::error& e) {
      ENGRAM_CHECK(e.status == dnnl_unimplemented, "gemm_bf16: oneDNN's bf16 matmul probe: {}", e.what());
      return false;
    }
  }();
  return has;
}

// alpha as the product's output scale and beta · C as a sum post-op (none where 1 and 0).
dnnl::primitive_attr product_attr(float alpha, float beta) {
  dnnl::primitive_attr attr;
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  return attr;
}

// The product on oneDNN's matmul primitive, on the threads oneDNN is allowed (one inside a team's
// part; its own OpenMP threads under on_openmp).
void gemm_bf16_rows(int m, int n, int k, const float* x, int ldx, const uint16_t* w, int ldw, float beta, float* y,
                    int ldy) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  std::vector<uint16_t> xb(static_cast<size_t>(m) * k);  // [M, K] x rounded to bf16
  for (int i = 0; i < m; ++i) to_bf16(x + static_cast<int64_t>(i) * ldx, xb.data() + static_cast<int64_t>(i) * k, k);
  const dnnl::engine& engine = cpu_engine();
  const dnnl::memory::desc src_md(dims{m, k}, dt::bf16, dims{k, 1});
  const dnnl::memory::desc wei_md(dims{k, n}, dt::bf16, dims{1, ldw});
  const dnnl::memory::desc dst_md(dims{m, n}, dt::f32, dims{ldy, 1});
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, dst_md), product_attr(1.0f, beta), engine);
  const dnnl::matmul prim(pd);
  dnnl::memory src(src_md, engine, xb.data());
  dnnl::memory wei(wei_md, engine, const_cast<uint16_t*>(w));
  dnnl::memory dst(dst_md, engine, y);
  dnnl::stream stream(engine);
  prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
  stream.wait();
}

// The bf16 copy of a stored matrix [rows, cols] with row stride ld, compact: rounded into
// `scratch`, or, for a part of the open scope's weights, once per scope on this thread (kept
// until a later scope's first weight).
const uint16_t* rounded(const float* x, int rows, int cols, int ld, std::vector<uint16_t>& scratch) {
  auto round_into = [&](std::vector<uint16_t>& out) {
    out.resize(static_cast<size_t>(rows) * cols);
    for (int i = 0; i < rows; ++i)
      to_bf16(x + static_cast<int64_t>(i) * ld, out.data() + static_cast<int64_t>(i) * cols, cols);
    return out.data();
  };
  const Bf16Scope* scope = bf16_products();
  if (!scope || !scope->weights || x < scope->weights || x >= scope->weights + scope->weights_count)
    return round_into(scratch);
  thread_local uint64_t generation = 0;
  thread_local std::map<std::tuple<const float*, int, int, int>, std::vector<uint16_t>> weights;
  if (generation != scope->generation) {
    weights.clear();
    generation = scope->generation;
  }
  auto [it, fresh] = weights.try_emplace({x, rows, cols, ld});
  return fresh ? round_into(it->second) : it->second.data();
}

// op(A) [m, k] and op(B) [k, n] as compact bf16 copies in their stored layout, C [m, n] fp32 with
// row stride ldc: one single-threaded primitive per shape, kept per thread (a training run meets a
// few hundred shapes; the cache is emptied past kMaxPrimitives).
void sgemm_bf16_part(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                     int ldb, float beta, float* c, int ldc) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  using Key = std::tuple<int, int, int, bool, bool, int, float, float>;
  constexpr size_t kMaxPrimitives = 1024;
  thread_local std::map<Key, dnnl::matmul> primitives;
  thread_local std::vector<uint16_t> a_scratch, b_scratch;
  // A stored [ta ? k : m, ta ? m : k] with row stride lda; B stored [tb ? n : k, tb ? k : n].
  const uint16_t* ab = rounded(a, ta ? k : m, ta ? m : k, lda, a_scratch);
  const uint16_t* bb = rounded(b, tb ? n : k, tb ? k : n, ldb, b_scratch);
  const dnnl::engine& engine = cpu_engine();
  const dnnl::memory::desc a_md(dims{m, k}, dt::bf16, ta ? dims{1, m} : dims{k, 1});
  const dnnl::memory::desc b_md(dims{k, n}, dt::bf16, tb ? dims{1, k} : dims{n, 1});
  const dnnl::memory::desc c_md(dims{m, n}, dt::f32, dims{ldc, 1});
  const Key key{m, n, k, ta, tb, ldc, alpha, beta};
  auto it = primitives.find(key);
  if (it == primitives.end()) {
    if (primitives.size() >= kMaxPrimitives) primitives.clear();
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), product_attr(alpha, beta), engine);
    it = primitives.emplace(key, dnnl::matmul(pd)).first;
  }
  dnnl::memory am(a_md, engine, const_cast<uint16_t*>(ab)), bm(b_md, engine, const_cast<uint16_t*>(bb)),
      cm(c_md, engine, c);
  dnnl::stream stream(engine);
  it->second.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}

// The weight layout oneDNN's bf16 matmul picks for W [n, k] (that of the M = 64 product; a shape
// whose primitive wants another layout runs on the plain copy instead, reordered_rows).
dnnl::memory::desc reordered_desc(int n, int k) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  const dnnl::memory::desc src(dims{64, k}, dt::bf16, dims{k, 1}), dst(dims{64, n}, dt::f32, dims{n, 1});
  const dnnl::memory::desc wei(dims{k, n}, dt::bf16, dnnl::memory::format_tag::any);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, dst), cpu_engine()).weights_desc();
}

uint16_t* aligned64(const uint16_t* p) {
  return reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
}

// One part of gemm_bf16_reordered on this thread; false where the shape's primitive wants another
// layout (nothing written).
bool reordered_rows(int m, int n, int k, const float* x, int ldx, const uint16_t* reordered, float beta, float* y,
                    int ldy, const float* bias) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  struct Entry {
    dnnl::memory::desc weights;
    std::optional<dnnl::matmul> op;
  };
  using Key = std::tuple<int, int, int, int, float, bool>;
  constexpr size_t kMaxPrimitives = 4096;  // batched decoding meets every row count of a batch per matrix
  thread_local std::map<Key, Entry> primitives;
  thread_local std::vector<uint16_t> xb;  // [M, K] x rounded to bf16
  const Key key{m, n, k, ldy, beta, bias != nullptr};
  const dnnl::memory::desc bias_md(dims{1, n}, dt::f32, dims{n, 1});
  auto it = primitives.find(key);
  if (it == primitives.end()) {
    if (primitives.size() >= kMaxPrimitives) primitives.clear();
    Entry e{reordered_desc(n, k), std::nullopt};
    const dnnl::memory::desc src(dims{m, k}, dt::bf16, dims{k, 1}), dst(dims{m, n}, dt::f32, dims{ldy, 1});
    const dnnl::memory::desc wei(dims{k, n}, dt::bf16, dnnl::memory::format_tag::any);
    const dnnl::matmul::desc op = bias ? dnnl::matmul::desc(src, wei, bias_md, dst) : dnnl::matmul::desc(src, wei, dst);
    const dnnl::matmul::primitive_desc pd(op, product_attr(1.0f, beta), cpu_engine());
    if (pd.weights_desc() == e.weights) e.op.emplace(pd);
    it = primitives.emplace(key, std::move(e)).first;
  }
  if (!it->second.op) return false;
  xb.resize(static_cast<size_t>(m) * k);
  for (int i = 0; i < m; ++i) to_bf16(x + static_cast<int64_t>(i) * ldx, xb.data() + static_cast<int64_t>(i) * k, k);
  const dnnl::engine& engine = cpu_engine();
  dnnl::memory src(dnnl::memory::desc(dims{m, k}, dt::bf16, dims{k, 1}), engine, xb.data());
  dnnl::memory wei(it->second.weights, engine, aligned64(reordered));
  dnnl::memory dst(dnnl::memory::desc(dims{m, n}, dt::f32, dims{ldy, 1}), engine, y);
  dnnl::stream stream(engine);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  if (bias)
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_md, engine, const_cast<float*>(bias)));
  it->second.op->execute(stream, args);
  stream.wait();
  return true;
}

}  // namespace

bool bf16_matmul_available() { return dnnl_bf16_matmul(); }

void sgemm_bf16(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                float beta, float* c, int ldc) {
  if (m <= 0 || n <= 0) return;
  ENGRAM_CHECK(dnnl_bf16_matmul(), "bf16 products: oneDNN has no bf16 matmul for this CPU (it needs AVX512-BF16 or "
               "AMX; train in fp32)");
  ENGRAM_CHECK(k > 0, "sgemm_bf16: k = {} (sgemm() handles an empty product)", k);
  // Split as sgemm() splits fp32 products (blas.cc): C's columns for up to 256 rows, its rows
  // above; oneDNN's own threads from kOpenmpWork multiply-adds.
  const int threads = blas_team_size();  // also sets this thread's oneDNN to one thread
  const int64_t work = int64_t{m} * n * k;
  if (threads > 1 && work >= kOpenmpWork)
    return on_openmp(threads, [&] { sgemm_bf16_part(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  const bool by_columns = m <= 256;
  const int team = work >= kSplitWork ? std::min(threads, by_columns ? std::max(1, n / 32) : m) : 1;
  on_team(team, [&](int t, int nt) {
    const int size = by_columns ? n : m;
    const int i0 = static_cast<int>(int64_t{size} * t / nt), i1 = static_cast<int>(int64_t{size} * (t + 1) / nt);
    if (i1 <= i0) return;
    if (by_columns)  // op(B)'s columns [i0, i1): B's rows when transposed, else its columns
      sgemm_bf16_part(ta, tb, m, i1 - i0, k, alpha, a, lda, tb ? b + static_cast<int64_t>(i0) * ldb : b + i0, ldb,
                      beta, c + i0, ldc);
    else  // op(A)'s rows [i0, i1): A's columns when transposed, else its rows
      sgemm_bf16_part(ta, tb, i1 - i0, n, k, alpha, ta ? a + i0 : a + static_cast<int64_t>(i0) * lda, lda, b, ldb,
                      beta, c + static_cast<int64_t>(i0) * ldc, ldc);
  });
}

void gemm_bf16(int m, int n, int k, const float* x, int ldx, const uint16_t* w, int ldw, float beta, float* y,
               int ldy) {
  if (m <= 0 || n <= 0) return;
  if (!dnnl_bf16_matmul()) return gemm_small_m_bf16(m, n, k, 1.0f, x, ldx, w, ldw, beta, y, ldy);
  // x's rows split over the team from kSplitWork multiply-adds, oneDNN's own threads from
  // kOpenmpWork (blas.h), as kernels::sgemm.
  const int threads = blas_team_size();  // also sets this thread's oneDNN to one thread
  const int64_t work = int64_t{m} * n * k;
  if (threads > 1 && work >= kOpenmpWork)
    return on_openmp(threads, [&] { gemm_bf16_rows(m, n, k, x, ldx, w, ldw, beta, y, ldy); });
  const int team = work >= kSplitWork ? std::min(threads, m) : 1;
  on_team(team, [&](int t, int nt) {
    const int i0 = static_cast<int>(int64_t{m} * t / nt), i1 = static_cast<int>(int64_t{m} * (t + 1) / nt);
    if (i1 > i0)
      gemm_bf16_rows(i1 - i0, n, k, x + static_cast<int64_t>(i0) * ldx, ldx, w, ldw, beta,
                     y + static_cast<int64_t>(i0) * ldy, ldy);
  });
}


int64_t bf16_dnnl_weights_size(int n, int k) {
  if (!dnnl_bf16_matmul()) return 0;
  return static_cast<int64_t>(reordered_desc(n, k).get_size() + 1) / 2 + 32;  // + 64 bytes to align
}

void pack_bf16_dnnl(const float* w, int n, int k, uint16_t* out) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  blas_team_size();  // this thread's oneDNN on one thread
  std::vector<uint16_t> plain(static_cast<size_t>(n) * k);  // W [N, K] rounded
  to_bf16(w, plain.data(), static_cast<int64_t>(plain.size()));
  const dnnl::engine& engine = cpu_engine();
  dnnl::memory from(dnnl::memory::desc(dims{k, n}, dt::bf16, dims{1, k}), engine, plain.data());
  dnnl::memory to(reordered_desc(n, k), engine, aligned64(out));
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}

void gemm_bf16_reordered(int m, int n, int k, const float* x, int ldx, const uint16_t* w, int ldw,
                         const uint16_t* reordered, float beta, float* y, int ldy, const float* bias) {
  if (m <= 0 || n <= 0) return;
  ENGRAM_CHECK(!bias || beta == 0.0f, "gemm_bf16_reordered: a bias replaces beta * y (beta {} must be 0)", beta);
  // x's rows split over the team from kSplitWork multiply-adds, as gemm_bf16.
  const int threads = blas_team_size();  // also sets this thread's oneDNN to one thread
  const int team = int64_t{m} * n * k >= kSplitWork ? std::min(threads, m) : 1;
  on_team(team, [&](int t, int nt) {
    const int i0 = static_cast<int>(int64_t{m} * t / nt), i1 = static_cast<int>(int64_t{m} * (t + 1) / nt);
    if (i1 <= i0) return;
    const float* xi = x + static_cast<int64_t>(i0) * ldx;
    float* yi = y + static_cast<int64_t>(i0) * ldy;
    if (reordered_rows(i1 - i0, n, k, xi, ldx, reordered, beta, yi, ldy, bias)) return;
    float b = beta;
    if (bias) {  // y = bias, then the product accumulates onto it
      for (int i = 0; i < i1 - i0; ++i) std::copy(bias, bias + n, yi + static_cast<int64_t>(i) * ldy);
      b = 1.0f;
    }
    gemm_bf16_rows(i1 - i0, n, k, xi, ldx, w, ldw, b, yi, ldy);
  });
}

}  // namespace engram::core::kernels
