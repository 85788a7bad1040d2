// GRU and LSTM layers, forward + backward over a T=20 unroll, reported per time step.
// Dims: T time, B batch, H hidden (= input width I), G gates (3H GRU, 4H LSTM).
// Variants:
//   layer  nn::Rnn::forward: the input projection of all T steps in one GEMM [T*B, H] x W_ihᵀ,
//          then one fused cell (core::gru_cell / lstm_cell) per step. Like torch.nn.GRU / LSTM.
//   step   nn::Rnn::step per time step: input projection per step, as a decoder runs it.
//          Like a loop over torch.nn.GRUCell / LSTMCell.
// Loss = sum of the final h; gradients reach x and every parameter (ParamStore grads zeroed every
// iteration, as a training step does). FLOPs (bench/aggregate.py): 3 x the forward GEMMs,
// 3 * 2*B*(I+H)*G per step.
#include <string>
#include <vector>

#include "bench_util.h"
#include "engram/core/ops.h"
#include "engram/nn/rnn.h"

namespace {

using engram::core::Graph;
using engram::core::Shape;
using engram::core::Tensor;
using engram::core::Var;
namespace nn = engram::nn;

constexpr int kSteps = 20;  // T

void run_rnn(benchmark::State& state, nn::CellKind kind, int batch, int hidden, bool per_step, int threads) {
  engram::bench::set_threads(threads);
  engram::core::Rng rng(1);
  nn::ParamStore store;
  nn::RnnConfig cfg;
  cfg.cell = kind;
  cfg.input_size = hidden;
  cfg.hidden_size = hidden;
  nn::Rnn rnn(store, "rnn", cfg, rng);
  std::vector<float> x(int64_t{kSteps} * batch * hidden);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  Graph g(true, size_t{64} << 20);
  auto iteration = [&] {
    g.reset();
    store.zero_grad();
    Var xs = g.variable(Tensor(x.data(), Shape{kSteps, batch, hidden}));  // [T, B, I]
    Var h_last;
    if (per_step) {
      std::vector<nn::RnnState> s = rnn.zero_state(g, batch);
      for (int t = 0; t < kSteps; ++t) {
        Var xt = engram::core::reshape(engram::core::slice(xs, 0, t, t + 1), {batch, hidden});  // [B, I]
        s = rnn.step(g, xt, s);
      }
      h_last = s[0].h;
    } else {
      h_last = rnn.forward(g, xs).final[0].h;
    }
    g.backward(engram::core::sum_all(h_last));
    benchmark::DoNotOptimize(store.grads());
  };
  // Warm-up to the steady state of a training loop: the first cycle sizes the arena (its extra
  // blocks are merged at the next reset), the second touches the merged block's fresh pages.
  iteration();
  iteration();
  for (auto _ : state) iteration();
  engram::bench::set_per_item(state, kSteps);
}

void register_all() {
  struct Size {
    int b, h;
  };
  const Size kSizes[] = {{16, 128}, {64, 512}};
  for (nn::CellKind kind : {nn::CellKind::kGru, nn::CellKind::kLstm})
    for (Size s : kSizes)
      for (bool per_step : {false, true})
        for (int t = 1; t <= 2; ++t) {
          std::string name = std::string("rnn:") + (kind == nn::CellKind::kGru ? "gru" : "lstm") +
                             ",B=" + std::to_string(s.b) + ",H=" + std::to_string(s.h) + ",T=" +
                             std::to_string(kSteps) + (per_step ? "/step" : "/layer") + "/t" +
                             std::to_string(t);
          benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
            run_rnn(st, kind, s.b, s.h, per_step, t);
          })->UseRealTime()->Unit(benchmark::kMicrosecond);
        }
}

}  // namespace

int main(int argc, char** argv) { return engram::bench::run_main(argc, argv, register_all); }
