// y = x · Wᵀ with bf16 operands and fp32 results for many rows (batched decoding): oneDNN's
// matmul primitive (AVX512-BF16 kernels where the CPU has them). W [N, K] row-major is the
// matmul's weight [K, N] with strides (1, K), so the bf16 mirror of a parameter is used as it is.
// Primitives are created per shape; oneDNN's primitive cache makes a repeated shape cheap.
// Dims: M rows of x, N outputs, K the shared width.
#include <dnnl.hpp>

#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"

namespace engram::core::kernels {

namespace {

// The CPU engine: created once, never changed afterwards (oneDNN engines are immutable handles).
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

}  // namespace

void gemm_bf16(int m, int n, int k, const float* x, int ldx, const uint16_t* w, int ldw, float beta, float* y,
               int ldy) {
  if (m <= 0 || n <= 0) return;
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  std::vector<uint16_t> xb(static_cast<size_t>(m) * k);  // [M, K] x rounded to bf16
  for (int i = 0; i < m; ++i) to_bf16(x + static_cast<int64_t>(i) * ldx, xb.data() + static_cast<int64_t>(i) * k, k);
  const dnnl::engine& engine = cpu_engine();
  const dnnl::memory::desc src_md(dims{m, k}, dt::bf16, dims{k, 1});
  const dnnl::memory::desc wei_md(dims{k, n}, dt::bf16, dims{1, ldw});
  const dnnl::memory::desc dst_md(dims{m, n}, dt::f32, dims{ldy, 1});
  dnnl::primitive_attr attr;
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, dst_md), attr, engine);
  const dnnl::matmul prim(pd);
  dnnl::memory src(src_md, engine, xb.data());
  dnnl::memory wei(wei_md, engine, const_cast<uint16_t*>(w));
  dnnl::memory dst(dst_md, engine, y);
  dnnl::stream stream(engine);
  prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
  stream.wait();
}

}  // namespace engram::core::kernels
