// Gradient-check rows: softmax family (plain, masked, all-masked row, log-softmax).
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> softmax_cases() {
  using V = const std::vector<Var>&;
  // [3, 5]: row 0 keeps 3 positions, row 1 keeps one, row 2 keeps all.
  const std::vector<float> mask = {1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1};
  // [2, 4]: row 1 fully masked (softmax gives zeros and zero gradient).
  const std::vector<float> mask_empty_row = {0, 1, 1, 0, 0, 0, 0, 0};
  return {
      {"softmax", {{{3, 5}, -2.0f, 2.0f}}, [](Graph&, V x) { return softmax(x[0]); }},
      {"softmax/rank4", {{{2, 2, 2, 3}, -2.0f, 2.0f}}, [](Graph&, V x) { return softmax(x[0]); }},
      {"softmax/wide-logits", {{{2, 6}, -8.0f, 8.0f}}, [](Graph&, V x) { return softmax(x[0]); }},
      {"softmax/masked", {{{3, 5}, -2.0f, 2.0f}}, [mask](Graph&, V x) { return softmax(x[0], mask.data()); }},
      {"softmax/masked-empty-row", {{{2, 4}, -2.0f, 2.0f}},
       [mask_empty_row](Graph&, V x) { return softmax(x[0], mask_empty_row.data()); }},
      {"log_softmax", {{{3, 5}, -2.0f, 2.0f}}, [](Graph&, V x) { return log_softmax(x[0]); }},
      {"log_softmax/rank3", {{{2, 3, 4}, -3.0f, 3.0f}}, [](Graph&, V x) { return log_softmax(x[0]); }},
      // Masked log-probs are -inf, which no finite weighted sum can hold: read them through exp
      // (masked -> 0) and through nll of unmasked targets instead.
      {"log_softmax/masked(exp)", {{{3, 5}, -2.0f, 2.0f}},
       [mask](Graph&, V x) { return exp(log_softmax(x[0], mask.data())); }},
      {"log_softmax/masked(nll)", {{{3, 5}, -2.0f, 2.0f}},
       [mask](Graph&, V x) { return nll(log_softmax(x[0], mask.data()), {3, 2, 0}); }},
  };
}

}  // namespace engram::core
