// Per-op overhead of the graph (tape recording, arena allocation, backward walk) on tensors so
// small that the arithmetic is free. Target: <= 1 us per op. The graph is reset every kResetEvery
// ops, as a training loop resets it per batch, so the arena and tape do not grow.
// Workloads (time per op; n = elements per tensor):
//   graph:add,n=1  graph:add,n=4  graph:tanh,n=4   one op forward, inputs need gradients (a node
//                                                   is recorded with its backward)
//   graph:add,n=4,nograd                            one op forward in inference mode (no tape)
//   graph:chain50,n=4,fwd_bwd                       50 ops (add, mul, tanh in turn) + sum, then
//                                                   backward; time / 50
#include <vector>

#include "bench_util.h"
#include "engram/core/ops.h"

namespace {

using engram::core::Graph;
using engram::core::NoGrad;
using engram::core::Shape;
using engram::core::Tensor;
using engram::core::Var;
namespace ops = engram::core;

constexpr size_t kResetEvery = 1000;  // nodes per graph cycle
constexpr int kChainOps = 50;

struct Inputs {
  std::vector<float> a, b;
  explicit Inputs(int n) : a(n, 0.5f), b(n, 0.25f) {}
};

template <class Op>
void run_unary_or_binary(benchmark::State& state, int n, bool grad, Op op) {
  Inputs in(n);
  Graph g(true);
  auto leaves = [&] {
    Tensor ta(in.a.data(), Shape{n}), tb(in.b.data(), Shape{n});
    return std::pair<Var, Var>{grad ? g.variable(ta) : g.input(ta), grad ? g.variable(tb) : g.input(tb)};
  };
  auto [a, b] = leaves();
  for (auto _ : state) {
    if (g.size() >= kResetEvery) {
      g.reset();
      std::tie(a, b) = leaves();
    }
    Var y = op(a, b);
    benchmark::DoNotOptimize(y.data());
  }
  engram::bench::set_per_item(state, 1.0);
}

void bm_add1(benchmark::State& s) { run_unary_or_binary(s, 1, true, [](Var a, Var b) { return ops::add(a, b); }); }
void bm_add4(benchmark::State& s) { run_unary_or_binary(s, 4, true, [](Var a, Var b) { return ops::add(a, b); }); }
void bm_tanh4(benchmark::State& s) { run_unary_or_binary(s, 4, true, [](Var a, Var) { return ops::tanh(a); }); }
void bm_add4_nograd(benchmark::State& state) {
  Inputs in(4);
  Graph g(false);
  Var a = g.input(Tensor(in.a.data(), Shape{4})), b = g.input(Tensor(in.b.data(), Shape{4}));
  for (auto _ : state) {
    if (g.size() >= kResetEvery) {
      g.reset();
      a = g.input(Tensor(in.a.data(), Shape{4}));
      b = g.input(Tensor(in.b.data(), Shape{4}));
    }
    Var y = ops::add(a, b);
    benchmark::DoNotOptimize(y.data());
  }
  engram::bench::set_per_item(state, 1.0);
}

void bm_chain50(benchmark::State& state) {
  Inputs in(4);
  Graph g(true);
  for (auto _ : state) {
    g.reset();
    Var x = g.variable(Tensor(in.a.data(), Shape{4}));
    Var w = g.variable(Tensor(in.b.data(), Shape{4}));
    Var y = x;
    for (int i = 0; i < kChainOps; ++i) {
      switch (i % 3) {
        case 0: y = ops::add(y, w); break;
        case 1: y = ops::mul(y, w); break;
        default: y = ops::tanh(y); break;
      }
    }
    Var loss = ops::sum_all(y);
    g.backward(loss);
    benchmark::DoNotOptimize(x.grad());
  }
  engram::bench::set_per_item(state, kChainOps);
}

void register_all() {
  struct {
    const char* name;
    void (*fn)(benchmark::State&);
  } const kCases[] = {
      {"graph:add,n=1/engram/t1", bm_add1},
      {"graph:add,n=4/engram/t1", bm_add4},
      {"graph:tanh,n=4/engram/t1", bm_tanh4},
      {"graph:add,n=4,nograd/engram/t1", bm_add4_nograd},
      {"graph:chain50,n=4,fwd_bwd/engram/t1", bm_chain50},
  };
  for (const auto& c : kCases)
    benchmark::RegisterBenchmark(c.name, c.fn)->UseRealTime()->Unit(benchmark::kNanosecond);
}

}  // namespace

int main(int argc, char** argv) { return engram::bench::run_main(argc, argv, register_all); }
