// Gradient-check rows: memory-addressing family (cosine, circular convolution, l2 normalise,
// sharpen).
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> memory_cases() {
  using V = const std::vector<Var>&;
  // [2, 5]: 0.9 on one slot per row, to build near one-hot weightings.
  const std::vector<float> peak = {0, 0, 0.9f, 0, 0, 0.9f, 0, 0, 0, 0};
  GradCheckOptions small_step;
  small_step.eps = 1e-3f;
  return {
      {"cosine_similarity", {{{3, 4}}, {{3, 4}}}, [](Graph&, V x) { return cosine_similarity(x[0], x[1]); }},
      {"cosine_similarity/broadcast-rows", {{{2, 3, 4}}, {{2, 1, 4}}},
       [](Graph&, V x) { return cosine_similarity(x[0], x[1]); }},
      {"cosine_similarity/broadcast-vector", {{{3, 4}}, {{4}}},
       [](Graph&, V x) { return cosine_similarity(x[0], x[1]); }},
      {"cosine_similarity/vectors", {{{5}}, {{5}}}, [](Graph&, V x) { return cosine_similarity(x[0], x[1]); }},
      // a = 0 exactly. Cosine is discontinuous at a zero vector, so finite differences can only
      // see the eps branch when eps exceeds the step (1e-2): there out = a.b / (eps |b|).
      {"cosine_similarity/zero-a", {{{2, 4}, 0.0f, 0.0f}, {{2, 4}}},
       [](Graph&, V x) { return cosine_similarity(x[0], x[1], 0.25f); }},
      {"cosine_rows", {{{2, 3, 4}}, {{2, 4}}}, [](Graph&, V x) { return cosine_rows(x[0], x[1]); }},
      {"additive_score", {{{2, 3, 5}, -1.5f, 1.5f}, {{2, 5}, -1.0f, 1.0f}, {{1, 5}, -1.0f, 1.0f}},
       [](Graph&, V x) { return additive_score(x[0], x[1], x[2]); }},
      {"additive_score/saturated", {{{1, 4, 3}, 2.0f, 4.0f}, {{1, 3}, 0.5f, 1.0f}, {{3}, -1.0f, 1.0f}},
       [](Graph&, V x) { return additive_score(x[0], x[1], x[2]); }},
      {"circular_conv/S3", {{{2, 5}, 0.0f, 1.0f}, {{2, 3}, 0.0f, 1.0f}},
       [](Graph&, V x) { return circular_conv(x[0], x[1]); }},
      {"circular_conv/S5", {{{2, 6}, 0.0f, 1.0f}, {{2, 5}, 0.0f, 1.0f}},
       [](Graph&, V x) { return circular_conv(x[0], x[1]); }},
      {"circular_conv/S5>N", {{{2, 3}, 0.0f, 1.0f}, {{2, 5}, 0.0f, 1.0f}},
       [](Graph&, V x) { return circular_conv(x[0], x[1]); }},
      {"l2_normalize", {{{3, 4}}}, [](Graph&, V x) { return l2_normalize(x[0]); }},
      {"sharpen/gamma~1", {{{2, 5}, 0.1f, 1.0f}, {{2, 1}, 1.0f, 1.02f}},
       [](Graph&, V x) { return sharpen(x[0], x[1]); }},
      {"sharpen/gamma=1.01", {{{2, 5}, 0.1f, 1.0f}, {{2, 1}, 1.01f, 1.01f}},
       [](Graph&, V x) { return sharpen(x[0], x[1]); }},
      // Off-peak weights in [0.02, 0.05], gamma in [1, 3]: w^gamma curves on the scale of w, so
      // the difference step is 1e-3 (the default 1e-2 is a third of the smallest weight).
      {"sharpen/near-one-hot", {{{2, 5}, 0.02f, 0.05f}, {{2, 1}, 1.0f, 3.0f}},
       [peak](Graph& g, V x) { return sharpen(add(x[0], g.constant({2, 5}, peak.data())), x[1]); }, 1e-2,
       small_step},
  };
}

}  // namespace engram::core
