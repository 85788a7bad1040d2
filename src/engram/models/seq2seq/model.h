// Seq2Seq: the RNN encoder-decoder of the seeds, with <GO>/<EOS> decoding and attention over the
// encoder states (c_t = Σ_i α_ti h_i), or without it (attention: none, the "traditional" model:
// one fixed context C = the encoder's last state, fed at every step). Two decoder styles:
//   Bahdanau: score with the previous state s_{t-1}; c_t enters the RNN with the embedding;
//             readout tanh(W_p [s_t; c_t; e_{t-1}]).
//   Luong:    the RNN runs first; score with the current h_t; attentional state
//             h~_t = tanh(W_c [c_t; h_t]) is the readout and (input feeding) the next step's extra input.
// The decoder's layer-0 input projection is split: the embedding part W_ih (the Rnn's own
// weight, applied to a whole target sequence in one GEMM) plus `decoder/w_ctx` for the part fed
// per step (c_t, C or h~_{t-1}); together they are the usual W_ih over [e; ctx].
// Training runs teacher forcing: the readouts of all T steps go through the output projection
// and the loss at once ([T*B, V]). Inference implements decode::StepModel (seq2seq_step.cc).
//
// Dims: B batch, S source len, T target steps, E embedding dim, H decoder hidden, C encoder output
// width = D x encoder units per direction (encoder_hidden, default H/D, so C = H), D encoder directions, L decoder layers,
// G decoder gates (4H LSTM, 3H GRU), C context width, X width fed per step through w_ctx
// (C, P or 0), P readout width (E when tied, else H), A attention dim, V target vocab,
// Vs source vocab, N decoder rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engram/core/rng.h"
#include "engram/data/batching.h"
#include "engram/decode/step_model.h"
#include "engram/io/config.h"
#include "engram/models/registry.h"
#include "engram/nn/attention.h"
#include "engram/nn/embedding.h"
#include "engram/nn/linear.h"
#include "engram/nn/rnn.h"

namespace engram::models {

enum class RnnCell { kLstm, kGru };
enum class AttentionKind { kNone, kDot, kGeneral, kAdditive, kConcat };  // concat = additive (Luong's name)
enum class AttentionStyle { kBahdanau, kLuong };
enum class TokenUnit { kWord, kChar, kSpm };  // how text becomes ids (see seq2seq_text.h)

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::RnnCell> {
  static constexpr std::pair<engram::models::RnnCell, const char*> items[] = {
      {engram::models::RnnCell::kLstm, "lstm"}, {engram::models::RnnCell::kGru, "gru"}};
};
template <>
struct engram::io::EnumNames<engram::models::AttentionKind> {
  static constexpr std::pair<engram::models::AttentionKind, const char*> items[] = {
      {engram::models::AttentionKind::kNone, "none"},
      {engram::models::AttentionKind::kDot, "dot"},
      {engram::models::AttentionKind::kGeneral, "general"},
      {engram::models::AttentionKind::kAdditive, "additive"},
      {engram::models::AttentionKind::kConcat, "concat"}};
};
template <>
struct engram::io::EnumNames<engram::models::AttentionStyle> {
  static constexpr std::pair<engram::models::AttentionStyle, const char*> items[] = {
      {engram::models::AttentionStyle::kBahdanau, "bahdanau"}, {engram::models::AttentionStyle::kLuong, "luong"}};
};
template <>
struct engram::io::EnumNames<engram::models::TokenUnit> {
  static constexpr std::pair<engram::models::TokenUnit, const char*> items[] = {
      {engram::models::TokenUnit::kWord, "word"},
      {engram::models::TokenUnit::kChar, "char"},
      {engram::models::TokenUnit::kSpm, "spm"}};
};

namespace engram::models {

using core::Graph;
using core::Var;

// How source and target text become ids; saved with the model so translation tokenizes alike.
struct TokenizerConfig {
  TokenUnit unit = TokenUnit::kSpm;
  bool joint = false;          // spm: one model for both sides (src.spm == tgt.spm)
  int vocab_size = 8000;       // spm: pieces per model; word: max size (0 = no limit)
  int min_count = 1;           // word/char: rarer tokens become <unk>
  bool lowercase = false;      // lowercase (ASCII + simple Unicode) before tokenizing
  float character_coverage = 1.0f;  // spm: 0.9995 for CJK-heavy text

