// Seq2Seq: its parts (encoder, attention decoder, output layer) and the teacher-forced forward
// over a whole batch.
// Dims: B batch, S source len, T target steps, E embedding, H hidden, C context (encoder width), G gates,
// X per-step decoder input width, P readout width, V target vocab, L decoder layers, R rows.
#include "engram/models/seq2seq/model.h"

#include <cmath>
#include <filesystem>

#include "engram/core/ops.h"
#include "engram/data/vocab.h"

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

std::string TokenizerConfig::file_name(Side side) const {
  const char* s = side == Side::kSource ? "src" : "tgt";
  if (unit == TokenUnit::kSpm) return joint ? "joint.spm" : fmt::format("{}.spm", s);
  return fmt::format("{}.vocab.txt", s);
}

TextCodec TokenizerConfig::load(Side side, const std::string& dir) const {
  return TextCodec::load({.unit = unit, .lowercase = lowercase, .simplified = simplified},
                         (std::filesystem::path(dir) / file_name(side)).string(),
                         fmt::format("the {} vocabulary of a '{}' tokenizer", side == Side::kSource ? "source" : "target",
                                     io::to_yaml(*this)["unit"].as<std::string>()));
}

TextCodec TokenizerConfig::build(Side side, const std::vector<std::string>& lines, const std::string& dir) const {
  ENGRAM_CHECK(src_vocab_size >= 0 && !(joint && src_vocab_size > 0),
               "tokenizer: src_vocab_size {} must be >= 0, and 0 with a joint model", src_vocab_size);
  const int size = side == Side::kSource && src_vocab_size > 0 ? src_vocab_size : vocab_size;
  return TextCodec::build({.unit = unit, .lowercase = lowercase, .simplified = simplified, .vocab_size = size,
                           .min_count = min_count, .character_coverage = character_coverage},
                          lines, (std::filesystem::path(dir) / file_name(side)).string());
}

void Seq2SeqConfig::validate() const {
  ENGRAM_CHECK(src_vocab > data::kNumSpecial && tgt_vocab > data::kNumSpecial,
               "seq2seq: src_vocab {} and tgt_vocab {} must exceed the {} special tokens", src_vocab, tgt_vocab,
               data::kNumSpecial);
  validate_options();
}

void Seq2SeqConfig::validate_options() const {
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
  const int units = cfg_.encoder_hidden > 0 ? cfg_.encoder_hidden : h / dirs;  // per encoder direction
  readout_dim_ = cfg_.tie_embeddings ? e : h;
  const nn::CellKind cell = cell_kind(cfg_.cell);
  // Built in the order the checkpoints' parameters were first drawn in: source and target tables,
  // the encoder RNN, then the decoder (bridge, RNN, w_ctx, attention, combine / readout), output.
  auto src_embed = std::make_unique<nn::Embedding>(
      store_, "encoder/embed", nn::EmbeddingConfig{.vocab = cfg_.src_vocab, .dim = e, .init_stddev = 0.1f}, rng);
  tgt_embed_ = std::make_unique<nn::Embedding>(
      store_, "decoder/embed", nn::EmbeddingConfig{.vocab = cfg_.tgt_vocab, .dim = e, .init_stddev = 0.1f}, rng);
  encoder_ = std::make_unique<nn::RnnEncoder>(
      store_, std::move(src_embed), "encoder/rnn",
      nn::RnnEncoderConfig{.cell = cell, .units = units, .layers = cfg_.encoder_layers, .bidirectional = dirs == 2,
                           .dropout = cfg_.dropout},
      rng);
  decoder_ = std::make_unique<nn::AttentionDecoder>(
      store_,
      nn::AttentionDecoderConfig{.cell = cell, .input_dim = e, .hidden = h, .layers = cfg_.decoder_layers,
                                 .context_dim = encoder_->output_width(),
                                 .attention = cfg_.attention != AttentionKind::kNone, .score = score_of(cfg_.attention),
                                 .luong = cfg_.style == AttentionStyle::kLuong, .input_feeding = cfg_.input_feeding,
                                 .attn_dim = cfg_.attn_dim, .readout_dim = readout_dim_, .dropout = cfg_.dropout},
      rng);
  output_ = cfg_.tie_embeddings
                ? std::make_unique<nn::VocabOutput>(store_, "decoder/output", tgt_embed_->weight())
                : std::make_unique<nn::VocabOutput>(store_, "decoder/output", readout_dim_, cfg_.tgt_vocab, rng);
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
  const nn::EncodedSource enc =
      encoder_->encode(g, nn::EncoderInput{.steps = steps, .batch = b, .ids = src, .lengths = src_len}, dropout_rng);
  EncoderOutput out;
  out.outputs = enc.outputs;
  out.final_top = enc.final_top;
  out.init = decoder_->initial_state(g, out.final_top);
  out.context = decoder_->prepare_context(g, out.outputs, out.final_top, src_len);
  return out;
}

