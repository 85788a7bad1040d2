// Module gradient-check rows: Linear, Embedding (incl. weight tying), Attention (every scorer,
// with and without a mask), LayerNorm, Dropout. Attention rows check the context AND α (their
// concatenation is the output), every parameter, the query and the memory.
// Dims: B batch, S source len, H memory width, Hq query width, A attention dim, K/N linear in/out.
#include <memory>

#include "engram/core/ops.h"
#include "engram/nn/attention.h"
#include "engram/nn/dropout.h"
#include "engram/nn/embedding.h"
#include "engram/nn/init.h"
#include "engram/nn/layer_norm.h"
#include "engram/nn/linear.h"
#include "nn/module_cases.h"

namespace engram::nn {

namespace {

using Forward = std::function<Var(Graph&, const std::vector<Var>&)>;

ModuleCase linear_case(std::string name, Shape x_shape, bool bias, LinearInit init) {
  ModuleCase c;
  c.name = std::move(name);
  c.inputs = {{x_shape}};  // [..., K]
  c.build = [x_shape, bias, init](ParamStore& store, core::Rng& rng) -> Forward {
    LinearConfig cfg{.in_dim = x_shape.last(), .out_dim = 5, .bias = bias, .init = init};
    auto lin = std::make_shared<Linear>(store, "lin", cfg, rng);
    if (lin->bias()) init::uniform(store, *lin->bias(), rng, -0.5f, 0.5f);  // non-zero bias
    return [lin](Graph& g, const std::vector<Var>& in) { return lin->forward(g, in[0]); };  // [..., N]
  };
  return c;
}

ModuleCase embedding_case(std::string name, std::vector<int32_t> ids, Shape ids_shape, int32_t padding_id) {
  ModuleCase c;
  c.name = std::move(name);
  c.build = [ids, ids_shape, padding_id](ParamStore& store, core::Rng& rng) -> Forward {
    EmbeddingConfig cfg{.vocab = 6, .dim = 4, .padding_id = padding_id, .init_stddev = 0.5f};
    auto emb = std::make_shared<Embedding>(store, "emb", cfg, rng);
    return [emb, ids, ids_shape](Graph& g, const std::vector<Var>&) {
      return emb->forward(g, ids, ids_shape);  // ids_shape + [D]
    };
  };
  return c;
}

// Embedding [V=6, D=4] looked up, then projected back to V logits through the same table.
ModuleCase tied_case() {
  ModuleCase c;
  c.name = "embedding+linear/tied_weight";
  c.build = [](ParamStore& store, core::Rng& rng) -> Forward {
    const EmbeddingConfig cfg{.vocab = 6, .dim = 4, .init_stddev = 0.5f};
    auto emb = std::make_shared<Embedding>(store, "emb", cfg, rng);
    auto out = std::make_shared<Linear>(store, "out", emb->weight(), /*bias=*/true);
    init::uniform(store, *out->bias(), rng, -0.5f, 0.5f);
    return [emb, out](Graph& g, const std::vector<Var>&) {
      return out->forward(g, core::tanh(emb->forward(g, {1, 3, 1, 5})));  // [4, V]
    };
  };
  return c;
}

struct AttnRow {
  AttentionScore score;
  MemoryLayout layout = MemoryLayout::kTimeMajor;
  enum { kNone, kLengths, kMask } masking = kNone;
  int steps = 1;  // > 1: several queries against one prepared memory
};

// B=2, S=4, H=3, Hq=5 (3 for dot), A=6. Inputs: query_k [B, Hq] for each step, then memory.
ModuleCase attention_case(std::string name, AttnRow row) {
  constexpr int kB = 2, kS = 4, kH = 3, kA = 6;
  const int hq = row.score == AttentionScore::kDot ? kH : 5;
  ModuleCase c;
  c.name = std::move(name);
  for (int k = 0; k < row.steps; ++k) c.inputs.push_back({{kB, hq}});  // [B, Hq]
  c.inputs.push_back({row.layout == MemoryLayout::kTimeMajor ? Shape{kS, kB, kH} : Shape{kB, kS, kH}});
  c.build = [row, hq](ParamStore& store, core::Rng& rng) -> Forward {
    AttentionConfig cfg{.score = row.score, .query_dim = hq, .memory_dim = kH, .attn_dim = kA, .layout = row.layout};
    auto attn = std::make_shared<Attention>(store, "attn", cfg, rng);
    return [attn, row](Graph& g, const std::vector<Var>& in) {
      static const float kMask[kB * kS] = {1, 0, 1, 1, 0, 1, 1, 0};  // [B, S]
      Var memory = in[row.steps];
      AttentionMemory mem = row.masking == AttnRow::kLengths ? attn->prepare(g, memory, {4, 2})
                            : row.masking == AttnRow::kMask  ? attn->prepare(g, memory, kMask)
                                                             : attn->prepare(g, memory);
      std::vector<Var> parts;
      for (int k = 0; k < row.steps; ++k) {
        AttentionOutput out = attn->step(g, mem, in[k]);
        parts.push_back(out.context);  // [B, H]
        parts.push_back(out.alpha);    // [B, S]
      }
      return core::concat(parts, 1);   // [B, steps * (H + S)]
    };
  };
  return c;
}

ModuleCase layer_norm_case() {
  ModuleCase c;
  c.name = "layer_norm/random_gain_bias";
  c.inputs = {{{2, 3, 5}}};  // [.., D]
  c.build = [](ParamStore& store, core::Rng& rng) -> Forward {
    auto ln = std::make_shared<LayerNorm>(store, "ln", LayerNormConfig{.dim = 5});
    init::uniform(store, ln->gain(), rng, 0.5f, 1.5f);
    init::uniform(store, ln->bias(), rng, -0.5f, 0.5f);
    return [ln](Graph& g, const std::vector<Var>& in) { return ln->forward(g, in[0]); };
  };
  return c;
}

ModuleCase dropout_case() {
  ModuleCase c;
  c.name = "dropout/training_p0.3";
  c.inputs = {{{4, 6}}};
  c.build = [](ParamStore&, core::Rng&) -> Forward {
    auto drop = std::make_shared<Dropout>(0.3f);
    return [drop](Graph& g, const std::vector<Var>& in) {
      core::Rng rng(3);  // the same mask on every evaluation
      return drop->forward(g, in[0], rng, /*training=*/true);
    };
  };
  return c;
}

}  // namespace

std::vector<ModuleCase> basic_module_cases() {
  using S = AttentionScore;
  using L = MemoryLayout;
  return {
      linear_case("linear/bias", {3, 4}, true, LinearInit::kGlorot),
      linear_case("linear/no_bias", {3, 4}, false, LinearInit::kGlorot),
      linear_case("linear/3d_input", {2, 3, 4}, true, LinearInit::kPyTorch),
      embedding_case("embedding/repeated_ids", {2, 0, 2, 4, 2, 0}, {6}, -1),
      embedding_case("embedding/padding_3d_ids", {2, 0, 3, 0, 2, 5}, {3, 2}, 0),
      tied_case(),
      attention_case("attention/dot", {S::kDot}),
      attention_case("attention/dot/lengths", {S::kDot, L::kTimeMajor, AttnRow::kLengths}),
      attention_case("attention/general", {S::kGeneral}),
      attention_case("attention/general/lengths", {S::kGeneral, L::kTimeMajor, AttnRow::kLengths}),
      attention_case("attention/additive", {S::kAdditive}),
      attention_case("attention/additive/lengths", {S::kAdditive, L::kTimeMajor, AttnRow::kLengths}),
      attention_case("attention/additive/batch_major/mask", {S::kAdditive, L::kBatchMajor, AttnRow::kMask}),
      attention_case("attention/general/mask/two_steps", {S::kGeneral, L::kTimeMajor, AttnRow::kMask, 2}),
      attention_case("attention/additive/lengths/two_steps", {S::kAdditive, L::kTimeMajor, AttnRow::kLengths, 2}),
      layer_norm_case(),
      dropout_case(),
  };
}

}  // namespace engram::nn
