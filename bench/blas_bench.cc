// sgemm throughput of every backend behind core/kernels/blas.h, and of kernels::sgemm (the one
// the library dispatches to), at square shapes and at the GEMM shapes of an RNN layer; and the
// few-row decoding kernels (fp32, bf16, packed bf16, int8) against oneDNN; and one large few-row
// product (a decoder's output layer, 64 x 1024 · 1024 x 32000) in each decoding precision.
// Dims: M rows of op(A) and C, K inner, N columns of op(B) and C. The RNN shapes are those of
// affine(x [M, K], W [N, K]) = x Wᵀ (op(B) = Bᵀ, as the layers call it): B=64, H=512 (GRU 3H) and
// B=16, H=128. Threads: OpenBLAS via set_blas_threads, oneDNN via omp_set_num_threads; Eigen's GEMM
// in engram_core is single-threaded (compiled without OpenMP), so it runs at t1 only.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench_util.h"
#include "engram/core/kernels/gemm_int8.h"
#include "engram/core/rng.h"

namespace {

namespace kernels = engram::core::kernels;

using SgemmFn = void (*)(bool, bool, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);

struct Backend {
  const char* name;
  SgemmFn fn;
  int max_threads;
};
const Backend kBackends[] = {
    {"openblas", kernels::sgemm_openblas, 2},
    {"dnnl", kernels::sgemm_dnnl, 2},
    {"eigen", kernels::sgemm_eigen, 1},
    {"dispatch", kernels::sgemm, 2},  // kernels::sgemm, whatever blas_backend() says
};

struct GemmShape {
  int m, k, n;
  bool trans_b;  // C = A Bᵀ with B stored [N, K]
};
const GemmShape kShapes[] = {
    {512, 512, 512, false},
    {2048, 2048, 2048, false},
    {64, 512, 1536, true},  // GRU B=64, H=512: x [64, 512] W_ih [1536, 512]ᵀ
    {16, 128, 384, true},   // GRU B=16, H=128
};

std::string shape_name(const GemmShape& s) {
  return "sgemm:M=" + std::to_string(s.m) + ",K=" + std::to_string(s.k) + ",N=" + std::to_string(s.n) +
         (s.trans_b ? ",xWt" : "");
}

std::vector<float> random_matrix(int64_t n, uint64_t seed) {
  engram::core::Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

void run_gemm(benchmark::State& state, const Backend& be, GemmShape s, int threads) {
  engram::bench::set_threads(threads);
  std::vector<float> a = random_matrix(int64_t{s.m} * s.k, 1);
  std::vector<float> b = random_matrix(int64_t{s.k} * s.n, 2);
  std::vector<float> c(int64_t{s.m} * s.n);
  const int ldb = s.trans_b ? s.k : s.n;
  be.fn(false, s.trans_b, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), ldb, 0.0f, c.data(), s.n);  // warm-up
  for (auto _ : state) {
    be.fn(false, s.trans_b, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), ldb, 0.0f, c.data(), s.n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  const double flop = 2.0 * s.m * s.n * s.k;
  state.counters["GFLOP"] =
      benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  engram::bench::set_per_item(state, 1.0);
}

// Largest |C_backend - C_openblas| at one RNN shape, so a fast but wrong backend shows up.
void add_agreement_context() {
  const GemmShape s = kShapes[2];
  std::vector<float> a = random_matrix(int64_t{s.m} * s.k, 3);
  std::vector<float> b = random_matrix(int64_t{s.k} * s.n, 4);
  std::vector<float> ref(int64_t{s.m} * s.n), c(ref.size());
  kernels::sgemm_openblas(false, true, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k, 0.0f,
                          ref.data(), s.n);
  for (const Backend& be : kBackends) {
    std::fill(c.begin(), c.end(), 7.0f);
    be.fn(false, true, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k, 0.0f, c.data(), s.n);
    float worst = 0.0f;
    for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - ref[i]));
    benchmark::AddCustomContext(std::string("maxabs_vs_openblas_") + be.name, std::to_string(worst));
  }
}

