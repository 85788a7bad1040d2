// Seq2Seq: the RNN encoder-decoder of the seeds, with <GO>/<EOS> decoding and attention over the
// encoder states (c_t = Σ_i α_ti h_i), or without it (attention: none, the "traditional" model:
// one fixed context C = the encoder's last state, fed at every step). Two decoder styles:
//   Bahdanau: score with the previous state s_{t-1}; c_t enters the RNN with the embedding;
//             readout tanh(W_p [s_t; c_t; e_{t-1}]).
//   Luong:    the RNN runs first; score with the current h_t; attentional state
//             h~_t = tanh(W_c [c_t; h_t]) is the readout and (input feeding) the next step's extra input.
// Composed from the shared parts: an nn::RnnEncoder over token embeddings, an
// nn::AttentionDecoder (the step, both styles, the fixed-context baseline) and an nn::VocabOutput.
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
#include "engram/models/text_codec.h"
#include "engram/nn/attention.h"
#include "engram/nn/attention_decoder.h"
#include "engram/nn/encoder.h"
#include "engram/nn/output_layer.h"
#include "engram/nn/embedding.h"
#include "engram/nn/linear.h"
#include "engram/nn/rnn.h"

namespace engram::models {

enum class RnnCell { kLstm, kGru };
enum class AttentionKind { kNone, kDot, kGeneral, kAdditive, kConcat };  // concat = additive (Luong's name)
enum class AttentionStyle { kBahdanau, kLuong };

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

namespace engram::models {

using core::Graph;
using core::Var;

enum class Side { kSource, kTarget };

// How source and target text become ids; saved with the model so translation tokenizes alike.
struct TokenizerConfig {
  TokenUnit unit = TokenUnit::kSpm;
  bool joint = false;          // spm: one model for both sides (src.spm == tgt.spm)
  int vocab_size = 8000;       // spm: pieces per model; word: max size (0 = no limit)
  int src_vocab_size = 0;      // the source side's vocab_size when not joint (0 = vocab_size)
  int min_count = 1;           // word/char: rarer tokens become <unk>
  bool lowercase = false;      // lowercase (ASCII + simple Unicode) before tokenizing
  bool simplified = false;     // traditional Chinese characters as simplified (OpenCC t2s) before tokenizing
  float character_coverage = 1.0f;  // spm: 0.9995 for CJK-heavy text

  template <class V>
  void visit(V& v) {
    v("unit", unit, "word | char | spm (SentencePiece trained by engram)");
    v("joint", joint, "spm: one model for source and target");
    v("vocab_size", vocab_size, "spm: pieces per model; word/char: max vocabulary size (0 = all)");
    v("src_vocab_size", src_vocab_size, "the source side's vocab_size when not joint (0 = vocab_size), e.g. "
      "more pieces for a Chinese source than an English target");
    v("min_count", min_count, "word/char: tokens seen fewer times become <unk>");
    v("lowercase", lowercase, "lowercase text before tokenizing");
    v("simplified", simplified, "write traditional Chinese characters as simplified (OpenCC t2s) before "
      "tokenizing, in training and in decoding: one script for a corpus that mixes both");
    v("character_coverage", character_coverage, "spm: character coverage (0.9995 for CJK)");
  }
  // A side's vocabulary file in a model or run directory: word/char src.vocab.txt, tgt.vocab.txt;
  // spm src.spm, tgt.spm (joint: joint.spm for both).
  std::string file_name(Side side) const;
  // The side's codec read from `dir` (an error names the missing file), or built from training
  // text into it (joint spm trains once on both sides' lines: pass them all).
  TextCodec load(Side side, const std::string& dir) const;
  TextCodec build(Side side, const std::vector<std::string>& lines, const std::string& dir) const;
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
  // The same checks but for the vocabulary sizes (set from the data): before training starts.
  void validate_options() const;
};

using nn::DecoderContext;
using nn::DecoderState;
using nn::DecoderStepOutput;

// Guided alignment (Chen et al. 2016, "Guided Alignment Training for Topic-Aware Neural Machine
// Translation"; Marian's guided-alignment cost "ce"): a target distribution over the source
// positions for the target tokens of a batch, which attention is asked to follow. rows [T*B, S]
// (row t*B + b, as the teacher-forced steps), all zero for a position without a guide (padding,
// <eos>). The term is a mean over R rows: the rows that have a guide (a data-parallel shard
// passes the whole batch's count times its share of the batch's loss, so that the shards' scaled
// losses add up to the whole batch's).
struct AlignmentGuide {
  std::vector<float> rows;
  double norm = 0;      // R > 0
  float weight = 0.0f;  // λ: loss = cross-entropy + λ * guided-alignment term
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
  // Mean (label-smoothed unless smoothing = 0) cross-entropy over the non-pad targets, plus with
  // a guide (needs attention) λ * -(1/R) Σ_r Σ_s A[r, s] log(α[r, s] + 1e-6) (R = guide->norm).
  Var loss(Graph& g, const data::Batch& batch, core::Rng* dropout_rng, float label_smoothing,
           const AlignmentGuide* guide = nullptr) const;

  // ---- the parts (nn/encoder.h, nn/attention_decoder.h, nn/output_layer.h)
  const nn::RnnEncoder& encoder() const { return *encoder_; }
  const nn::AttentionDecoder& decoder() const { return *decoder_; }
  const nn::VocabOutput& output() const { return *output_; }
  Var embed_target(Graph& g, const std::vector<int32_t>& ids, core::Rng* dropout_rng) const;  // [R, E]
  // Logits [R, V] of collected decoder step outputs (top [R, H], context [R, C], emb [R, E] =
  // e_{t-1}, attentional [R, P] for luong): readout, dropout, output layer.
  Var readout_logits(Graph& g, Var top, Var context, Var emb, Var attentional, core::Rng* dropout_rng) const;

  // ---- decode::StepModel (seq2seq_step.cc)
  int32_t go_id() const override;
  int32_t eos_id() const override;
  std::unique_ptr<decode::DecodeState> encode(Graph& g, const decode::SourceBatch& src) const override;
  decode::StepOutput step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const override;
  void reorder(decode::DecodeState& state, std::span<const int32_t> rows) const override;
  // Restricts the state's output layer to the sorted, unique target ids `ids` (which hold <eos>):
  // their rows of W_o and b_o are gathered once, and step() scores only them (-inf elsewhere).
  // encode() calls it with SourceBatch::output_ids.
  void restrict_output(decode::DecodeState& state, std::span<const int32_t> ids) const;

  int context_width() const { return encoder_->output_width(); }  // C
  int readout_width() const { return readout_dim_; }               // P
  int feed_width() const { return decoder_->feed_width(); }        // X
  bool has_attention() const { return decoder_->has_attention(); }

 private:
  Var dropout(Var x, core::Rng* rng) const;

  Seq2SeqConfig cfg_;
  int readout_dim_ = 0;  // P
  mutable nn::ParamStore store_;  // mutable: graph leaves write gradients into it from const methods
  std::unique_ptr<nn::Embedding> tgt_embed_;        // [V, E]
  std::unique_ptr<nn::RnnEncoder> encoder_;         // encoder/embed [Vs, E], encoder/rnn E -> D x H/D
  std::unique_ptr<nn::AttentionDecoder> decoder_;   // bridge, decoder/{rnn, w_ctx, attention, combine | readout}
  std::unique_ptr<nn::VocabOutput> output_;         // decoder/output [V, P] (tied: the target embedding table)
};

}  // namespace engram::models
