// SpeechModel: its parts, the front end's frame stacking and the teacher-forced forward.
// Dims: B batch, S encoder steps, F input width, T output steps, V classes, K filters, W taps.
#include "engram/models/speech/model.h"

#include <fmt/format.h>

#include <algorithm>

#include "engram/core/ops.h"
#include "engram/nn/dropout.h"
#include "engram/nn/init.h"

namespace engram::models {

namespace {

nn::CellKind cell_kind(SpeechCell c) { return c == SpeechCell::kLstm ? nn::CellKind::kLstm : nn::CellKind::kGru; }

}  // namespace

void SpeechConfig::validate() const {
  features.validate();
  // stack · F (the encoder's input width) and stack · 2^pyramid are ints; 1,000 frames are 10 s at
  // the default 10 ms hop.
  ENGRAM_CHECK(stack >= 1 && stack <= 1000, "speech: stack {} must be in 1..1000", stack);
  ENGRAM_CHECK(pyramid >= 0 && pyramid <= 4, "speech: pyramid {} must be in 0..4", pyramid);
  ENGRAM_CHECK(embed_dim > 0 && encoder_units > 0 && encoder_layers >= 1 && decoder_hidden > 0 && token_dim > 0 &&
                   readout_dim > 0 && attn_dim > 0,
               "speech: embed_dim {}, encoder_units {}, encoder_layers {}, decoder_hidden {}, token_dim {}, "
               "readout_dim {} and attn_dim {} must be positive",
               embed_dim, encoder_units, encoder_layers, decoder_hidden, token_dim, readout_dim, attn_dim);
  ENGRAM_CHECK(dropout >= 0.0f && dropout < 1.0f, "speech: dropout {} must be in [0, 1)", dropout);
  ENGRAM_CHECK(attention != SpeechAttention::kLocation || (conv_filters >= 1 && conv_width >= 1 && conv_width % 2 == 1),
               "speech: conv_filters {} must be >= 1 and conv_width {} odd and >= 1", conv_filters, conv_width);
}

SpeechModel::SpeechModel(const SpeechConfig& cfg, core::Rng& rng) : cfg_(cfg) {
  cfg_.validate();
  const nn::CellKind cell = cell_kind(cfg_.cell);
  encoder_ = std::make_unique<nn::RnnEncoder>(
      store_, "encoder", cfg_.input_dim(), cfg_.embed_dim,
      nn::RnnEncoderConfig{.cell = cell, .units = cfg_.encoder_units, .layers = cfg_.encoder_layers,
                           .bidirectional = cfg_.bidirectional, .dropout = cfg_.dropout},
      rng);
  for (int i = 0; i < cfg_.pyramid; ++i) {
    const int below = i == 0 ? encoder_->output_width() : pyramid_.back()->output_width();
    pyramid_.push_back(std::make_unique<nn::RnnEncoder>(
        store_, fmt::format("encoder/pyramid{}", i), 2 * below, cfg_.embed_dim,
        nn::RnnEncoderConfig{.cell = cell, .units = cfg_.encoder_units, .layers = 1,
                             .bidirectional = cfg_.bidirectional},
        rng));
  }
  embed_ = std::make_unique<nn::Embedding>(
      store_, "embed", nn::EmbeddingConfig{.vocab = kSpeechGo + 1, .dim = cfg_.token_dim, .init_stddev = 0.1f}, rng);
  decoder_ = std::make_unique<nn::AttentionDecoder>(
      store_,
      nn::AttentionDecoderConfig{.cell = cell, .input_dim = cfg_.token_dim, .hidden = cfg_.decoder_hidden,
                                 .layers = 1, .context_dim = context_width(), .attention = true,
                                 .score = nn::AttentionScore::kAdditive, .attn_dim = cfg_.attn_dim,
                                 .readout_dim = cfg_.readout_dim,
                                 .score_features = location() ? cfg_.conv_filters : 0},
      rng);
  if (location()) {
    filters_ = store_.add("decoder/location/filters", {cfg_.conv_filters, cfg_.conv_width});
    nn::init::uniform(store_, filters_, rng, -0.5f, 0.5f);
  }
  output_ = std::make_unique<nn::VocabOutput>(store_, "output", cfg_.readout_dim, kSpeechClasses, rng);
}

YAML::Node SpeechModel::config() const { return io::to_yaml(cfg_); }

SpeechModel::Encoded SpeechModel::encode_batch(Graph& g, const decode::SourceBatch& src, core::Rng* dropout_rng) const {
  ENGRAM_CHECK(src.batch >= 1 && src.steps >= 1, "speech: cannot encode an empty batch (S={}, B={})", src.steps,
               src.batch);
  ENGRAM_CHECK(src.feature_dim == cfg_.input_dim(), "speech: inputs have {} features per step, the model takes {}",
               src.feature_dim, cfg_.input_dim());
  ENGRAM_CHECK(static_cast<int64_t>(src.features.size()) == int64_t{src.steps} * src.batch * src.feature_dim &&
                   static_cast<int>(src.lengths.size()) == src.batch,
               "speech: {} feature values and {} lengths for S={} x B={} x F={}", src.features.size(),
               src.lengths.size(), src.steps, src.batch, src.feature_dim);
  for (int32_t n : src.lengths)
    ENGRAM_CHECK(n >= 1 && n <= src.steps, "speech: an utterance of {} steps in a batch padded to {}", n, src.steps);
  Var x = g.constant({src.steps, src.batch, src.feature_dim}, src.features.data());
  const nn::EncodedSource enc = encoder_->encode(
      g, nn::EncoderInput{.steps = src.steps, .batch = src.batch, .features = x, .lengths = src.lengths}, dropout_rng);
  Encoded out;
  Var outputs = enc.outputs, final_top = enc.final_top;
  int steps = src.steps;
  std::vector<int32_t> lengths(src.lengths.begin(), src.lengths.end());
  for (const auto& layer : pyramid_) {
    // [S, B, C] -> [ceil(S/2), B, 2C]: step i = [output 2i ; output 2i+1] (zero past the end).
    const int b = src.batch, c = outputs.shape()[2];
    if (steps % 2 == 1) outputs = core::concat({outputs, g.zeros({1, b, c})}, 0);
    steps = (steps + 1) / 2;
    outputs = core::reshape(core::permute(core::reshape(outputs, {steps, 2, b, c}), {0, 2, 1, 3}), {steps, b, 2 * c});
    for (int32_t& n : lengths) n = (n + 1) / 2;
    const nn::EncodedSource e = layer->encode(
        g, nn::EncoderInput{.steps = steps, .batch = b, .features = outputs, .lengths = lengths}, nullptr);
    outputs = e.outputs;
    final_top = e.final_top;
  }
  out.init = decoder_->initial_state(g, final_top);
  out.context = decoder_->prepare_context(g, outputs, final_top, lengths);
  out.steps = steps;
  out.lengths = lengths;
  return out;
}

Var SpeechModel::location_features(Graph& g, Var alpha) const {
  if (!location()) return {};
  const int n = alpha.shape()[0], s = alpha.shape()[1], k = cfg_.conv_filters, w = cfg_.conv_width, r = w / 2;
  // f[n, i, k] = Σ_j filters[k, j] alpha[n, i + j - r] (zero outside): shifted copies, one GEMM.
  Var padded = r > 0 ? core::concat({g.zeros({n, r}), alpha, g.zeros({n, r})}, 1) : alpha;  // [N, S + 2r]
  std::vector<Var> shifts;
  for (int j = 0; j < w; ++j) shifts.push_back(core::reshape(core::slice(padded, 1, j, j + s), {n, s, 1}));
  Var taps = core::reshape(w > 1 ? core::concat(shifts, 2) : shifts[0], {n * s, w});  // [N*S, W]
  Var f = core::matmul(taps, store_.var(g, filters_), false, true);                  // [N*S, K]
  return core::reshape(f, {n, s, k});
}

Var SpeechModel::step_log_probs(Graph& g, const nn::DecoderStepOutput& o, Var emb) const {
  return output_->log_probs(g, decoder_->readout(g, o.top, o.context, emb, {}));
}

Var SpeechModel::log_probs(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& digits,
                           std::vector<int32_t>* out_targets, core::Rng* dropout_rng) const {
  const int b = src.batch;
  ENGRAM_CHECK(static_cast<int>(digits.size()) == b, "speech: {} targets for a batch of {}", digits.size(), b);
  int steps = 0;
  for (const auto& d : digits) {
    for (int x : d) ENGRAM_CHECK(x >= 0 && x <= 9, "speech: target digit {} outside 0-9", x);
    steps = std::max(steps, static_cast<int>(d.size()) + 1);
  }
  std::vector<int32_t> in(static_cast<size_t>(steps) * b, kSpeechGo), tgt(static_cast<size_t>(steps) * b, -1);
  for (int i = 0; i < b; ++i) {
    const int len = static_cast<int>(digits[i].size());
    for (int t = 0; t <= len; ++t) {
      tgt[static_cast<size_t>(t) * b + i] = t < len ? digits[i][t] : kSpeechEos;
      if (t > 0) in[static_cast<size_t>(t) * b + i] = digits[i][t - 1];
    }
  }
  Encoded enc = encode_batch(g, src, dropout_rng);
  Var emb = embed_->forward(g, in);                  // [T*B, E]
  Var xw_all = decoder_->input_projection(g, emb);  // [T*B, G]
  nn::DecoderState state = enc.init;
  Var alpha = g.zeros({b, enc.steps});
  std::vector<Var> tops, contexts;
  for (int t = 0; t < steps; ++t) {
    nn::DecoderStepOutput o = decoder_->step(g, enc.context, core::slice(xw_all, 0, t * b, (t + 1) * b), state,
                                             nullptr, location_features(g, alpha));
    state = o.state;
    alpha = o.alpha;
    tops.push_back(o.top);
    contexts.push_back(o.context);
  }
  if (out_targets) *out_targets = tgt;
  Var top = core::concat(tops, 0);
  if (dropout_rng) top = nn::Dropout(cfg_.dropout).forward(g, top, *dropout_rng, true);
  return output_->log_probs(g, decoder_->readout(g, top, core::concat(contexts, 0), emb, {}));
}

Var SpeechModel::loss(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& digits,
                      core::Rng* dropout_rng) const {
  std::vector<int32_t> tgt;
  Var lp = log_probs(g, src, digits, &tgt, dropout_rng);
  return core::nll(lp, tgt, core::CrossEntropyOptions{.ignore_index = -1, .mean = false});
}

data::audio::Features spectrogram(const SpeechConfig& cfg, const data::audio::FbankComputer& fbank,
                                  const data::audio::Waveform& wave, const data::audio::Features* computed) {
  if (cfg.features.num_ceps == 0) return computed ? *computed : fbank.compute(wave);
  data::audio::FeatureConfig mel = fbank.config();
  mel.num_ceps = 0;
  data::audio::Features out = data::audio::FbankComputer(mel).compute(wave);
  ENGRAM_CHECK(!computed || out.frames == computed->frames, "speech: the spectrogram has {} frames, the features {}",
               out.frames, computed ? computed->frames : 0);
  return out;
}

data::audio::Features stack_frames(const data::audio::Features& f, int stack) {
  ENGRAM_CHECK(stack >= 1, "speech: stack {} must be >= 1", stack);
  data::audio::Features out;
  out.mel_bins = f.mel_bins;
  out.cepstral = f.cepstral;
  out.dim = f.dim * stack;
  out.frames = std::max<int64_t>(1, (f.frames + stack - 1) / stack);
  out.data.assign(static_cast<size_t>(out.frames * out.dim), 0.0f);
  for (int64_t t = 0; t < f.frames; ++t)
    std::copy(f.row(t), f.row(t) + f.dim, out.data.data() + (t / stack) * out.dim + (t % stack) * f.dim);
  return out;
}

data::audio::Features speech_features(const SpeechConfig& cfg, const data::audio::FbankComputer& fbank,
                                      const data::audio::Waveform& wave) {
  return stack_frames(fbank.compute(wave), cfg.stack);
}

void finish_speaker_features(const SpeechConfig& cfg, std::span<data::audio::Features* const> unnormalised) {
  const data::audio::Cmvn mode = cfg.features.cmvn;
  if (cfg.features.cmvn_scope == data::audio::CmvnScope::kSpeaker) {
    data::audio::CmvnStats stats;
    for (const auto* f : unnormalised) stats.add(*f);
    if (stats.frames() > 0)
      for (auto* f : unnormalised) stats.apply(f, mode);
  } else {
    for (auto* f : unnormalised) data::audio::apply_cmvn(f, mode);
  }
  for (auto* f : unnormalised) *f = stack_frames(*f, cfg.stack);
}

decode::SourceBatch speech_source(std::span<const data::audio::Features* const> utts) {
  ENGRAM_CHECK(!utts.empty(), "speech: an empty batch");
  decode::SourceBatch src;
  src.batch = static_cast<int>(utts.size());
  src.feature_dim = utts[0]->dim;
  for (const auto* u : utts) {
    ENGRAM_CHECK(u->dim == src.feature_dim, "speech: features of width {} and {} in one batch", u->dim,
                 src.feature_dim);
    src.steps = std::max(src.steps, static_cast<int>(u->frames));
    src.lengths.push_back(static_cast<int32_t>(u->frames));
  }
  src.features.assign(static_cast<size_t>(src.steps) * src.batch * src.feature_dim, 0.0f);
  for (int b = 0; b < src.batch; ++b)
    for (int64_t t = 0; t < utts[b]->frames; ++t)
      std::copy(utts[b]->row(t), utts[b]->row(t) + src.feature_dim,
                src.features.data() + (t * src.batch + b) * src.feature_dim);
  return src;
}

}  // namespace engram::models