  template <class V>
  void visit(V& v) {
    v("unit", unit, "word | char | spm (SentencePiece trained by engram)");
    v("joint", joint, "spm: one model for source and target");
    v("vocab_size", vocab_size, "spm: pieces per model; word/char: max vocabulary size (0 = all)");
    v("min_count", min_count, "word/char: tokens seen fewer times become <unk>");
    v("lowercase", lowercase, "lowercase text before tokenizing");
    v("character_coverage", character_coverage, "spm: character coverage (0.9995 for CJK)");
  }
};

struct Seq2SeqConfig {
  int src_vocab = 0;            // Vs (set from the data when training)
  int tgt_vocab = 0;            // V
  int embed_dim = 128;          // E
  int hidden = 256;             // H
  int encoder_layers = 1;
  int decoder_layers = 1;       // L
  bool bidirectional = true;    // encoder; each direction gets encoder_hidden units
  int encoder_hidden = 0;       // units per encoder direction (0 = H / D, so that C = H)
  RnnCell cell = RnnCell::kGru;
  AttentionKind attention = AttentionKind::kAdditive;
  AttentionStyle style = AttentionStyle::kBahdanau;
  int attn_dim = 0;             // A (additive; 0 = H)
  bool input_feeding = true;    // luong: feed h~_{t-1} into the next step
  float dropout = 0.2f;
  float label_smoothing = 0.1f;
  bool tie_embeddings = false;  // output projection shares the target embedding table
  TokenizerConfig tokenizer;

  template <class V>
  void visit(V& v) {
    v("src_vocab", src_vocab, "source vocabulary size (set from the data)");
    v("tgt_vocab", tgt_vocab, "target vocabulary size (set from the data)");
    v("embed_dim", embed_dim, "embedding width");
    v("hidden", hidden, "decoder hidden size = encoder output width");
    v("encoder_layers", encoder_layers, "encoder RNN layers");
    v("decoder_layers", decoder_layers, "decoder RNN layers");
    v("bidirectional", bidirectional, "bidirectional encoder (each direction encoder_hidden units)");
    v("encoder_hidden", encoder_hidden, "units per encoder direction (0 = hidden / directions)");
    v("cell", cell, "lstm | gru");
    v("attention", attention, "none | dot | general | additive | concat");
    v("style", style, "bahdanau (score with s_{t-1}) | luong (score with h_t, attentional state)");
    v("attn_dim", attn_dim, "additive attention width (0 = hidden)");
    v("input_feeding", input_feeding, "luong: feed the attentional state into the next step");
    v("dropout", dropout, "dropout on embeddings, between layers and before the output");
    v("label_smoothing", label_smoothing, "label smoothing of the training loss");
    v("tie_embeddings", tie_embeddings, "output projection shares the target embedding table");
    v("tokenizer", tokenizer, "text to ids");
  }
  // Errors name the first invalid field.
  void validate() const;
};

// Decoder recurrent state of one step.
struct DecoderState {
  std::vector<nn::RnnState> layers;  // L x {h [N, H], c [N, H] (LSTM)}
  Var feed;                          // [N, P] luong with input feeding: h~_{t-1}; else invalid
};

// What the decoder reads every step, prepared once per batch (training) or per step (inference).
struct DecoderContext {
  nn::AttentionMemory memory;  // attention over the encoder outputs (attention != none)
  Var fixed;                   // [N, C] attention none: the fixed context C
  Var fixed_proj;              // [N, G] attention none: C w_ctx^T
};

// One decoder step's results.
struct DecoderStepOutput {
  DecoderState state;  // after the step
  Var top;             // [N, H] s_t / h_t, the top layer's output
  Var context;         // [N, C] c_t (C for none)
  Var alpha;           // [N, S] attention weights; invalid for none
  Var attentional;     // [N, P] luong: h~_t; else invalid
};

// Encoder results for a batch.
struct EncoderOutput {
  Var outputs;                // [S, B, C] time-major, 0 at padded steps
  Var final_top;              // [B, C] last state of the top layer, directions concatenated
  DecoderState init;          // the decoder's initial state (bridge from final_top)
  DecoderContext context;     // prepared attention memory / fixed context
};

class Seq2Seq final : public Model, public decode::StepModel {
 public:
  static constexpr const char* kName = "seq2seq";
  // Builds every parameter (names under encoder/, decoder/, ...) initialised from `rng`.
  Seq2Seq(const Seq2SeqConfig& cfg, core::Rng& rng);

