// Gradient-check rows: normalisation family (layer norm, dropout).
#include "core/grad_cases.h"

namespace engram::core {

namespace {

// A fresh Rng(3) per call draws the same mask on every evaluation of the harness.
Var dropout_fixed_mask(Graph& g, Var x, float p) {
  Rng r(3);
  return dropout(x, p, r);
}

}  // namespace

std::vector<GradCase> norm_cases() {
  using V = const std::vector<Var>&;
  return {
      {"layer_norm", {{{3, 6}}, {{6}, 0.5f, 1.5f}, {{6}}},
       [](Graph&, V x) { return layer_norm(x[0], x[1], x[2]); }},
      {"layer_norm/rank4", {{{2, 2, 2, 5}, -2.0f, 2.0f}, {{5}, 0.5f, 1.5f}, {{5}}},
       [](Graph&, V x) { return layer_norm(x[0], x[1], x[2]); }},
      {"layer_norm/no-affine", {{{3, 6}}}, [](Graph&, V x) { return layer_norm(x[0], Var{}, Var{}); }},
      {"layer_norm/bias-only", {{{3, 6}}, {{6}}}, [](Graph&, V x) { return layer_norm(x[0], Var{}, x[1]); }},
      {"dropout", {{{4, 5}}}, [](Graph& g, V x) { return dropout_fixed_mask(g, x[0], 0.3f); }},
      {"dropout/p=0", {{{4, 5}}}, [](Graph& g, V x) { return dropout_fixed_mask(g, x[0], 0.0f); }},
  };
}

}  // namespace engram::core
