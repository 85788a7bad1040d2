// Gradient-check rows: reduce family (sum / mean / max along an axis, sum_all, mean_all).
#include <vector>

#include "core/grad_cases.h"

namespace engram::core {

namespace {

// A constant of x's shape whose values along `axis` are 3 * ((k + o + i) mod N) for the [O, N, I]
// view: added to x in [-1, 1] it makes every max group's values at least 1 apart (so the arg-max
// never flips under the finite-difference step) while the arg-max moves around between groups.
Var max_offsets(Graph& g, const Shape& s, int axis) {
  const int a = s.norm_axis(axis);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < a; ++i) outer *= s[i];
  for (int i = a + 1; i < s.rank(); ++i) inner *= s[i];
  const int64_t n = s[a];
  std::vector<float> v(s.numel());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i) v[(o * n + k) * inner + i] = 3.0f * static_cast<float>((k + o + i) % n);
  return g.constant(s, v.data());
}

Var max_distinct(Graph& g, Var x, int axis, bool keepdim) {
  return max(add(x, max_offsets(g, x.shape(), axis)), axis, keepdim);
}

}  // namespace

std::vector<GradCase> reduce_cases() {
  using V = const std::vector<Var>&;
  return {
      {"sum/axis0", {{{3, 4}}}, [](Graph&, V x) { return sum(x[0], 0); }},
      {"sum/last-keepdim", {{{2, 3, 4}}}, [](Graph&, V x) { return sum(x[0], -1, true); }},
      {"sum/middle-4d", {{{2, 3, 2, 2}}}, [](Graph&, V x) { return sum(x[0], 1); }},
      {"sum/neg-axis-4d-keepdim", {{{2, 3, 2, 3}}}, [](Graph&, V x) { return sum(x[0], -2, true); }},
      {"sum/1d", {{{5}}}, [](Graph&, V x) { return sum(x[0], 0); }},
      {"mean/middle", {{{2, 3, 4}}}, [](Graph&, V x) { return mean(x[0], 1); }},
      {"mean/last-keepdim", {{{3, 5}}}, [](Graph&, V x) { return mean(x[0], -1, true); }},
      {"mean/axis0-4d", {{{3, 2, 2, 2}}}, [](Graph&, V x) { return mean(x[0], 0); }},
      {"max/last", {{{3, 4}}}, [](Graph& g, V x) { return max_distinct(g, x[0], -1, false); }},
      {"max/axis0", {{{4, 3}}}, [](Graph& g, V x) { return max_distinct(g, x[0], 0, false); }},
      {"max/middle-keepdim", {{{2, 4, 3}}}, [](Graph& g, V x) { return max_distinct(g, x[0], 1, true); }},
      {"max/neg-axis-4d", {{{2, 2, 3, 2}}}, [](Graph& g, V x) { return max_distinct(g, x[0], -2, false); }},
      {"sum_all", {{{2, 3, 4}}}, [](Graph&, V x) { return sum_all(x[0]); }},
      {"mean_all/4d", {{{2, 3, 2, 2}}}, [](Graph&, V x) { return mean_all(x[0]); }},
      {"sum_all/of-reduce", {{{3, 4}}}, [](Graph&, V x) { return sum_all(mul(mean(x[0], 0), sum(x[0], 0))); }},
  };
}

}  // namespace engram::core