  // ---- Model
  std::string name() const override { return kName; }
  nn::ParamStore& params() override { return store_; }
  YAML::Node config() const override;
  const Seq2SeqConfig& cfg() const { return cfg_; }

  // ---- training (teacher forcing); differentiable in every parameter
  // Encoder over batch.src [S, B] with lengths batch.src_len. `dropout_rng` null = no dropout.
  EncoderOutput encode_batch(Graph& g, const std::vector<int32_t>& src, const std::vector<int32_t>& src_len,
                             int steps, core::Rng* dropout_rng) const;
  // Logits [T*B, V] (row t*B + b) of every target position for inputs batch.tgt_in. If
  // `alignments` is given it receives α of every step (T x [B, S]).
  Var logits(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, std::vector<Var>* alignments = nullptr) const;
  // Mean (label-smoothed unless smoothing = 0) cross-entropy over the non-pad targets.
  Var loss(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, float label_smoothing) const;

  // ---- the pieces, public for the gradient checks
  // Prepares the memory of encoder outputs [S, B, C] / the fixed context for `final_top` [B, C].
  DecoderContext prepare_context(Graph& g, Var outputs, Var final_top, const std::vector<int32_t>& src_len) const;
  // Decoder initial state from final_top [B, C] (h0 = tanh(bridge(final_top)), c0 = 0).
  DecoderState initial_state(Graph& g, Var final_top) const;
  // One step from the embedding part of the layer-0 input projection xw_emb [N, G].
  DecoderStepOutput decoder_step(Graph& g, const DecoderContext& ctx, Var xw_emb, const DecoderState& state,
                                 core::Rng* dropout_rng) const;
  // Target embeddings [R, E] -> their layer-0 input projection [R, G] (W_ih e + b_ih).
  Var embed_projection(Graph& g, Var emb) const;
  // Readout [R, P] of collected step outputs (top [R, H], context [R, C], emb [R, E] = e_{t-1},
  // attentional [R, P] for luong), then the output projection: logits [R, V].
  Var readout_logits(Graph& g, Var top, Var context, Var emb, Var attentional, core::Rng* dropout_rng) const;
  Var embed_target(Graph& g, const std::vector<int32_t>& ids, core::Rng* dropout_rng) const;  // [R, E]

  // ---- decode::StepModel (seq2seq_step.cc)
  int32_t go_id() const override;
  int32_t eos_id() const override;
  std::unique_ptr<decode::DecodeState> encode(Graph& g, const decode::SourceBatch& src) const override;
  decode::StepOutput step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const override;
  void reorder(decode::DecodeState& state, std::span<const int32_t> rows) const override;

  int context_width() const { return encoder_units() * (cfg_.bidirectional ? 2 : 1); }  // C
  int encoder_units() const { return cfg_.encoder_hidden > 0 ? cfg_.encoder_hidden : cfg_.hidden / (cfg_.bidirectional ? 2 : 1); }
  int readout_width() const { return readout_dim_; } // P
  int feed_width() const { return feed_dim_; }       // X
  bool has_attention() const { return attention_ != nullptr; }

 private:
  Var dropout(Var x, core::Rng* rng) const;

  Seq2SeqConfig cfg_;
  int readout_dim_ = 0;  // P
  int feed_dim_ = 0;     // X
  mutable nn::ParamStore store_;  // mutable: graph leaves write gradients into it from const methods
  std::unique_ptr<nn::Embedding> src_embed_;   // [Vs, E]
  std::unique_ptr<nn::Embedding> tgt_embed_;   // [V, E]
  std::unique_ptr<nn::Rnn> encoder_;           // E -> D x H/D
  std::unique_ptr<nn::Linear> bridge_;         // [L*H, C]
  std::unique_ptr<nn::Rnn> decoder_;           // E -> H, L layers (layer 0's context part in w_ctx_)
  nn::ParamId w_ctx_ = -1;                     // [G, X] decoder layer-0 weights for the per-step input
  std::unique_ptr<nn::Attention> attention_;   // query H, memory C
  std::unique_ptr<nn::Linear> combine_;        // luong W_c [P, C + H]; bahdanau/none W_p [P, H + C + E]
  std::unique_ptr<nn::Linear> output_;         // [V, P] (tied: the target embedding table)
};

}  // namespace engram::models
