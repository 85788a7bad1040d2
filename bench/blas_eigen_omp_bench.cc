// Eigen's own GEMM with OpenMP threads (Eigen::setNbThreads), which engram_core's sgemm_eigen
// cannot use because the library is compiled without -fopenmp. Same code as sgemm_eigen (row-major
// maps, C = A op(B)), standalone so the two builds of Eigen's templates never meet in one program.
// Names match blas_bench.cc with the variant "eigen_omp". Dims: M, K, N as there.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <Eigen/Core>
#include <random>
#include <string>
#include <vector>

namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct GemmShape {
  int m, k, n;
  bool trans_b;
};
const GemmShape kShapes[] = {
    {512, 512, 512, false}, {2048, 2048, 2048, false}, {64, 512, 1536, true}, {16, 128, 384, true}};

void run_gemm(benchmark::State& state, GemmShape s, int threads) {
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(int64_t{s.m} * s.k), b(int64_t{s.k} * s.n), c(int64_t{s.m} * s.n);
  for (auto& x : a) x = u(gen);
  for (auto& x : b) x = u(gen);
  Eigen::Map<const Mat> A(a.data(), s.m, s.k);
  Eigen::Map<const Mat> B(b.data(), s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n);
  Eigen::Map<Mat> C(c.data(), s.m, s.n);
  for (auto _ : state) {
    C.setZero();
    if (s.trans_b) C.noalias() += A * B.transpose();
    else C.noalias() += A * B;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(2e-9 * s.m * s.n * s.k,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["sec_per_item"] = benchmark::Counter(
      1.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
  for (const GemmShape& s : kShapes)
    for (int t = 1; t <= 2; ++t) {
      std::string name = "sgemm:M=" + std::to_string(s.m) + ",K=" + std::to_string(s.k) +
                         ",N=" + std::to_string(s.n) + (s.trans_b ? ",xWt" : "") +
                         "/eigen_omp/t" + std::to_string(t);
      benchmark::RegisterBenchmark(name.c_str(), [s, t](benchmark::State& st) { run_gemm(st, s, t); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("eigen_version", std::to_string(EIGEN_WORLD_VERSION) + "." +
                                                   std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                                   std::to_string(EIGEN_MINOR_VERSION));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
