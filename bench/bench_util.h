// Shared helpers of the Google Benchmark programs in bench/: thread control for every BLAS
// backend, the context lines that say which libraries and kernels were loaded, and a common main.
// Benchmark names follow "<workload>/<variant>/t<threads>" so bench/aggregate.py can pair each
// workload with the PyTorch script's line of the same name. Every benchmark uses real time and
// reports `sec_per_item`: seconds per op / per step / per call, the unit of its workload.
#pragma once

#include <benchmark/benchmark.h>
#include <dnnl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "engram/core/kernels/blas.h"

extern "C" {
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
void omp_set_num_threads(int);  // libgomp: oneDNN's threads (Debian builds oneDNN on OpenMP)
int omp_get_max_threads(void);
}

namespace engram::bench {

// Threads for every backend at once: OpenBLAS (its own pthread pool) and oneDNN (OpenMP).
// Eigen's GEMM in engram_core is single-threaded: the library is compiled without -fopenmp
// (see blas_eigen_omp_bench.cc for what Eigen does with OpenMP).
inline void set_threads(int n) {
  core::kernels::set_blas_threads(n);
  omp_set_num_threads(n);
}

// Seconds per item of the workload (op, step, call), from real time.
inline void set_per_item(benchmark::State& state, double items_per_iteration) {
  state.counters["sec_per_item"] = benchmark::Counter(
      items_per_iteration, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Shared objects of interest mapped into this process (which BLAS / oneDNN / OpenMP really loaded).
inline std::string loaded_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> libs;
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.find(".so") == std::string::npos) continue;  // not the program itself
    if (path.find("blas") != std::string::npos || path.find("lapack") != std::string::npos ||
        path.find("dnnl") != std::string::npos || path.find("gomp") != std::string::npos ||
        path.find("jemalloc") != std::string::npos)
      libs.insert(path);
  }
  std::string out;
  for (const auto& l : libs) out += (out.empty() ? "" : " ") + l;
  return out;
}

// oneDNN's version and the widest instruction set it dispatches to on this CPU.
inline std::string dnnl_info() {
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "other";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    default: break;
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " isa=" + isa;
}

inline void add_context() {
  const char* ct = std::getenv("OPENBLAS_CORETYPE");
  benchmark::AddCustomContext("engram_blas_backend", core::kernels::blas_backend());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_corename", openblas_get_corename());
  benchmark::AddCustomContext("dnnl", dnnl_info());
  benchmark::AddCustomContext("OPENBLAS_CORETYPE", ct ? ct : "(unset)");
  benchmark::AddCustomContext("loaded_libraries", loaded_libraries());
}

// main() of each bench program: `register_fn()` adds the benchmarks, then the context lines
// (which libraries and kernels this process loaded) and the run.
inline int run_main(int argc, char** argv, void (*register_fn)()) {
  register_fn();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace engram::bench
