// Gradient-check rows: loss family (cross-entropy variants, NLL, BCE with logits, MSE).
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> loss_cases() {
  using V = const std::vector<Var>&;
  const std::vector<int32_t> t4 = {1, 0, 4, 2};         // [4] targets for [4, 5]
  const std::vector<int32_t> t4_pad = {3, -1, 2, -1};   // two ignored rows (default ignore -1)
  const std::vector<int32_t> t6 = {0, 4, 1, 1, 3, 2};   // [6] for [2, 3, 5]
  const std::vector<float> bce_t = {0, 1, 0.5f, 0.25f, 1, 0, 0, 1, 0.9f, 0.1f, 1, 0};  // [3, 4]
  const std::vector<float> mse_t = {0.5f, -0.25f, 1, 0, -1, 0.75f, 0.3f, -0.6f, 0.2f, 0.1f, -0.9f, 0.4f};
  CrossEntropyOptions sum;
  sum.mean = false;
  CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1f;
  CrossEntropyOptions smooth_ignore2_sum;  // padding id 2, smoothing, summed
  smooth_ignore2_sum.label_smoothing = 0.2f;
  smooth_ignore2_sum.ignore_index = 2;
  smooth_ignore2_sum.mean = false;
  return {
      {"cross_entropy", {{{4, 5}, -2.0f, 2.0f}}, [t4](Graph&, V x) { return cross_entropy(x[0], t4); }},
      {"cross_entropy/sum", {{{4, 5}, -2.0f, 2.0f}}, [t4, sum](Graph&, V x) { return cross_entropy(x[0], t4, sum); }},
      {"cross_entropy/smoothing", {{{4, 5}, -2.0f, 2.0f}},
       [t4, smooth](Graph&, V x) { return cross_entropy(x[0], t4, smooth); }},
      {"cross_entropy/ignore", {{{4, 5}, -2.0f, 2.0f}}, [t4_pad](Graph&, V x) { return cross_entropy(x[0], t4_pad); }},
      {"cross_entropy/smooth+ignore+sum", {{{4, 5}, -2.0f, 2.0f}},
       [t4, smooth_ignore2_sum](Graph&, V x) { return cross_entropy(x[0], t4, smooth_ignore2_sum); }},
      {"cross_entropy/rank3", {{{2, 3, 5}, -3.0f, 3.0f}}, [t6](Graph&, V x) { return cross_entropy(x[0], t6); }},
      {"nll", {{{4, 5}, -3.0f, 0.0f}}, [t4](Graph&, V x) { return nll(x[0], t4); }},
      {"nll/smoothing", {{{4, 5}, -3.0f, 0.0f}}, [t4, smooth](Graph&, V x) { return nll(x[0], t4, smooth); }},
      {"nll/smooth+ignore+sum", {{{4, 5}, -3.0f, 0.0f}},
       [t4, smooth_ignore2_sum](Graph&, V x) { return nll(x[0], t4, smooth_ignore2_sum); }},
      {"nll/ignore", {{{4, 5}, -3.0f, 0.0f}}, [t4_pad](Graph&, V x) { return nll(x[0], t4_pad); }},
      {"nll(log_softmax)/smoothing", {{{4, 5}, -2.0f, 2.0f}},
       [t4, smooth](Graph&, V x) { return nll(log_softmax(x[0]), t4, smooth); }},
      {"bce_with_logits", {{{3, 4}, -4.0f, 4.0f}},
       [bce_t](Graph&, V x) { return bce_with_logits(x[0], bce_t.data()); }},
      {"mse", {{{3, 4}}}, [mse_t](Graph&, V x) { return mse(x[0], mse_t.data()); }},
  };
}

}  // namespace engram::core
