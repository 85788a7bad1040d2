// Seq2Seq: parameters, the encoder, the decoder step shared by training and inference, the
// readout, and the teacher-forced forward over a whole batch.
// Dims: B batch, S source len, T target steps, E embedding, H hidden, C context (encoder width), G gates,
// X per-step decoder input width, P readout width, V target vocab, L decoder layers, R rows.
#include "engram/models/seq2seq/model.h"

#include <cmath>

#include "engram/core/ops.h"
#include "engram/data/vocab.h"
#include "engram/nn/init.h"

namespace engram::models {

namespace {

nn::CellKind cell_kind(RnnCell c) { return c == RnnCell::kLstm ? nn::CellKind::kLstm : nn::CellKind::kGru; }

nn::AttentionScore score_of(AttentionKind k) {
  switch (k) {
    case AttentionKind::kDot: return nn::AttentionScore::kDot;
    case AttentionKind::kGeneral: return nn::AttentionScore::kGeneral;
    default: return nn::AttentionScore::kAdditive;
  }
}

}  // namespace

void Seq2SeqConfig::validate() const {
  ENGRAM_CHECK(src_vocab > data::kNumSpecial && tgt_vocab > data::kNumSpecial,
               "seq2seq: src_vocab {} and tgt_vocab {} must exceed the {} special tokens", src_vocab, tgt_vocab,
               data::kNumSpecial);
  ENGRAM_CHECK(embed_dim > 0 && hidden > 0, "seq2seq: embed_dim {} and hidden {} must be positive", embed_dim, hidden);
  ENGRAM_CHECK(encoder_hidden >= 0, "seq2seq: encoder_hidden {} must be >= 0", encoder_hidden);
  ENGRAM_CHECK(encoder_hidden > 0 || !bidirectional || hidden % 2 == 0,
               "seq2seq: a bidirectional encoder without encoder_hidden needs an even hidden size, got {}", hidden);
  ENGRAM_CHECK(encoder_layers >= 1 && decoder_layers >= 1, "seq2seq: encoder_layers {} and decoder_layers {} must be >= 1",
               encoder_layers, decoder_layers);
  ENGRAM_CHECK(dropout >= 0.0f && dropout < 1.0f, "seq2seq: dropout {} outside [0, 1)", dropout);
  ENGRAM_CHECK(label_smoothing >= 0.0f && label_smoothing < 1.0f, "seq2seq: label_smoothing {} outside [0, 1)",
               label_smoothing);
  ENGRAM_CHECK(attn_dim >= 0, "seq2seq: attn_dim {} must be >= 0", attn_dim);
}

Seq2Seq::Seq2Seq(const Seq2SeqConfig& cfg, core::Rng& rng) : cfg_(cfg) {
  cfg_.validate();
  const int e = cfg_.embed_dim, h = cfg_.hidden, dirs = cfg_.bidirectional ? 2 : 1;
  const bool luong = cfg_.attention != AttentionKind::kNone && cfg_.style == AttentionStyle::kLuong;
  readout_dim_ = cfg_.tie_embeddings ? e : h;
  feed_dim_ = luong ? (cfg_.input_feeding ? readout_dim_ : 0) : context_width();
  const nn::CellKind cell = cell_kind(cfg_.cell);
  const int gates = (cell == nn::CellKind::kLstm ? 4 : 3) * h;  // G

  src_embed_ = std::make_unique<nn::Embedding>(
      store_, "encoder/embed", nn::EmbeddingConfig{.vocab = cfg_.src_vocab, .dim = e, .init_stddev = 0.1f}, rng);
  tgt_embed_ = std::make_unique<nn::Embedding>(
      store_, "decoder/embed", nn::EmbeddingConfig{.vocab = cfg_.tgt_vocab, .dim = e, .init_stddev = 0.1f}, rng);
  encoder_ = std::make_unique<nn::Rnn>(store_, "encoder/rnn",
                                       nn::RnnConfig{.cell = cell, .input_size = e, .hidden_size = encoder_units(),
                                                     .layers = cfg_.encoder_layers, .bidirectional = dirs == 2,
                                                     .dropout = cfg_.dropout},
                                       rng);
  bridge_ = std::make_unique<nn::Linear>(
      store_, "bridge", nn::LinearConfig{.in_dim = context_width(), .out_dim = cfg_.decoder_layers * h}, rng);
  decoder_ = std::make_unique<nn::Rnn>(
      store_, "decoder/rnn",
      nn::RnnConfig{.cell = cell, .input_size = e, .hidden_size = h, .layers = cfg_.decoder_layers,
                    .dropout = cfg_.dropout},
      rng);
  if (feed_dim_ > 0) {
    w_ctx_ = store_.add("decoder/w_ctx", {gates, feed_dim_});  // [G, X]
    const float a = 1.0f / std::sqrt(static_cast<float>(h));     // as the Rnn's own weights
    nn::init::uniform(store_, w_ctx_, rng, -a, a);
  }
  if (cfg_.attention != AttentionKind::kNone)
    attention_ = std::make_unique<nn::Attention>(
        store_, "decoder/attention",
        nn::AttentionConfig{.score = score_of(cfg_.attention), .query_dim = h, .memory_dim = context_width(),
                            .attn_dim = cfg_.attn_dim},
        rng);
  const int combine_in = luong ? context_width() + h : h + context_width() + e;
  combine_ = std::make_unique<nn::Linear>(store_, luong ? "decoder/combine" : "decoder/readout",
                                          nn::LinearConfig{.in_dim = combine_in, .out_dim = readout_dim_}, rng);
  if (cfg_.tie_embeddings)
    output_ = std::make_unique<nn::Linear>(store_, "decoder/output", tgt_embed_->weight(), true);
  else
    output_ = std::make_unique<nn::Linear>(
        store_, "decoder/output", nn::LinearConfig{.in_dim = readout_dim_, .out_dim = cfg_.tgt_vocab}, rng);
}

YAML::Node Seq2Seq::config() const { return io::to_yaml(cfg_); }

Var Seq2Seq::dropout(Var x, core::Rng* rng) const {
  return rng && cfg_.dropout > 0.0f ? core::dropout(x, cfg_.dropout, *rng) : x;
}

EncoderOutput Seq2Seq::encode_batch(Graph& g, const std::vector<int32_t>& src, const std::vector<int32_t>& src_len,
                                    int steps, core::Rng* dropout_rng) const {
  const int b = static_cast<int>(src_len.size());
  ENGRAM_CHECK(steps >= 1 && b >= 1 && static_cast<int64_t>(src.size()) == static_cast<int64_t>(steps) * b,
               "seq2seq: {} source ids for S={} x B={} (both must be >= 1)", src.size(), steps, b);
  Var emb = dropout(src_embed_->forward(g, src, {steps, b}), dropout_rng);  // [S, B, E]
  nn::RnnOptions opt{.lengths = std::vector<int>(src_len.begin(), src_len.end()), .dropout_rng = dropout_rng};
  nn::RnnOutput enc = encoder_->forward(g, emb, opt);                      // outputs [S, B, C]
  const int dirs = encoder_->directions(), top = (cfg_.encoder_layers - 1) * dirs;
  EncoderOutput out;
  out.outputs = enc.outputs;
  out.final_top = dirs == 1 ? enc.final[top].h : core::concat({enc.final[top].h, enc.final[top + 1].h}, 1);  // [B, C]
  out.init = initial_state(g, out.final_top);
  out.context = prepare_context(g, out.outputs, out.final_top, src_len);
  return out;
}

DecoderState Seq2Seq::initial_state(Graph& g, Var final_top) const {
  const int b = final_top.shape()[0], h = cfg_.hidden, layers = cfg_.decoder_layers;
  Var init = core::tanh(bridge_->forward(g, final_top));  // [B, L*H]
  std::vector<Var> parts = layers == 1 ? std::vector<Var>{init} : core::split(init, std::vector<int>(layers, h), 1);
  DecoderState s;
  const bool lstm = cfg_.cell == RnnCell::kLstm;
  Var zero = lstm ? g.zeros({b, h}) : Var{};  // [B, H]
  for (int l = 0; l < layers; ++l) s.layers.push_back({parts[l], zero});
  if (feed_dim_ > 0 && attention_ && cfg_.style == AttentionStyle::kLuong) s.feed = g.zeros({b, feed_dim_});
  return s;
}

DecoderContext Seq2Seq::prepare_context(Graph& g, Var outputs, Var final_top, const std::vector<int32_t>& src_len) const {
  DecoderContext ctx;
  if (attention_) {
    ctx.memory = attention_->prepare(g, outputs, src_len);
  } else {
    ctx.fixed = final_top;                                                  // [B, C]
    ctx.fixed_proj = core::affine(final_top, store_.var(g, w_ctx_));        // [B, G]
  }
  return ctx;
}

Var Seq2Seq::embed_target(Graph& g, const std::vector<int32_t>& ids, core::Rng* dropout_rng) const {
  return dropout(tgt_embed_->forward(g, ids), dropout_rng);  // [R, E]
}

Var Seq2Seq::embed_projection(Graph& g, Var emb) const {
  const nn::Rnn::LayerParams& p = decoder_->params(0, 0);
  return core::affine(emb, store_.var(g, p.w_ih), store_.var(g, p.b_ih));  // [R, G]
}

DecoderStepOutput Seq2Seq::decoder_step(Graph& g, const DecoderContext& ctx, Var xw_emb, const DecoderState& state,
                                        core::Rng* dropout_rng) const {
  const int layers = cfg_.decoder_layers;
  ENGRAM_CHECK(static_cast<int>(state.layers.size()) == layers, "seq2seq: decoder state has {} layers, expected {}",
               state.layers.size(), layers);
  const bool luong = attention_ && cfg_.style == AttentionStyle::kLuong;
  DecoderStepOutput out;
  Var xw0 = xw_emb;  // [N, G]
  if (!attention_) {
    xw0 = core::add(xw_emb, ctx.fixed_proj);
    out.context = ctx.fixed;
  } else if (!luong) {  // Bahdanau: attend with s_{t-1}, feed c_t into the RNN
    nn::AttentionOutput a = attention_->step(g, ctx.memory, state.layers[layers - 1].h);
    out.context = a.context;
    out.alpha = a.alpha;
    xw0 = core::add(xw_emb, core::affine(a.context, store_.var(g, w_ctx_)));
  } else if (feed_dim_ > 0) {  // Luong input feeding: h~_{t-1}
    xw0 = core::add(xw_emb, core::affine(state.feed, store_.var(g, w_ctx_)));
  }
  out.state.layers.resize(layers);
  const bool lstm = cfg_.cell == RnnCell::kLstm;
  for (int l = 0; l < layers; ++l) {
    const nn::Rnn::LayerParams& p = decoder_->params(l, 0);
    Var xw = l == 0 ? xw0
                    : core::affine(dropout(out.state.layers[l - 1].h, dropout_rng), store_.var(g, p.w_ih),
                                   store_.var(g, p.b_ih));  // [N, G]
    const nn::RnnState& s = state.layers[l];
    if (lstm) {
      core::LstmState n = core::lstm_cell(xw, s.h, s.c, store_.var(g, p.w_hh), store_.var(g, p.b_hh));
      out.state.layers[l] = {n.h, n.c};
    } else {
      out.state.layers[l] = {core::gru_cell(xw, s.h, store_.var(g, p.w_hh), store_.var(g, p.b_hh)), Var{}};
    }
  }
  out.top = out.state.layers[layers - 1].h;  // [N, H]
  if (luong) {  // attend with h_t; h~_t = tanh(W_c [c_t; h_t])
    nn::AttentionOutput a = attention_->step(g, ctx.memory, out.top);
    out.context = a.context;
    out.alpha = a.alpha;
    out.attentional = core::tanh(combine_->forward(g, core::concat({a.context, out.top}, 1)));  // [N, P]
    if (feed_dim_ > 0) out.state.feed = out.attentional;
  }
  return out;
}

Var Seq2Seq::readout_logits(Graph& g, Var top, Var context, Var emb, Var attentional, core::Rng* dropout_rng) const {
  const bool luong = attention_ && cfg_.style == AttentionStyle::kLuong;
  Var pre = luong ? attentional : core::tanh(combine_->forward(g, core::concat({top, context, emb}, 1)));  // [R, P]
  return output_->forward(g, dropout(pre, dropout_rng));                                                  // [R, V]
}

Var Seq2Seq::logits(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, std::vector<Var>* alignments) const {
  const int b = static_cast<int>(batch.batch_size), steps = static_cast<int>(batch.tgt_steps);
  ENGRAM_CHECK(steps >= 1 && static_cast<int64_t>(batch.tgt_in.size()) == int64_t{steps} * b,
               "seq2seq: {} target ids for T={} x B={}", batch.tgt_in.size(), steps, b);
  EncoderOutput enc = encode_batch(g, batch.src, batch.src_len, static_cast<int>(batch.src_steps), dropout_rng);
  Var emb = embed_target(g, batch.tgt_in, dropout_rng);  // [T*B, E]
  Var xw_all = embed_projection(g, emb);                 // [T*B, G], one GEMM for every step
  const bool luong = attention_ && cfg_.style == AttentionStyle::kLuong;
  std::vector<Var> tops, contexts, attentionals;         // T x [B, .]
  DecoderState state = enc.init;
  for (int t = 0; t < steps; ++t) {
    DecoderStepOutput o = decoder_step(g, enc.context, core::slice(xw_all, 0, t * b, (t + 1) * b), state, dropout_rng);
    state = o.state;
    if (luong) {
      attentionals.push_back(o.attentional);
    } else {
      tops.push_back(o.top);
      contexts.push_back(o.context);
    }
    if (alignments && o.alpha.valid()) alignments->push_back(o.alpha);
  }
  if (luong) return readout_logits(g, {}, {}, {}, core::concat(attentionals, 0), dropout_rng);
  return readout_logits(g, core::concat(tops, 0), core::concat(contexts, 0), emb, {}, dropout_rng);
}

Var Seq2Seq::loss(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, float label_smoothing) const {
  Var out = logits(g, batch, dropout_rng);  // [T*B, V]
  return core::cross_entropy(out, batch.tgt_out,
                             core::CrossEntropyOptions{.label_smoothing = label_smoothing, .ignore_index = data::kPadId});
}

}  // namespace engram::models
