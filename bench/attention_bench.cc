// Attention reads, forward + backward, with nn::Attention at B=64, S=20, H=512 (query width and
// attention dim = H). Memory is time-major [S, B, H] as the RNN layers produce it.
// Workloads:
//   T=1    prepare (transpose, key projection) + one step: what a single read costs
//   T=20   prepare once + 20 decoder steps, reported per step (the key projection amortised)
// Loss = sum over steps of sum(context); gradients reach the memory, every query and every
// parameter. Dims: B batch, S source len, H width, T decoder steps.
#include <string>
#include <vector>

#include "bench_util.h"
#include "engram/core/ops.h"
#include "engram/nn/attention.h"

namespace {

using engram::core::Graph;
using engram::core::Shape;
using engram::core::Tensor;
using engram::core::Var;
namespace nn = engram::nn;
namespace ops = engram::core;

constexpr int kB = 64, kS = 20, kH = 512;

void run_attention(benchmark::State& state, nn::AttentionScore score, int steps, int threads) {
  engram::bench::set_threads(threads);
  engram::core::Rng rng(1);
  nn::ParamStore store;
  nn::AttentionConfig cfg;
  cfg.score = score;
  cfg.query_dim = kH;
  cfg.memory_dim = kH;
  cfg.layout = nn::MemoryLayout::kTimeMajor;
  nn::Attention att(store, "attention", cfg, rng);
  std::vector<float> memory(int64_t{kS} * kB * kH), queries(int64_t{steps} * kB * kH);
  for (auto& v : memory) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : queries) v = rng.uniform(-1.0f, 1.0f);
  Graph g(true, size_t{64} << 20);
  auto iteration = [&] {
    g.reset();
    store.zero_grad();
    Var mem_var = g.variable(Tensor(memory.data(), Shape{kS, kB, kH}));  // [S, B, H]
    nn::AttentionMemory mem = att.prepare(g, mem_var);
    Var loss;
    for (int t = 0; t < steps; ++t) {
      Var q = g.variable(Tensor(queries.data() + int64_t{t} * kB * kH, Shape{kB, kH}));  // [B, H]
      Var s = ops::sum_all(att.step(g, mem, q).context);
      loss = t == 0 ? s : ops::add(loss, s);
    }
    g.backward(loss);
    benchmark::DoNotOptimize(store.grads());
  };
  // Warm-up to the steady state of a training loop: the first cycle sizes the arena (its extra
  // blocks are merged at the next reset), the second touches the merged block's fresh pages.
  iteration();
  iteration();
  for (auto _ : state) iteration();
  engram::bench::set_per_item(state, steps);
}

void register_all() {
  for (nn::AttentionScore score : {nn::AttentionScore::kAdditive, nn::AttentionScore::kDot})
    for (int steps : {1, 20})
      for (int t = 1; t <= 2; ++t) {
        std::string name = std::string("attention:") + nn::attention_score_name(score) + ",B=" +
                           std::to_string(kB) + ",S=" + std::to_string(kS) + ",H=" + std::to_string(kH) +
                           ",T=" + std::to_string(steps) + "/engram/t" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
          run_attention(st, score, steps, t);
        })->UseRealTime()->Unit(benchmark::kMicrosecond);
      }
}

}  // namespace

int main(int argc, char** argv) { return engram::bench::run_main(argc, argv, register_all); }
