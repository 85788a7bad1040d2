// `engram demo`: the embedded default. Until the translation model lands it fits a tiny
// two-layer network on a generated regression task with the engine and prints the loss falling.
#include <cstdio>

#include "engram/cli/commands.h"
#include "engram/core/ops.h"
#include "engram/core/rng.h"

namespace engram::cli {

namespace {

int demo_main() {
  using namespace engram::core;
  Rng rng(42);
  // Task: y = sin-like target of 8 inputs, learned by x -> tanh(x W1^T + b1) W2^T + b2.
  const int n = 256, d = 8, h = 32;
  std::vector<float> xs(n * d), ys(n);
  for (int i = 0; i < n; ++i) {
    float s = 0;
    for (int j = 0; j < d; ++j) {
      xs[i * d + j] = rng.uniform(-1.0f, 1.0f);
      s += xs[i * d + j] * (j % 2 ? 1.0f : -0.5f);
    }
    ys[i] = std::tanh(s);
  }
  std::vector<float> w1(h * d), b1(h, 0), w2(h), b2(1, 0);
  for (auto& v : w1) v = rng.uniform(-0.5f, 0.5f);
  for (auto& v : w2) v = rng.uniform(-0.5f, 0.5f);
  std::vector<float> gw1(w1.size()), gb1(h), gw2(h), gb2(1);
  Graph g;
  for (int step = 0; step <= 300; ++step) {
    g.reset();
    Var x = g.input(Tensor{xs.data(), {n, d}});
    Var W1 = g.leaf(Tensor{w1.data(), {h, d}}, gw1.data());
    Var B1 = g.leaf(Tensor{b1.data(), {h}}, gb1.data());
    Var W2 = g.leaf(Tensor{w2.data(), {1, h}}, gw2.data());
    Var B2 = g.leaf(Tensor{b2.data(), {1}}, gb2.data());
    Var pred = affine(tanh(affine(x, W1, B1)), W2, B2);
    Var diff = sub(pred, g.input(Tensor{ys.data(), {n, 1}}));
    Var loss = scale(matmul(diff, diff, true, false), 1.0f / n);  // mean squared error
    g.backward(loss);
    if (step % 50 == 0) std::printf("step %3d  mse %.5f\n", step, loss.data()[0]);
    auto sgd = [](std::vector<float>& p, std::vector<float>& dp) {
      for (size_t i = 0; i < p.size(); ++i) {
        p[i] -= 0.2f * dp[i];
        dp[i] = 0;
      }
    };
    sgd(w1, gw1), sgd(b1, gb1), sgd(w2, gw2), sgd(b2, gb2);
  }
  return 0;
}

}  // namespace

void register_demo(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "train a small model on a generated task and show it working");
  cmd->callback([] { demo_main(); });
}

}  // namespace engram::cli
