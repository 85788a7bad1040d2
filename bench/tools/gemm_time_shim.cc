// Where the GEMM time goes: an LD_PRELOAD shim that times every dnnl_sgemm call (engram's
// kernels::sgemm for all but tiny products) by (transposes, M, N, K) and prints, at exit, the
// total and the 16 most expensive shapes to stderr. Calls made inside engram's own column split
// (blas_split.cc) are timed per block and thread, so use it with --threads 1.
//   g++ -O2 -shared -fPIC bench/tools/gemm_time_shim.cc -o /tmp/gemm_time_shim.so -ldl
//   LD_PRELOAD=/tmp/gemm_time_shim.so build/bench/seq2seq_speed --threads 1 --what train --steps 3 --warmup 0
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <tuple>

namespace {

using Key = std::tuple<char, char, long, long, long>;  // transa, transb, M, N, K
struct Stat {
  double ms = 0;
  long calls = 0;
};
auto* stats = new std::map<Key, Stat>;  // leaked on purpose: still valid in the exit dump

struct Dump {
  ~Dump() {
    double total = 0;
    std::multimap<double, Key> by_time;
    for (const auto& [k, s] : *stats) {
      total += s.ms;
      by_time.emplace(-s.ms, k);
    }
    std::fprintf(stderr, "gemm total: %.1f ms in %zu shapes\n", total, stats->size());
    int shown = 0;
    for (const auto& [neg_ms, k] : by_time) {
      if (shown++ == 16) break;
      const Stat& s = (*stats)[k];
      const auto [ta, tb, m, n, kk] = k;
      std::fprintf(stderr, "%9.1f ms %7ld calls %6.1f GFLOP/s  %c%c M=%ld N=%ld K=%ld\n", s.ms, s.calls,
                   2.0 * m * n * kk * s.calls / (s.ms * 1e6), ta, tb, m, n, kk);
    }
  }
} dump;

}  // namespace

extern "C" int dnnl_sgemm(char ta, char tb, long m, long n, long k, float alpha, const float* a, long lda,
                          const float* b, long ldb, float beta, float* c, long ldc) {
  using Fn = int (*)(char, char, long, long, long, float, const float*, long, const float*, long, float, float*, long);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "dnnl_sgemm"));
  const auto t0 = std::chrono::steady_clock::now();
  const int r = real(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  Stat& s = (*stats)[Key{ta, tb, m, n, k}];
  s.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++s.calls;
  return r;
}
