// The int8 product of many rows on oneDNN's int8 matmul (gemm_int8.h): u [M, 4·KQ] u8 times the
// quantized W, held a second time in the weight layout oneDNN's matmul picks for this CPU (a
// reorder of q [N, K] made once by pack_int8), summed exactly in int32 into d [M, N]. The zero
// point and the scales stay engram's (gemm_int8.cc applies them to d): oneDNN sees plain u8 · s8,
// so its integer sums equal the VNNI and scalar kernels' and so do the outputs.
// The layout is the one oneDNN chooses for M = 64; a primitive for another M (or another row
// stride of d) is used only if it asks for that same layout, else the caller's own kernel runs.
// Dims: M rows of x, N outputs, K the shared width, KQ = ceil(K/4).
#include <dnnl.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"

namespace engram::core::kernels {

namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::memory::desc src_desc(int m, int k) {
  const int ldu = (k + 3) / 4 * 4;
  return dnnl::memory::desc(dims{m, k}, dt::u8, dims{ldu, 1});
}

// The matmul u [m, k] · q [k, n] -> d [m, n] s32 (row stride ldd) with the weight layout left to oneDNN, or none
// where oneDNN has no int8 matmul for this CPU.
std::optional<dnnl::matmul::primitive_desc> product_desc(int m, int n, int k, int ldd) {
  const dnnl::memory::desc wei(dims{k, n}, dt::s8, dnnl::memory::format_tag::any);
  const dnnl::memory::desc dst(dims{m, n}, dt::s32, dims{ldd, 1});
  try {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_desc(m, k), wei, dst), engine());
  } catch (const dnnl::error& e) {
    ENGRAM_CHECK(e.status == dnnl_unimplemented, "gemm_int8: oneDNN's int8 matmul [{}, {}, {}]: {}", m, n, k, e.what());
    return std::nullopt;
  }
}

// The weight layout: that of the M = 64 product, zero size where oneDNN has none.
dnnl::memory::desc weight_desc(int n, int k) {
  const auto pd = product_desc(64, n, k, n);
  return pd ? pd->weights_desc() : dnnl::memory::desc();
}

int8_t* aligned(int8_t* p) {
  return reinterpret_cast<int8_t*>((reinterpret_cast<uintptr_t>(p) + kInt8DnnlAlign - 1) & ~uintptr_t{kInt8DnnlAlign - 1});
}

}  // namespace

bool int8_dnnl_available() {
  static const bool has = int8_vnni_kernel() && product_desc(64, 64, 64, 64).has_value();
  return has;
}

int64_t int8_dnnl_weights_size(int n, int k) {
  if (!int8_dnnl_available()) return 0;
  const size_t bytes = weight_desc(n, k).get_size();
  ENGRAM_CHECK(bytes > 0, "gemm_int8: oneDNN has no int8 weight layout for [{}, {}]", n, k);
  return static_cast<int64_t>(bytes) + kInt8DnnlAlign - 1;
}

void pack_int8_dnnl(const int8_t* q, int n, int k, int8_t* out) {
  blas_team_size();  // this thread's oneDNN on one thread
  const dnnl::memory::desc plain(dims{k, n}, dt::s8, dims{1, k});  // q [N, K] row-major
  dnnl::memory from(plain, engine(), const_cast<int8_t*>(q)), to(weight_desc(n, k), engine(), aligned(out));
  dnnl::stream stream(engine());
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}

bool gemm_int8_dnnl(int m, int n, int k, const uint8_t* u, const int8_t* weights, void* d, int ldd) {
  struct Entry {
    dnnl::memory::desc weights;      // the packed layout
    std::optional<dnnl::matmul> op;  // none where this shape's primitive wants another layout
  };
  using Key = std::tuple<int, int, int, int>;
  constexpr size_t kMaxPrimitives = 4096;  // batched decoding meets every row count of a batch per matrix
  thread_local std::map<Key, Entry> primitives;  // per thread: a primitive per shape
  auto it = primitives.find({m, n, k, ldd});
  if (it == primitives.end()) {
    if (primitives.size() >= kMaxPrimitives) primitives.clear();
    Entry e{weight_desc(n, k), std::nullopt};
    if (const auto pd = product_desc(m, n, k, ldd); pd && pd->weights_desc() == e.weights) e.op.emplace(*pd);
    it = primitives.emplace(Key{m, n, k, ldd}, std::move(e)).first;
  }
  if (!it->second.op) return false;
  const dnnl::memory::desc dst(dims{m, n}, dt::s32, dims{ldd, 1});
  dnnl::memory um(src_desc(m, k), engine(), const_cast<uint8_t*>(u));
  dnnl::memory wm(it->second.weights, engine(), aligned(const_cast<int8_t*>(weights)));
  dnnl::memory dm(dst, engine(), d);
  dnnl::stream stream(engine());
  it->second.op->execute(stream, {{DNNL_ARG_SRC, um}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, dm}});
  stream.wait();
  return true;
}

}  // namespace engram::core::kernels
