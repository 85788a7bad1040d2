// Gradient-check rows: element-wise and matmul families.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> elementwise_cases() {
  using V = const std::vector<Var>&;
  return {
      {"add", {{{3, 4}}, {{3, 4}}}, [](Graph&, V x) { return add(x[0], x[1]); }},
      {"add/broadcast-row", {{{3, 4}}, {{4}}}, [](Graph&, V x) { return add(x[0], x[1]); }},
      {"add/broadcast-both", {{{3, 1, 4}}, {{2, 1}}}, [](Graph&, V x) { return add(x[0], x[1]); }},
      {"sub/broadcast-col", {{{3, 4}}, {{3, 1}}}, [](Graph&, V x) { return sub(x[0], x[1]); }},
      {"mul", {{{2, 3, 4}}, {{2, 3, 4}}}, [](Graph&, V x) { return mul(x[0], x[1]); }},
      {"mul/scalar", {{{2, 5}}, {{1}}}, [](Graph&, V x) { return mul(x[0], x[1]); }},
      {"div", {{{3, 4}}, {{3, 4}, 0.5f, 2.0f}}, [](Graph&, V x) { return div(x[0], x[1]); }},
      {"div/broadcast", {{{2, 3, 4}}, {{3, 1}, 0.5f, 2.0f}}, [](Graph&, V x) { return div(x[0], x[1]); }},
      {"neg", {{{5}}}, [](Graph&, V x) { return neg(x[0]); }},
      {"scale", {{{2, 3}}}, [](Graph&, V x) { return scale(x[0], -2.5f); }},
      {"add_scalar", {{{2, 3}}}, [](Graph&, V x) { return add_scalar(x[0], 3.0f); }},
      {"one_minus", {{{2, 3}}}, [](Graph&, V x) { return one_minus(x[0]); }},
      {"exp", {{{3, 4}}}, [](Graph&, V x) { return exp(x[0]); }},
      {"log", {{{3, 4}, 0.5f, 3.0f}}, [](Graph&, V x) { return log(x[0]); }},
      {"tanh", {{{3, 4}, -2.0f, 2.0f}}, [](Graph&, V x) { return tanh(x[0]); }},
      {"sigmoid", {{{3, 4}, -3.0f, 3.0f}}, [](Graph&, V x) { return sigmoid(x[0]); }},
      {"relu", {{{3, 4}, 0.05f, 1.0f}}, [](Graph&, V x) { return relu(x[0]); }},
      {"relu/negative", {{{3, 4}, -1.0f, -0.05f}}, [](Graph&, V x) { return relu(x[0]); }},
      {"softplus", {{{3, 4}, -4.0f, 4.0f}}, [](Graph&, V x) { return softplus(x[0]); }},
      {"pow", {{{3, 4}, 0.5f, 2.0f}}, [](Graph&, V x) { return pow(x[0], 2.5f); }},
      {"sqrt", {{{3, 4}, 0.5f, 2.0f}}, [](Graph&, V x) { return sqrt(x[0]); }},
      {"square", {{{3, 4}}}, [](Graph&, V x) { return square(x[0]); }},
  };
}

std::vector<GradCase> matmul_cases() {
  using V = const std::vector<Var>&;
  return {
      {"matmul", {{{3, 4}}, {{4, 5}}}, [](Graph&, V x) { return matmul(x[0], x[1]); }},
      {"matmul/trans_a", {{{4, 3}}, {{4, 5}}}, [](Graph&, V x) { return matmul(x[0], x[1], true); }},
      {"matmul/trans_b", {{{3, 4}}, {{5, 4}}}, [](Graph&, V x) { return matmul(x[0], x[1], false, true); }},
      {"matmul/trans_ab", {{{4, 3}}, {{5, 4}}}, [](Graph&, V x) { return matmul(x[0], x[1], true, true); }},
      {"affine", {{{2, 3, 4}}, {{5, 4}}, {{5}}}, [](Graph&, V x) { return affine(x[0], x[1], x[2]); }},
      {"affine/no-bias", {{{3, 4}}, {{5, 4}}}, [](Graph&, V x) { return affine(x[0], x[1]); }},
      {"bmm", {{{2, 3, 4}}, {{2, 4, 5}}}, [](Graph&, V x) { return bmm(x[0], x[1]); }},
      {"bmm/trans_a", {{{2, 4, 3}}, {{2, 4, 5}}}, [](Graph&, V x) { return bmm(x[0], x[1], true); }},
      {"bmm/trans_b", {{{2, 3, 4}}, {{2, 5, 4}}}, [](Graph&, V x) { return bmm(x[0], x[1], false, true); }},
  };
}

}  // namespace engram::core
