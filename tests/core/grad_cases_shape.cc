// Gradient-check rows: shape family (reshape, transpose, permute, concat, split, slice). These
// ops only move values, so the rows also compose them with a non-linear op or use an input twice
// to check that view gradients accumulate into the input.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> shape_cases() {
  using V = const std::vector<Var>&;
  return {
      {"reshape", {{{2, 3, 4}}}, [](Graph&, V x) { return reshape(x[0], {6, 4}); }},
      {"reshape/4d-then-tanh", {{{2, 6}}}, [](Graph&, V x) { return tanh(reshape(x[0], {2, 1, 3, 2})); }},
      {"reshape/used-twice", {{{3, 4}}},
       [](Graph&, V x) { return mul(reshape(x[0], {4, 3}), reshape(x[0], {4, 3})); }},
      {"transpose", {{{3, 4}}}, [](Graph&, V x) { return transpose(x[0]); }},
      {"transpose/outer-axes-3d", {{{2, 3, 4}}}, [](Graph&, V x) { return transpose(x[0], 0, 2); }},
      {"transpose/leading-3d", {{{2, 3, 4}}}, [](Graph&, V x) { return transpose(x[0], 0, 1); }},
      {"transpose/neg-axes-4d", {{{2, 3, 2, 4}}}, [](Graph&, V x) { return transpose(x[0], -3, -1); }},
      {"transpose/tiled-large", {{{40, 37}}}, [](Graph&, V x) { return transpose(x[0]); },
       1e-2, {.max_elements = 200}},
      {"permute/3d", {{{2, 3, 4}}}, [](Graph&, V x) { return permute(x[0], {2, 0, 1}); }},
      {"permute/4d-last-kept", {{{2, 3, 2, 4}}}, [](Graph&, V x) { return permute(x[0], {2, 0, 1, 3}); }},
      {"permute/4d-reverse", {{{2, 3, 2, 4}}}, [](Graph&, V x) { return permute(x[0], {3, 2, 1, 0}); }},
      {"permute/unit-dims", {{{3, 1, 4}}}, [](Graph&, V x) { return permute(x[0], {-1, 0, 1}); }},
      {"concat/axis0", {{{2, 3}}, {{1, 3}}, {{3, 3}}}, [](Graph&, V x) { return concat({x[0], x[1], x[2]}, 0); }},
      {"concat/last", {{{2, 3}}, {{2, 1}}}, [](Graph&, V x) { return concat({x[0], x[1]}, -1); }},
      {"concat/middle-3d", {{{2, 1, 3}}, {{2, 2, 3}}}, [](Graph&, V x) { return concat({x[0], x[1]}, 1); }},
      {"concat/four-inputs-4d", {{{1, 2, 2, 2}}, {{1, 2, 1, 2}}, {{1, 2, 3, 2}}, {{1, 2, 1, 2}}},
       [](Graph&, V x) { return concat({x[0], x[1], x[2], x[3]}, 2); }},
      {"concat/same-input-twice", {{{2, 3}}}, [](Graph&, V x) { return concat({x[0], tanh(x[0]), x[0]}, 1); }},
      {"split/axis0", {{{5, 3}}}, [](Graph&, V x) {
         auto p = split(x[0], {2, 1, 2}, 0);
         return concat({scale(p[2], 2.0f), square(p[0]), p[1]}, 0);
       }},
      {"split/last-3d", {{{2, 2, 6}}}, [](Graph&, V x) {
         auto p = split(x[0], {3, 0, 1, 2}, -1);
         return concat({p[3], tanh(p[0]), p[1], scale(p[2], -1.5f)}, -1);
       }},
      {"split/one-piece-used", {{{2, 4, 3}}}, [](Graph&, V x) { return split(x[0], {1, 3}, 1)[1]; }},
      {"slice/axis0-view", {{{5, 3}}}, [](Graph&, V x) { return slice(x[0], 0, 1, 4); }},
      {"slice/middle-3d", {{{2, 5, 3}}}, [](Graph&, V x) { return slice(x[0], 1, 2, 5); }},
      {"slice/last-neg-axis", {{{3, 6}}}, [](Graph&, V x) { return slice(x[0], -1, 1, 3); }},
      {"slice/4d-axis2", {{{2, 2, 4, 3}}}, [](Graph&, V x) { return slice(x[0], 2, 0, 2); }},
      {"slice/of-slice-view", {{{6, 2, 2}}}, [](Graph&, V x) { return slice(slice(x[0], 0, 1, 5), 0, 2, 4); }},
      {"slice/overlapping-views", {{{5, 3}}},
       [](Graph&, V x) { return mul(slice(x[0], 0, 0, 3), slice(x[0], 0, 2, 5)); }},
  };
}

}  // namespace engram::core
