// The gradient-check table: one row per op (and per interesting configuration of an op).
// Each family contributes its rows from tests/core/grad_cases_<family>.cc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engram/core/grad_check.h"
#include "engram/core/ops.h"

namespace engram::core {

struct GradCase {
  std::string op;                  // row name, e.g. "softmax/masked"
  std::vector<OpInput> inputs;     // shapes and value ranges of the differentiable inputs
  std::function<Var(Graph&, const std::vector<Var>&)> fn;
  double tol = 1e-2;               // max scaled error allowed
  GradCheckOptions opt = {};
};

std::vector<GradCase> elementwise_cases();
std::vector<GradCase> matmul_cases();
std::vector<GradCase> reduce_cases();
std::vector<GradCase> shape_cases();
std::vector<GradCase> index_cases();
std::vector<GradCase> softmax_cases();
std::vector<GradCase> loss_cases();
std::vector<GradCase> memory_cases();
std::vector<GradCase> norm_cases();
std::vector<GradCase> rnn_cases();
std::vector<GradCase> ntm_cases();

}  // namespace engram::core
