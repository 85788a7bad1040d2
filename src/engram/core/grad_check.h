// Finite-difference gradient checking. The checked function builds its output from leaves over
// caller-owned buffers (op inputs or a ParamStore); the harness compares the analytic gradient of
// L = sum(w * out) (fixed random w, L accumulated in double) with central differences.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/core/rng.h"

namespace engram::core {

struct GradTarget {
  std::string name;
  float* value;  // perturbed in place (restored afterwards)
  float* grad;   // analytic gradient written here by the function's leaf
  int64_t size;
};

struct GradCheckOptions {
  float eps = 1e-2f;        // central-difference step
  double floor = 1e-1;      // error = |a - n| / max(|a|, |n|, floor)
  int max_elements = 48;    // per target, sampled deterministically when larger
  uint64_t seed = 7;
};

struct GradCheckResult {
  double max_error = 0;     // worst scaled error over checked elements
  std::string worst;        // "target[i]: analytic a vs numeric n"
  int64_t checked = 0;
};

// f(g) must create leaves with g.leaf(Tensor{t.value,...}, t.grad) for every target, and return
// the output Var. It is called once with grad enabled and twice per checked element without.
GradCheckResult grad_check(const std::function<Var(Graph&)>& f, const std::vector<GradTarget>& targets,
                           const GradCheckOptions& opt = {});

// Convenience for ops: owns random inputs of the given shapes (uniform in [lo, hi]) and passes
// them as leaves to `op`.
struct OpInput {
  Shape shape;
  float lo = -1.0f, hi = 1.0f;
};
GradCheckResult grad_check_op(const std::function<Var(Graph&, const std::vector<Var>&)>& op,
                              const std::vector<OpInput>& inputs, const GradCheckOptions& opt = {});

}  // namespace engram::core
