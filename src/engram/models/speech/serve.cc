// The transcribe route of the server over the inference contract (inference.h): one WAV file per
// request, sent as base64, read and turned into features once; the utterances of a batch asking
// for the same options are decoded together (transcribe_hyps); the reply carries each output
// token's attention over the encoder steps and the log-mel spectrogram those steps cover.
#include "engram/core/printable.h"
#include "engram/models/serve_json.h"
#include "engram/models/speech/eval.h"

namespace engram::models {

namespace {

using nlohmann::json;

constexpr double kMaxSeconds = 30.0;

data::audio::WavLimits serve_wav_limits() {
  data::audio::WavLimits l;
  l.max_seconds = kMaxSeconds;
  l.max_sample_rate = 48000;
  return l;
}

// One utterance: the model's features and the log-mel spectrogram drawn under the attention.
struct Utterance {
  data::audio::Features features;  // [T', F] stacked, as the encoder reads them
  data::audio::Features mel;       // [T, M]
  std::vector<int32_t> prefix;     // target prefix digits, forced first (empty: none)
};

// "target_prefix": digits, spaces between them allowed ("4 2" or "42").
std::vector<int32_t> read_digits(const std::string& text, size_t max_digits) {
  std::vector<int32_t> out;
  for (char c : text) {
    if (c == ' ') continue;
    ENGRAM_CHECK(c >= '0' && c <= '9', "'target_prefix' must hold digits 0-9 (and spaces), got '{}'", core::printable(text, 80));
    out.push_back(c - '0');
  }
  ENGRAM_CHECK(out.size() <= max_digits, "'target_prefix' has {} digits, more than max_length {}", out.size(), max_digits);
  return out;
}

}  // namespace

const InferenceSpec& LoadedSpeechModel::inference() const {
  static const InferenceSpec spec{{"wav_base64", "target_prefix"}, speech_option_set()};
  return spec;
}

std::unique_ptr<Request> LoadedSpeechModel::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<Utterance>(body, inference(), family(), limits, [&](const json& r) {
    const data::audio::WavLimits wav_limits = serve_wav_limits();
    const data::audio::Waveform wave = data::audio::decode_wav(
        serve_json::base64_field(r, "wav_base64", static_cast<size_t>(wav_limits.max_file_bytes())), "'wav_base64'",
        wav_limits);
    ENGRAM_CHECK(wave.sample_rate == fbank->config().sample_rate,
                 "'wav_base64' is sampled at {} Hz; the model reads {} Hz", wave.sample_rate,
                 fbank->config().sample_rate);
    Utterance u;
    u.features = speech_features(model->cfg(), *fbank, wave);
    ENGRAM_CHECK(u.features.frames >= 1, "'wav_base64' is shorter than one analysis window");
    u.mel = spectrogram(model->cfg(), *fbank, wave);
    if (serve_json::find(r, "target_prefix"))
      u.prefix = read_digits(serve_json::string_field(r, "target_prefix", 4096), static_cast<size_t>(limits.max_length));
    std::vector<Utterance> one;
    one.push_back(std::move(u));
    return one;
  });
}

std::vector<json> LoadedSpeechModel::run_requests(std::span<const Request* const> requests) const {
  const SpeechConfig& cfg = model->cfg();
  auto run = [&](std::span<const Utterance* const> utts, const decode::DecodeOptions& options, const Emit& emit) {
    const SpeechDecodeOptions o = speech_decode_options(options);
    decode::SearchOptions so = speech_search(o);
    so.alignments = true;
    std::vector<const data::audio::Features*> features;
    std::vector<std::vector<int32_t>> prefixes;
    for (const Utterance* u : utts) features.push_back(&u->features), prefixes.push_back(u->prefix);
    auto one = [&](size_t i) { return transcribe_hyps(models(), {&features[i], 1}, so, 1, {&prefixes[i], 1}).at(0); };
    const std::vector<std::vector<decode::Hypothesis>> hyps =
        emit ? stream_inputs(utts.size(), so, model->eos_id(), emit, [](int32_t id) { return std::to_string(id); }, one)
             : transcribe_hyps(models(), features, so, o.batch_size, prefixes);
    std::vector<json> out;
    for (size_t u = 0; u < utts.size(); ++u) {
      const decode::Hypothesis& h = hyps[u].at(0);
      const std::vector<int> digits(h.ids.begin(), h.ids.end());
      // The log-mel spectrogram under the attention, as `engram speech show` draws it: [T][M].
      const data::audio::Features& mel = utts[u]->mel;
      json spectrogram = json::array();
      for (int64_t t = 0; t < mel.frames; ++t)
        spectrogram.push_back(std::vector<float>(mel.row(t), mel.row(t) + mel.mel_bins));
      out.push_back({{"text", digits_text(digits)},
                     {"digits", digits},
                     {"score", h.score},
                     {"frames_per_step", cfg.stack << cfg.pyramid},
                     {"attention", serve_json::rows(h.alignment, static_cast<size_t>(h.src_len))},
                     {"spectrogram", std::move(spectrogram)}});
    }
    return out;
  };
  return models::run_requests<Utterance>(requests, run, single_reply);
}

}  // namespace engram::models
