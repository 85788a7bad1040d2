// Module gradient-check rows for the sequence-to-sequence parts: attention with per-position
// score features (and its raw scores), the RNN encoder over tokens and over feature vectors, the
// attention decoder step (Bahdanau with score features, Luong with input feeding, the fixed
// context) with its readout, and the pointer output (clipped, masked).
// Dims: B batch 2, S positions 4, F features, E input, H hidden, C context, P readout.
#include <memory>

#include "engram/core/ops.h"
#include "engram/nn/attention.h"
#include "engram/nn/attention_decoder.h"
#include "engram/nn/encoder.h"
#include "engram/nn/output_layer.h"
#include "nn/module_cases.h"

namespace engram::nn {

namespace module_cases_seq {

using Forward = std::function<Var(Graph&, const std::vector<Var>&)>;
constexpr int kB = 2, kS = 4;

Var flat(Var v) { return core::reshape(v, {static_cast<int>(v.numel())}); }

// Inputs: query [B, 5], memory [S, B, 3], features [B, S, 2].
ModuleCase attention_features_case() {
  ModuleCase c;
  c.name = "attention/additive/score_features";
  c.inputs = {{{kB, 5}}, {{kS, kB, 3}}, {{kB, kS, 2}}};
  c.build = [](ParamStore& store, core::Rng& rng) -> Forward {
    auto attn = std::make_shared<Attention>(
        store, "attn",
        AttentionConfig{.score = AttentionScore::kAdditive, .query_dim = 5, .memory_dim = 3, .attn_dim = 6,
                        .feature_dim = 2},
        rng);
    return [attn](Graph& g, const std::vector<Var>& in) {
      AttentionOutput o = attn->step(g, attn->prepare(g, in[1], {4, 3}), in[0], in[2]);
      return core::concat({flat(o.scores), flat(o.context), flat(o.alpha)}, 0);
    };
  };
  return c;
}

// Token encoder (ids fixed) or feature encoder (inputs [S, B, F=3]); output: memory and final_top.
ModuleCase encoder_case(std::string name, bool features, CellKind cell, bool bidirectional, int layers) {
  ModuleCase c;
  c.name = std::move(name);
  if (features) c.inputs = {{{kS, kB, 3}}};
  c.build = [features, cell, bidirectional, layers](ParamStore& store, core::Rng& rng) -> Forward {
    const RnnEncoderConfig cfg{.cell = cell, .units = 3, .layers = layers, .bidirectional = bidirectional};
    std::shared_ptr<RnnEncoder> enc =
        features ? std::make_shared<RnnEncoder>(store, "enc", 3, 4, cfg, rng)
                 : std::make_shared<RnnEncoder>(
                       store, std::make_unique<Embedding>(store, "enc/embed", EmbeddingConfig{.vocab = 7, .dim = 4}, rng),
                       "enc/rnn", cfg, rng);
    return [enc, features](Graph& g, const std::vector<Var>& in) {
      static const std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6, 2, 0};  // [S, B]
      static const std::vector<int32_t> lengths = {4, 3};
      EncoderInput x{.steps = kS, .batch = kB, .lengths = lengths};
      if (features) x.features = in[0];
      else x.ids = ids;
      EncodedSource e = enc->encode(g, x, nullptr);
      return core::concat({flat(e.outputs), flat(e.final_top)}, 0);
    };
  };
  return c;
}

struct DecoderRow {
  CellKind cell = CellKind::kGru;
  bool attention = true, luong = false;
  int features = 0;  // score features F
  int layers = 1;
};

// Inputs: memory [S, B, C=4], final_top [B, C], x [B, E=3] (the step's input) and, with F > 0,
// score features [B, S, F]. Two steps from the bridged initial state; output: both steps'
// readouts, the final states and α.
ModuleCase decoder_case(std::string name, DecoderRow row) {
  ModuleCase c;
  c.name = std::move(name);
  c.inputs = {{{kS, kB, 4}}, {{kB, 4}}, {{kB, 3}}};
  if (row.features > 0) c.inputs.push_back({{kB, kS, row.features}});
  c.build = [row](ParamStore& store, core::Rng& rng) -> Forward {
    auto dec = std::make_shared<AttentionDecoder>(
        store,
        AttentionDecoderConfig{.cell = row.cell, .input_dim = 3, .hidden = 5, .layers = row.layers, .context_dim = 4,
                               .attention = row.attention, .luong = row.luong, .attn_dim = 6, .readout_dim = 4,
                               .score_features = row.features},
        rng);
    return [dec, row](Graph& g, const std::vector<Var>& in) {
      DecoderContext ctx = dec->prepare_context(g, in[0], in[1], {4, 2});
      DecoderState st = dec->initial_state(g, in[1]);
      Var xw = dec->input_projection(g, in[2]);
      Var f = row.features > 0 ? in[3] : Var{};
      std::vector<Var> parts;
      for (int t = 0; t < 2; ++t) {
        DecoderStepOutput o = dec->step(g, ctx, xw, st, nullptr, f);
        parts.push_back(flat(dec->readout(g, o.top, o.context, in[2], o.attentional)));
        if (o.alpha.valid()) parts.push_back(flat(o.alpha));
        st = o.state;
      }
      for (const RnnState& s : st.layers) {
        parts.push_back(flat(s.h));
        if (s.c.valid()) parts.push_back(flat(s.c));
      }
      return core::concat(parts, 0);
    };
  };
  return c;
}

// Inputs: memory [S, B, H=3], query [B, Hq=5]; a step mask that forbids a different position in
// each row (on top of the lengths).
ModuleCase pointer_case(std::string name, float clip) {
  ModuleCase c;
  c.name = std::move(name);
  c.inputs = {{{kS, kB, 3}}, {{kB, 5}}};
  c.build = [clip](ParamStore& store, core::Rng& rng) -> Forward {
    auto ptr = std::make_shared<PointerOutput>(
        store, "ptr", PointerOutputConfig{.query_dim = 5, .memory_dim = 3, .attn_dim = 6, .logit_clip = clip}, rng);
    return [ptr](Graph& g, const std::vector<Var>& in) {
      static const float kAllowed[kB * kS] = {1, 0, 1, 1, 1, 1, 0, 1};  // [B, S]
      AttentionMemory mem = ptr->prepare(g, in[0], {4, 3});
      Var lp = ptr->log_probs(g, mem, in[1], kAllowed);  // [B, S], -inf where not allowed
      // Only the allowed positions (finite log-probs) enter the checked output.
      static const std::vector<int32_t> kept = {0, 2, 3, 4, 5};
      return core::select_rows(flat(lp), kept);
    };
  };
  return c;
}

}  // namespace module_cases_seq

std::vector<ModuleCase> seq_module_cases() {
  using namespace module_cases_seq;  // this file's cases
  return {
      attention_features_case(),
      encoder_case("encoder/tokens/bigru/lengths", false, CellKind::kGru, true, 1),
      encoder_case("encoder/features/bilstm/2layers", true, CellKind::kLstm, true, 2),
      encoder_case("encoder/features/gru", true, CellKind::kGru, false, 1),
      decoder_case("decoder/bahdanau/gru/score_features", {.features = 2}),
      decoder_case("decoder/luong/lstm/input_feeding/2layers", {.cell = CellKind::kLstm, .luong = true, .layers = 2}),
      decoder_case("decoder/fixed_context/gru", {.attention = false}),
      pointer_case("pointer/masked", 0.0f),
      pointer_case("pointer/masked/clip10", 10.0f),
  };
}

}  // namespace engram::nn
