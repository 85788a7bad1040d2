// SpeechModel: an attention-based digit recognizer (Chorowski et al. 2015 at FSDD scale),
// composed from the shared parts: an nn::RnnEncoder over stacked log-mel frames (feature input),
// an nn::AttentionDecoder (Bahdanau style; additive attention, or location-aware: the previous
// step's alpha convolved with K filters of W taps, composed as a sum of shifted copies, enters the
// score as per-position features) and an nn::VocabOutput over the digits and <eos>.
// Training is teacher forcing; inference implements decode::StepModel (greedy / beam, step.cc).
// Parameters: encoder/input/*, encoder/rnn/*, encoder/pyramid<i>/{input,rnn}/* (pyramid), embed/weight [12, token_dim], bridge/*, decoder/*,
// decoder/location/filters [K, W] (location), output/*.
// Dims: B batch, S encoder steps, F input width, T output steps, V = 11 classes, C encoder width,
// K location filters, W taps.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engram/core/rng.h"
#include "engram/data/audio.h"
#include "engram/decode/step_model.h"
#include "engram/models/registry.h"
#include "engram/models/speech/config.h"
#include "engram/nn/attention_decoder.h"
#include "engram/nn/embedding.h"
#include "engram/nn/encoder.h"
#include "engram/nn/output_layer.h"

namespace engram::models {

using core::Graph;
using core::Var;

class SpeechModel final : public Model, public decode::StepModel {
 public:
  static constexpr const char* kName = "speech";
  SpeechModel(const SpeechConfig& cfg, core::Rng& rng);

  std::string name() const override { return kName; }
  nn::ParamStore& params() override { return store_; }
  YAML::Node config() const override;
  const SpeechConfig& cfg() const { return cfg_; }

  // Teacher-forced log p [T*B, V] (row t*B + b) for digit targets; `out_targets` receives the
  // class at each row (-1 past an utterance's <eos>). `dropout_rng` (training) draws the
  // masks of cfg().dropout; null = none.
  Var log_probs(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& digits,
                std::vector<int32_t>* out_targets, core::Rng* dropout_rng = nullptr) const;
  // Σ over utterances and steps of -log p(target), a scalar.
  Var loss(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& digits,
           core::Rng* dropout_rng = nullptr) const;

  // ---- decode::StepModel (step.cc)
  int32_t go_id() const override { return kSpeechGo; }
  int32_t eos_id() const override { return kSpeechEos; }
  std::unique_ptr<decode::DecodeState> encode(Graph& g, const decode::SourceBatch& src) const override;
  decode::StepOutput step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const override;
  void reorder(decode::DecodeState& state, std::span<const int32_t> rows) const override;

  // ---- parts
  struct Encoded {
    nn::DecoderState init;
    nn::DecoderContext context;
    int steps = 0;                 // S' encoder output steps (after the pyramid)
    std::vector<int32_t> lengths;  // [B] output lengths
  };
  Encoded encode_batch(Graph& g, const decode::SourceBatch& src, core::Rng* dropout_rng = nullptr) const;
  // Location features [N, S, K] of the previous alpha [N, S]; invalid Var with additive attention.
  Var location_features(Graph& g, Var alpha) const;
  // log p [N, V] of one step's outputs.
  Var step_log_probs(Graph& g, const nn::DecoderStepOutput& o, Var emb) const;
  bool location() const { return cfg_.attention == SpeechAttention::kLocation; }
  int context_width() const { return pyramid_.empty() ? encoder_->output_width() : pyramid_.back()->output_width(); }

 private:
  SpeechConfig cfg_;
  mutable nn::ParamStore store_;
  std::unique_ptr<nn::RnnEncoder> encoder_;
  std::vector<std::unique_ptr<nn::RnnEncoder>> pyramid_;  // encoder/pyramid<i>
  std::unique_ptr<nn::Embedding> embed_;
  std::unique_ptr<nn::AttentionDecoder> decoder_;
  std::unique_ptr<nn::VocabOutput> output_;
  nn::ParamId filters_ = -1;  // decoder/location/filters [K, W]
};

// The encoder input of one recording: log-mel features stacked `stack` frames at a time,
// [ceil(T / stack), F * stack] (the last group zero-padded; at least one row).
data::audio::Features stack_frames(const data::audio::Features& f, int stack);
// The log-mel spectrogram that `speech show` and the serve route draw: fbank's features of `wave`
// for a log-mel model (`computed`, when the caller has them, is returned instead of computing them
// again), else the same front end without the DCT (MFCC models: features.num_ceps), so the picture
// is always mel channels over the same frames.
data::audio::Features spectrogram(const SpeechConfig& cfg, const data::audio::FbankComputer& fbank,
                                  const data::audio::Waveform& wave, const data::audio::Features* computed = nullptr);
// Features of a waveform as the model takes them (the config's front end, then stacking).
data::audio::Features speech_features(const SpeechConfig& cfg, const data::audio::FbankComputer& fbank,
                                      const data::audio::Waveform& wave);
// Features of utterances of one speaker as the model takes them, from each one's
// FbankComputer::compute_unnormalised, in place: normalised by the statistics pooled over all of
// them (features.cmvn_scope speaker) or each by its own (utterance), then stacked.
void finish_speaker_features(const SpeechConfig& cfg, std::span<data::audio::Features* const> unnormalised);
// Time-major batch [S, B, F] of utterances' (stacked) features.
decode::SourceBatch speech_source(std::span<const data::audio::Features* const> utts);

}  // namespace engram::models