// Few-row x·Wᵀ products (decoding one sentence or its beams): the decoder's output layer, 8000 x
// 512, at 1 and 5 rows, one thread: oneDNN's sgemm, engram's fp32 few-row kernel (plain and packed), the bf16 kernel
// on the plain copy, the packed kernels (fp32 and bf16) and the int8 kernel (kernels/gemm_int8.h).
// GB/s = weight bytes read per second.
enum class FewRow { kDnnl, kFp32, kFp32Packed, kBf16, kPacked, kInt8 };
void run_few_rows(benchmark::State& state, FewRow kind, int m) {
  engram::bench::set_threads(1);
  const int n = 8000, k = 512;
  std::vector<float> x = random_matrix(int64_t{m} * k, 5), w = random_matrix(int64_t{n} * k, 6), y(int64_t{m} * n);
  std::vector<uint16_t> wb(w.size()), wp(kernels::packed_bf16_size(n, k));
  kernels::to_bf16(w.data(), wb.data(), static_cast<int64_t>(w.size()));
  if (kind == FewRow::kPacked && !kernels::packed_bf16_kernel()) {
    state.SkipWithError("no AVX512-BF16 in this build");
    return;
  }
  kernels::pack_bf16_pairs(w.data(), n, k, wp.data());
  std::vector<float> wf(kind == FewRow::kFp32Packed ? kernels::packed_f32_size(n, k) : 0);
  if (kind == FewRow::kFp32Packed) {
    if (!kernels::packed_f32_kernel()) {
      state.SkipWithError("no AVX-512 in this build");
      return;
    }
    kernels::pack_f32(w.data(), n, k, wf.data());
  }
  std::vector<int8_t> wq(kind == FewRow::kInt8 ? kernels::packed_int8_size(n, k) : 0);
  if (kind == FewRow::kInt8) kernels::pack_int8(w.data(), n, k, wq.data());
  auto once = [&] {
    switch (kind) {
      case FewRow::kInt8: kernels::gemm_int8_packed(m, n, k, x.data(), k, wq.data(), 0.0f, y.data(), n); break;
      case FewRow::kDnnl: kernels::sgemm_dnnl(false, true, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n); break;
      case FewRow::kFp32: kernels::sgemm_small_m(m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n); break;
      case FewRow::kFp32Packed: kernels::sgemm_small_m_packed(m, n, k, 1.0f, x.data(), k, wf.data(), 0.0f, y.data(), n); break;
      case FewRow::kBf16: kernels::gemm_small_m_bf16(m, n, k, 1.0f, x.data(), k, wb.data(), k, 0.0f, y.data(), n); break;
      case FewRow::kPacked: kernels::gemm_small_m_bf16_packed(m, n, k, 1.0f, x.data(), k, wp.data(), 0.0f, y.data(), n); break;
    }
  };
  once();
  for (auto _ : state) {
    once();
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double bytes = double(n) * k *
                       (kind == FewRow::kDnnl || kind == FewRow::kFp32 || kind == FewRow::kFp32Packed ? 4
                        : kind == FewRow::kInt8                                                        ? 1
                                                                                                       : 2);
  state.counters["GMAC"] = benchmark::Counter(double(m) * n * k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GBps"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// One large few-row product y [M, N] = x [M, K] · W [N, K]ᵀ, the output layer of a WMT-like
// decoder (N = 32000 outputs, K = 1024) at M = 64 rows (a batch's step) and 1, in each decoding
// precision as ops/matmul.h weight_product runs it: fp32 on the packed copy (oneDNN's sgemm
// beside it), bf16 on the packed few-row kernel up to kSmallRows rows and oneDNN's bf16 matmul
// above (on its own weight layout where the packed copy has one), int8 as weight_product runs it (oneDNN's int8 matmul from kInt8DnnlRows rows where it has
// one, else the VNNI kernel where the CPU has it, else the AVX2 one), int8_vnni engram's VNNI kernel at any M (above
// M = 1), int8_avx2 its AVX2 kernel and int8_scalar the portable loops (M = 1 and 64, one thread). GOPS = 2 M N K / s (multiply and add counted apart, whatever the precision).
enum class Prec { kFp32Packed, kFp32Dnnl, kBf16, kInt8, kInt8Vnni, kInt8Avx2, kInt8Scalar };
void run_precision(benchmark::State& state, Prec kind, int m, int threads) {
  engram::bench::set_threads(threads);
  const int n = 32000, k = 1024;
  std::vector<float> x = random_matrix(int64_t{m} * k, 7), w = random_matrix(int64_t{n} * k, 8), y(int64_t{m} * n);
  std::vector<float> wf;
  std::vector<uint16_t> wb, wp;
  std::vector<int8_t> wq;
  switch (kind) {
    case Prec::kFp32Packed:
      if (!kernels::packed_f32_kernel()) return state.SkipWithError("no AVX-512 in this build");
      wf.resize(kernels::packed_f32_size(n, k));
      kernels::pack_f32(w.data(), n, k, wf.data());
      break;
    case Prec::kFp32Dnnl: break;
    case Prec::kBf16:
      wb.resize(w.size());
      kernels::to_bf16(w.data(), wb.data(), static_cast<int64_t>(w.size()));
      if (kernels::packed_bf16_kernel()) {
        wp.resize(kernels::packed_bf16_size(n, k));
        kernels::pack_bf16_pairs(w.data(), n, k, wp.data());
      }
      break;
    case Prec::kInt8Vnni:
    case Prec::kInt8Avx2:
    case Prec::kInt8:
    case Prec::kInt8Scalar:
      if (kind == Prec::kInt8Vnni && !kernels::int8_vnni_kernel())
        return state.SkipWithError("no AVX-512 VNNI on this CPU");
      if (kind == Prec::kInt8Avx2 && !kernels::int8_avx2_kernel()) return state.SkipWithError("no AVX2 on this CPU");
      wq.resize(kernels::packed_int8_size(n, k));
      kernels::pack_int8(w.data(), n, k, wq.data());
      break;
  }
  auto once = [&] {
    switch (kind) {
      case Prec::kFp32Packed: kernels::sgemm_small_m_packed(m, n, k, 1.0f, x.data(), k, wf.data(), 0.0f, y.data(), n); break;
      case Prec::kFp32Dnnl: kernels::sgemm(false, true, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n); break;
      case Prec::kBf16:
        if (!wp.empty() && m <= kernels::kSmallRows)
          kernels::gemm_small_m_bf16_packed(m, n, k, 1.0f, x.data(), k, wp.data(), 0.0f, y.data(), n);
        else if (const uint16_t* wd = kernels::packed_bf16_dnnl(wp.empty() ? nullptr : wp.data(), n, k))
          kernels::gemm_bf16_reordered(m, n, k, x.data(), k, wb.data(), k, wd, 0.0f, y.data(), n);
        else
          kernels::gemm_bf16(m, n, k, x.data(), k, wb.data(), k, 0.0f, y.data(), n);
        break;
      case Prec::kInt8: kernels::gemm_int8_packed(m, n, k, x.data(), k, wq.data(), 0.0f, y.data(), n); break;
      case Prec::kInt8Vnni:
      case Prec::kInt8Avx2:
      case Prec::kInt8Scalar:
        kernels::gemm_int8_packed(m, n, k, x.data(), k, wq.data(), 0.0f, y.data(), n, nullptr,
                                  kind == Prec::kInt8Vnni   ? kernels::Int8Kernel::kVnni
                                  : kind == Prec::kInt8Avx2 ? kernels::Int8Kernel::kAvx2
                                                            : kernels::Int8Kernel::kScalar);
        break;
    }
  };
  once();
  for (auto _ : state) {
    once();
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * m * n * k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  add_agreement_context();
  for (int m : {1, 5})
    for (auto [kind, name] : {std::pair{FewRow::kDnnl, "dnnl"}, {FewRow::kFp32, "fp32"},
                              {FewRow::kFp32Packed, "fp32_packed"}, {FewRow::kBf16, "bf16"},
                              {FewRow::kPacked, "bf16_packed"}, {FewRow::kInt8, "int8"}})
      benchmark::RegisterBenchmark(("few_rows:M=" + std::to_string(m) + ",N=8000,K=512/" + name + "/t1").c_str(),
                                   [kind, m](benchmark::State& st) { run_few_rows(st, kind, m); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
  for (int m : {64, 16, 8, 1})
    for (int t : {1, 2})
      for (auto [kind, name] : {std::pair{Prec::kFp32Packed, "fp32_packed"}, {Prec::kFp32Dnnl, "fp32_sgemm"},
                                {Prec::kBf16, "bf16"}, {Prec::kInt8, "int8"}, {Prec::kInt8Vnni, "int8_vnni"},
                                {Prec::kInt8Avx2, "int8_avx2"}, {Prec::kInt8Scalar, "int8_scalar"}}) {
        if ((kind == Prec::kInt8Scalar || kind == Prec::kInt8Avx2) && ((m != 1 && m != 64) || t != 1)) continue;
        if (kind == Prec::kInt8Vnni && m == 1) continue;
        if ((m == 16 || m == 8) && kind != Prec::kInt8 && kind != Prec::kInt8Vnni) continue;
        benchmark::RegisterBenchmark(
            ("precision:M=" + std::to_string(m) + ",N=32000,K=1024/" + name + "/t" + std::to_string(t)).c_str(),
            [kind, m, t](benchmark::State& st) { run_precision(st, kind, m, t); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
  // The training products of train.precision bf16 (kernels::sgemm_bf16), where oneDNN has them.
  static const Backend bf16_train{"bf16_train", kernels::sgemm_bf16, 2};
  if (kernels::bf16_matmul_available())
    for (const GemmShape& s : kShapes)
      for (int t = 1; t <= bf16_train.max_threads; ++t)
        benchmark::RegisterBenchmark((shape_name(s) + "/bf16_train/t" + std::to_string(t)).c_str(),
                                     [s, t](benchmark::State& st) { run_gemm(st, bf16_train, s, t); })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
  for (const GemmShape& s : kShapes)
    for (const Backend& be : kBackends)
      for (int t = 1; t <= be.max_threads; ++t)
        benchmark::RegisterBenchmark(
            (shape_name(s) + "/" + be.name + "/t" + std::to_string(t)).c_str(),
            [&be, s, t](benchmark::State& st) { run_gemm(st, be, s, t); })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) { return engram::bench::run_main(argc, argv, register_all); }