Var Seq2Seq::embed_target(Graph& g, const std::vector<int32_t>& ids, core::Rng* dropout_rng) const {
  return dropout(tgt_embed_->forward(g, ids), dropout_rng);  // [R, E]
}

Var Seq2Seq::readout_logits(Graph& g, Var top, Var context, Var emb, Var attentional, core::Rng* dropout_rng) const {
  Var pre = decoder_->readout(g, top, context, emb, attentional);  // [R, P]
  return output_->logits(g, dropout(pre, dropout_rng));           // [R, V]
}

Var Seq2Seq::logits(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, std::vector<Var>* alignments) const {
  const int b = static_cast<int>(batch.batch_size), steps = static_cast<int>(batch.tgt_steps);
  ENGRAM_CHECK(steps >= 1 && static_cast<int64_t>(batch.tgt_in.size()) == int64_t{steps} * b,
               "seq2seq: {} target ids for T={} x B={}", batch.tgt_in.size(), steps, b);
  EncoderOutput enc = encode_batch(g, batch.src, batch.src_len, static_cast<int>(batch.src_steps), dropout_rng);
  Var emb = embed_target(g, batch.tgt_in, dropout_rng);  // [T*B, E]
  Var xw_all = decoder_->input_projection(g, emb);       // [T*B, G], one GEMM for every step
  const bool luong = decoder_->luong();
  std::vector<Var> tops, contexts, attentionals;         // T x [B, .]
  DecoderState state = enc.init;
  for (int t = 0; t < steps; ++t) {
    DecoderStepOutput o = decoder_->step(g, enc.context, core::slice(xw_all, 0, t * b, (t + 1) * b), state, dropout_rng);
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

Var Seq2Seq::loss(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, float label_smoothing,
                  const AlignmentGuide* guide) const {
  const bool guided = guide && guide->weight != 0.0f && guide->norm > 0;
  ENGRAM_CHECK(!guided || has_attention(), "seq2seq: guided alignment needs attention (attention: none has no α)");
  std::vector<Var> alphas;                                          // T x [B, S]
  Var out = logits(g, batch, dropout_rng, guided ? &alphas : nullptr);  // [T*B, V]
  Var ce = core::cross_entropy(out, batch.tgt_out,
                               core::CrossEntropyOptions{.label_smoothing = label_smoothing, .ignore_index = data::kPadId});
  if (!guided) return ce;
  const int rows = static_cast<int>(batch.tgt_steps * batch.batch_size), s = static_cast<int>(batch.src_steps);
  ENGRAM_CHECK(static_cast<int64_t>(guide->rows.size()) == int64_t{rows} * s,
               "seq2seq: alignment guide of {} values for T*B={} x S={}", guide->rows.size(), rows, s);
  Var alpha = core::concat(alphas, 0);  // [T*B, S]
  Var target = g.constant({rows, s}, guide->rows.data());
  Var term = core::sum_all(core::mul(target, core::log(core::add_scalar(alpha, 1e-6f))));
  return core::add(ce, core::scale(term, static_cast<float>(-guide->weight / guide->norm)));
}

}  // namespace engram::models
