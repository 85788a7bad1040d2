// PointerGenerator: the pointer-generator network with coverage of See, Liu & Manning (2017),
// "Get To The Point". Composed from the shared parts: one embedding table for source and target
// words, an nn::RnnEncoder (bidirectional, H/2 units per direction), a Bahdanau-style
// nn::AttentionDecoder with additive attention (coverage: one score feature per source position,
// cov_ti = Σ_{t'<t} α_t'i), an nn::VocabOutput, and the nn::CopyOutput mixture
//   p_gen = σ(w_c·c_t + w_s·s_t + w_x·x_t + b)
//   P(w)  = p_gen P_vocab(w) + (1 − p_gen) Σ_{i: x_i = w} α_ti
// over the extended vocabulary, computed in log space (nn/copy_output.h).
//
// Extended vocabulary (per example): ids [0, V) are the vocabulary; the source's words outside it
// get V, V+1, ... in order of first appearance (text.h). A batch (data::Batch) holds every id
// in that numbering — src and tgt_out extended, X = (largest id − V + 1) extra ids — and the
// model maps ids >= V to <unk> wherever a word is looked up in the embedding (encoder inputs and
// the decoder's previous word). Targets >= V are scored by copying only; a target that is OOV and
// not in its source was numbered <unk> by the caller. Without copy, targets >= V become <unk>.
//
// Loss (teacher forcing, mean over the non-pad target tokens):
//   L = −mean_t w_t log P(y_t) + λ mean_t Σ_i min(α_ti, cov_ti)    (the second term with coverage)
// where w_t = unk_loss_weight for <unk> targets (an OOV word not in the source; without copy,
// every OOV word) and 1 otherwise; the means are over the non-pad target tokens.
// Source-token features (cfg.source_features): every article position adds a row of
// source_features [30, E] to its embedded token, row 6 n + o: n the token's count in the article
// (its extended id's, so an OOV's count is its own) bucketed 1, 2, 3, 4-5, 6+ -> n = 0..4; o = 0
// for a vocabulary word, 1 + min(k, 4) for the article's k-th OOV in order of first appearance.
// Every OOV reads as <unk> in the embedding; these rows tell the encoder which <unk>s are one
// word, how often it recurs and whether it came first, what a headline's name usually shows
// (Nallapati et al. 2016 add such features to the encoder for the same reason).
// Inference: PgStepModel (step.cc) implements decode::StepModel over V + X classes.
// Parameters: embed [V, E], source_features [30, E] (source_features), encoder/rnn/*, bridge, decoder/{rnn, w_ctx, attention, readout},
// decoder/output [V, P], decoder/copy/{w [1, C + H + E], b [1]} (copy).
// Dims: B batch, S source len, T target steps, R = T*B rows (row t*B + b), E embedding, H hidden,
// C = H context width, P = H readout width, V vocabulary, X extra ids, N decoder rows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engram/core/rng.h"
#include "engram/data/batching.h"
#include "engram/decode/step_model.h"
#include "engram/models/pointer_generator/config.h"
#include "engram/models/registry.h"
#include "engram/nn/attention_decoder.h"
#include "engram/nn/copy_output.h"
#include "engram/nn/embedding.h"
#include "engram/nn/encoder.h"
#include "engram/nn/output_layer.h"

namespace engram::models {

using core::Graph;
using core::Var;

// How one forward pass runs.
struct PgForwardOptions {
  core::Rng* dropout_rng = nullptr;  // null = no dropout
  // With cfg.coverage: false runs the model as if it had none (zero coverage feature, no coverage
  // loss): the training phase before coverage is switched on (See et al.'s final phase).
  bool coverage_active = true;
};

// Teacher-forced results of a batch, rows r = t*B + b.
struct PgForward {
  Var log_p;          // [R] log P(tgt_out) (row weight 0 past the target's end)
  Var coverage_loss;  // [R] Σ_i min(α_ti, cov_ti); invalid without active coverage
  Var alpha;          // [R, S] attention weights
  Var p_gen;          // [R] σ(z); invalid without copy
  std::vector<float> weight;  // [R] w_t for target tokens (1, or unk_loss_weight for <unk>), 0 for padding
  int64_t tokens = 0;         // target tokens (non-pad rows)
  int steps = 0, batch = 0, src_len = 0, extra = 0;  // T, B, S, X
};

struct PgLoss {
  Var total;            // scalar: mean NLL + λ mean coverage loss (differentiable)
  double nll_sum = 0;   // Σ −w_t log P over the target tokens
  double coverage_sum = 0;  // Σ coverage loss over the target tokens (0 without coverage)
  int64_t tokens = 0;
};

class PointerGenerator final : public Model {
 public:
  static constexpr const char* kName = "pointer_generator";
  // Builds every parameter, initialised from `rng`.
  PointerGenerator(const PointerGeneratorConfig& cfg, core::Rng& rng);

