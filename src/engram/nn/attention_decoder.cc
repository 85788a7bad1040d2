// AttentionDecoder: parameters, initial state, context preparation, one step, readout.
// Dims: B batch, S source len, N rows, E input, H hidden, C context, G gates, X fed width,
// P readout, L layers, F score features.
#include "engram/nn/attention_decoder.h"

#include <cmath>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

AttentionDecoder::AttentionDecoder(ParamStore& store, const AttentionDecoderConfig& cfg, core::Rng& rng,
                                   const AttentionDecoderNames& names)
    : store_(store), cfg_(cfg) {
  const int e = cfg.input_dim, h = cfg.hidden, c = cfg.context_dim, p = cfg.readout_dim;
  ENGRAM_CHECK(e > 0 && h > 0 && c > 0 && p > 0 && cfg.layers >= 1,
               "attention decoder: input_dim {}, hidden {}, context_dim {}, readout_dim {} and layers {} must be >= 1",
               e, h, c, p, cfg.layers);
  ENGRAM_CHECK(cfg.score_features == 0 || cfg.attention, "attention decoder: score features need attention");
  const bool luong = cfg.attention && cfg.luong;
  feed_dim_ = luong ? (cfg.input_feeding ? p : 0) : c;
  const int gates = (cfg.cell == CellKind::kLstm ? 4 : 3) * h;  // G
  bridge_ = std::make_unique<Linear>(store, names.bridge, LinearConfig{.in_dim = c, .out_dim = cfg.layers * h}, rng);
  rnn_ = std::make_unique<Rnn>(
      store, names.rnn,
      RnnConfig{.cell = cfg.cell, .input_size = e, .hidden_size = h, .layers = cfg.layers, .dropout = cfg.dropout}, rng);
  if (feed_dim_ > 0) {
    w_ctx_ = store.add(names.w_ctx, {gates, feed_dim_});  // [G, X]
    const float a = 1.0f / std::sqrt(static_cast<float>(h));  // as the Rnn's own weights
    init::uniform(store, w_ctx_, rng, -a, a);
  }
  if (cfg.attention)
    attention_ = std::make_unique<Attention>(
        store, names.attention,
        AttentionConfig{.score = cfg.score, .query_dim = h, .memory_dim = c, .attn_dim = cfg.attn_dim,
                        .feature_dim = cfg.score_features},
        rng);
  const int combine_in = luong ? c + h : h + c + e;
  combine_ = std::make_unique<Linear>(store, luong ? names.combine : names.readout,
                                      LinearConfig{.in_dim = combine_in, .out_dim = p}, rng);
}

Var AttentionDecoder::dropout(Var x, core::Rng* rng) const {
  return rng && cfg_.dropout > 0.0f ? core::dropout(x, cfg_.dropout, *rng) : x;
}

DecoderState AttentionDecoder::initial_state(Graph& g, Var final_top) const {
  const int b = final_top.shape()[0], h = cfg_.hidden, layers = cfg_.layers;
  Var init = core::tanh(bridge_->forward(g, final_top));  // [B, L*H]
  std::vector<Var> parts = layers == 1 ? std::vector<Var>{init} : core::split(init, std::vector<int>(layers, h), 1);
  DecoderState s;
  const bool lstm = cfg_.cell == CellKind::kLstm;
  Var zero = lstm ? g.zeros({b, h}) : Var{};  // [B, H]
  for (int l = 0; l < layers; ++l) s.layers.push_back({parts[l], zero});
  if (feed_dim_ > 0 && luong()) s.feed = g.zeros({b, feed_dim_});
  return s;
}

DecoderContext AttentionDecoder::prepare_context(Graph& g, Var outputs, Var final_top,
                                                 const std::vector<int32_t>& lengths) const {
  DecoderContext ctx;
  if (attention_) {
    ctx.memory = attention_->prepare(g, outputs, lengths);
  } else {
    ctx.fixed = final_top;                                      // [B, C]
    ctx.fixed_proj = core::affine(final_top, param(g, w_ctx_));  // [B, G]
  }
  return ctx;
}

Var AttentionDecoder::input_projection(Graph& g, Var x) const {
  const Rnn::LayerParams& p = rnn_->params(0, 0);
  return core::affine(x, param(g, p.w_ih), param(g, p.b_ih));  // [R, G]
}

DecoderStepOutput AttentionDecoder::step(Graph& g, const DecoderContext& ctx, Var xw, const DecoderState& state,
                                         core::Rng* dropout_rng, Var score_features) const {
  const int layers = cfg_.layers;
  ENGRAM_CHECK(static_cast<int>(state.layers.size()) == layers, "attention decoder: state has {} layers, expected {}",
               state.layers.size(), layers);
  const bool is_luong = luong();
  DecoderStepOutput out;
  Var xw0 = xw;  // [N, G]
  if (!attention_) {
    xw0 = core::add(xw, ctx.fixed_proj);
    out.context = ctx.fixed;
  } else if (!is_luong) {  // Bahdanau: attend with s_{t-1}, feed c_t into the RNN
    AttentionOutput a = attention_->step(g, ctx.memory, state.layers[layers - 1].h, score_features);
    out.context = a.context;
    out.scores = a.scores;
    out.alpha = a.alpha;
    xw0 = core::add(xw, core::affine(a.context, param(g, w_ctx_)));
  } else if (feed_dim_ > 0) {  // Luong input feeding: h~_{t-1}
    xw0 = core::add(xw, core::affine(state.feed, param(g, w_ctx_)));
  }
  out.state.layers.resize(layers);
  const bool lstm = cfg_.cell == CellKind::kLstm;
  for (int l = 0; l < layers; ++l) {
    const Rnn::LayerParams& p = rnn_->params(l, 0);
    Var x = l == 0 ? xw0
                   : core::affine(dropout(out.state.layers[l - 1].h, dropout_rng), param(g, p.w_ih),
                                  param(g, p.b_ih));  // [N, G]
    const RnnState& s = state.layers[l];
    if (lstm) {
      core::LstmState n = core::lstm_cell(x, s.h, s.c, param(g, p.w_hh), param(g, p.b_hh));
      out.state.layers[l] = {n.h, n.c};
    } else {
      out.state.layers[l] = {core::gru_cell(x, s.h, param(g, p.w_hh), param(g, p.b_hh)), Var{}};
    }
  }
  out.top = out.state.layers[layers - 1].h;  // [N, H]
  if (is_luong) {  // attend with h_t; h~_t = tanh(W_c [c_t; h_t])
    AttentionOutput a = attention_->step(g, ctx.memory, out.top, score_features);
    out.context = a.context;
    out.scores = a.scores;
    out.alpha = a.alpha;
    out.attentional = core::tanh(combine_->forward(g, core::concat({a.context, out.top}, 1)));  // [N, P]
    if (feed_dim_ > 0) out.state.feed = out.attentional;
  }
  return out;
}

Var AttentionDecoder::readout(Graph& g, Var top, Var context, Var input, Var attentional) const {
  if (luong()) return attentional;                                                   // [R, P]
  return core::tanh(combine_->forward(g, core::concat({top, context, input}, 1)));  // [R, P]
}

}  // namespace engram::nn
