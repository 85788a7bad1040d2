// Module gradient-check rows: the pointer-generator's copy mixture (CopyOutput::log_prob), checked
// in the vocabulary logits, the attention scores, the gate inputs and the gate parameters.
// Rows mix targets in the vocabulary and copied extended ids, with and without a source match,
// with a masked position holding the target (it must copy nothing), and without a mask.
// Dims: N rows 4, V vocab 5, X extra ids 2, S positions 4, Hc 3, Hs 2, Hx 2.
#include <memory>

#include "engram/core/ops.h"
#include "engram/nn/copy_output.h"
#include "engram/nn/init.h"
#include "nn/module_cases.h"

namespace engram::nn {

namespace module_cases_copy {

using Forward = std::function<Var(Graph&, const std::vector<Var>&)>;
constexpr int kN = 4, kV = 5, kX = 2, kS = 4;

// Extended ids [N, S] and targets [N]:
//   row 0: target 1, in the vocabulary, held at positions 0 and 2     (both terms)
//   row 1: target 3, in the vocabulary, held only at masked position 2 (vocabulary term only)
//   row 2: target 5 = V, copied from positions 0 and 2                (copy term only)
//   row 3: target 6 = V+1, at masked position 0 and attended position 2 (copy term only)
const std::vector<int32_t> kIds = {1, 3, 1, 5, 2, 0, 3, 6, 5, 2, 5, 0, 6, 4, 6, 1};
const std::vector<int32_t> kTargets = {1, 3, 5, 6};
const float kMask[kN * kS] = {1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1};

struct CopyRow {
  bool masked = true;
  CopyOutputConfig cfg = {.context_dim = 3, .state_dim = 2, .input_dim = 2};
  float bias = 0.0f;         // gate bias: pushes p_gen towards 0 or 1
  float score_scale = 1.0f;  // > 1: peaked attention
};

// Inputs: vocab logits [N, V], attention scores [N, S], then each gate part of nonzero width.
ModuleCase copy_case(std::string name, CopyRow row) {
  ModuleCase c;
  c.name = std::move(name);
  c.inputs = {{{kN, kV}, -2.0f, 2.0f}, {{kN, kS}, -row.score_scale, row.score_scale}};
  for (int w : {row.cfg.context_dim, row.cfg.state_dim, row.cfg.input_dim})
    if (w > 0) c.inputs.push_back({{kN, w}});
  c.build = [row](ParamStore& store, core::Rng& rng) -> Forward {
    auto out = std::make_shared<CopyOutput>(store, "copy", row.cfg, rng);
    init::constant(store, out->bias(), row.bias);
    return [out, row](Graph& g, const std::vector<Var>& in) {
      Var parts[3];
      size_t k = 2;
      const int widths[3] = {row.cfg.context_dim, row.cfg.state_dim, row.cfg.input_dim};
      for (int p = 0; p < 3; ++p)
        if (widths[p] > 0) parts[p] = in[k++];
      CopyStep step{.vocab_logits = in[0],
                    .attn_scores = in[1],
                    .gate_logit = out->gate_logit(g, parts[0], parts[1], parts[2]),
                    .source = {.ids = kIds, .extra = kX, .mask = row.masked ? kMask : nullptr}};
      return out->log_prob(g, step, kTargets);  // [N]
    };
  };
  return c;
}

}  // namespace module_cases_copy

std::vector<ModuleCase> copy_module_cases() {
  using namespace module_cases_copy;  // this file's cases
  return {
      copy_case("copy/vocab_and_oov/masked", {}),
      copy_case("copy/vocab_and_oov/no_mask", {.masked = false}),
      copy_case("copy/state_only_gate/bias3", {.cfg = {.state_dim = 2}, .bias = 3.0f}),
      copy_case("copy/peaked_scores/bias-3", {.bias = -3.0f, .score_scale = 6.0f}),
  };
}

}  // namespace engram::nn