  // ---- Model
  std::string name() const override { return kName; }
  nn::ParamStore& params() override { return store_; }
  YAML::Node config() const override;
  const PointerGeneratorConfig& cfg() const { return cfg_; }

  // ---- training; differentiable in every parameter. `batch` in extended ids (see the top).
  PgForward forward(Graph& g, const data::Batch& batch, const PgForwardOptions& o = {}) const;
  PgLoss loss(Graph& g, const data::Batch& batch, const PgForwardOptions& o = {}) const;

  // ---- the parts (used by the step model)
  int32_t vocab() const { return cfg_.vocab; }  // V
  // ids (extended) -> vocabulary ids, >= V mapped to <unk>.
  std::vector<int32_t> to_vocab(std::span<const int32_t> ids) const;
  // The encoder over a batch of sources in extended ids [S, B] time-major (with the source
  // features when the config has them); `dropout_rng` null = no dropout.
  nn::EncodedSource encode(Graph& g, std::span<const int32_t> ids, int s, int b, std::span<const int32_t> lengths,
                           core::Rng* dropout_rng) const;
  // The source feature rows of [S, B] extended ids (0 past a row's length); see the top.
  static constexpr int kSourceFeatureRows = 30;
  static std::vector<int32_t> source_feature_ids(std::span<const int32_t> ids, int s, int b,
                                                 std::span<const int32_t> lengths, int32_t vocab);
  const nn::Embedding& embedding() const { return *encoder_->embedding(); }
  const nn::RnnEncoder& encoder() const { return *encoder_; }
  const nn::AttentionDecoder& decoder() const { return *decoder_; }
  const nn::VocabOutput& output() const { return *output_; }
  const nn::CopyOutput* copy() const { return copy_.get(); }  // null without copy
  int context_width() const { return encoder_->output_width(); }  // C
  Var dropout(Var x, core::Rng* rng) const;

 private:
  PointerGeneratorConfig cfg_;
  mutable nn::ParamStore store_;  // mutable: graph leaves write gradients into it from const methods
  std::unique_ptr<nn::RnnEncoder> encoder_;        // owns `embed` [V, E]; encoder/rnn E -> 2 x H/2
  std::unique_ptr<nn::AttentionDecoder> decoder_;  // bridge, decoder/{rnn, w_ctx, attention, readout}
  std::unique_ptr<nn::VocabOutput> output_;        // decoder/output [V, P]
  std::unique_ptr<nn::CopyOutput> copy_;           // decoder/copy (copy)
  std::unique_ptr<nn::Embedding> source_features_;  // source_features [30, E] (cfg.source_features)
};

// Options of decoding with the step model.
// (A minimum length, n-gram blocking and the coverage penalty are the shared search's options:
// decode::SearchOptions.)
struct PgDecodeOptions {
  bool coverage_active = true;   // as PgForwardOptions::coverage_active
  bool block_unk = false;        // <unk> gets log-probability −inf: the search copies or generates a word instead
  // Added to the log-probability of every article word outside the vocabulary (extra ids the
  // row's source holds): > 0 makes the search copy names more readily (a decoding bias, chosen
  // on validation like a length penalty; the step's scores then no longer sum to one).
  float oov_bonus = 0.0f;
};

// PointerGenerator as a decode::StepModel (step.cc): SourceBatch::ids in extended ids (each in
// [0, V + S)); the classes of a step are V + X (copy; X from the batch's largest id) or V.
// Log-probabilities of <pad> and <go> are −inf (and <unk>'s with block_unk), extra ids get
// oov_bonus added, and the log-probabilities are −inf for
// extra ids a row's source does not hold. The alignment is α [N, S].
class PgStepModel final : public decode::StepModel {
 public:
  PgStepModel(const PointerGenerator& model, const PgDecodeOptions& options) : model_(model), options_(options) {}
  int32_t go_id() const override;
  int32_t eos_id() const override;
  std::unique_ptr<decode::DecodeState> encode(Graph& g, const decode::SourceBatch& src) const override;
  decode::StepOutput step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const override;
  void reorder(decode::DecodeState& state, std::span<const int32_t> rows) const override;

 private:
  const PointerGenerator& model_;
  PgDecodeOptions options_;
};

}  // namespace engram::models
