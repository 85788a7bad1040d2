// Memory read bandwidth: one streaming pass over a buffer of 8 to 256 MiB, split over the threads
// with core::kernels::parallel_for (the split engram's kernels use). Below the L3 size (32 MiB on
// the project's machine) the reads come from cache, above it from DRAM. It bounds what decoding one
// sentence at a time can reach: each step streams the decoder's weights once (bench/RESULTS.md).
//   build/bench/membw_bench --benchmark_counters_tabular=true   (engram only: no PyTorch counterpart)
#include <cstdint>
#include <vector>

#include "bench_util.h"
#include "engram/core/kernels/parallel.h"

namespace {

namespace kernels = engram::core::kernels;

void read_pass(benchmark::State& state) {
  const int64_t mib = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  engram::bench::set_threads(threads);
  const int64_t n = mib * (int64_t{1} << 20) / 8;
  std::vector<uint64_t> buf(n);
  for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull;
  std::vector<uint64_t> part(64, 0);
  for (auto _ : state) {
    kernels::parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
      uint64_t acc[8] = {};
      int64_t i = b;
      for (; i + 8 <= e; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] ^= buf[i + j];
      for (; i < e; ++i) acc[0] ^= buf[i];
      uint64_t x = 0;
      for (uint64_t a : acc) x ^= a;
      part[b * 64 / n] ^= x;  // one slot per chunk (up to 64 chunks)
    });
    benchmark::DoNotOptimize(part.data());
  }
  engram::bench::set_per_item(state, 1.0);  // seconds per pass
  state.counters["GB_per_s"] =
      benchmark::Counter(static_cast<double>(n * 8) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (int threads : {1, 2})
    for (int mib : {8, 16, 32, 64, 256})
      benchmark::RegisterBenchmark(("read/" + std::to_string(mib) + "MiB/t" + std::to_string(threads)).c_str(),
                                   read_pass)
          ->Args({mib, threads})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) { return engram::bench::run_main(argc, argv, register_all); }
