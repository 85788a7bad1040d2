// Gradient-check rows: index family (gather_rows, scatter_add_rows, pick, select_rows). Repeated
// ids make gradients accumulate into one row; unused rows must get exactly zero.
#include <cstdint>
#include <vector>

#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> index_cases() {
  using V = const std::vector<Var>&;
  return {
      {"gather_rows/repeated-ids", {{{5, 3}}}, [](Graph&, V x) { return gather_rows(x[0], {1, 3, 1, 0, 1}); }},
      {"gather_rows/pointer-then-tanh", {{{6, 4}}}, [](Graph&, V x) {
         const int32_t ids[] = {5, 2, 2, 0};
         return tanh(gather_rows(x[0], ids, 4));
       }},
      {"gather_rows/used-twice", {{{4, 2}}},
       [](Graph&, V x) { return mul(gather_rows(x[0], {0, 3, 3}), gather_rows(x[0], {3, 1, 3})); }},
      {"scatter_add_rows", {{{5, 3}}, {{4, 3}}},
       [](Graph&, V x) { return scatter_add_rows(x[0], x[1], {0, 2, 2, 4}); }},
      {"scatter_add_rows/3d-then-square", {{{3, 2, 2}}, {{2, 2, 2}}},
       [](Graph&, V x) { return square(scatter_add_rows(x[0], x[1], {1, 1})); }},
      {"pick", {{{4, 5}}}, [](Graph&, V x) { return pick(x[0], {0, 4, 2, 2}); }},
      {"pick/3d", {{{2, 3, 4}}}, [](Graph&, V x) { return pick(x[0], {3, 0, 1, 1, 2, 3}); }},
      {"pick/of-exp", {{{3, 4}}}, [](Graph&, V x) { return pick(exp(x[0]), {1, 1, 3}); }},
      {"select_rows/3d", {{{4, 2, 3}}}, [](Graph&, V x) { return select_rows(x[0], {3, 0, 3}); }},
      {"select_rows/1d", {{{5}}}, [](Graph&, V x) { return select_rows(x[0], {4, 4, 1}); }},
      {"select_rows/4d", {{{3, 2, 2, 2}}}, [](Graph&, V x) { return select_rows(x[0], {2, 0}); }},
  };
}

}  // namespace engram::core
