// The transcribe route of the server (LoadedSpeechModel::serve_check / serve): one WAV file per
// request, sent as base64; the reply carries each output token's attention over the encoder steps
// and the log-mel spectrogram those steps cover.
#include "engram/core/graph.h"
#include "engram/decode/search.h"
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

data::audio::Waveform read_wave(const json& r) {
  const data::audio::WavLimits limits = serve_wav_limits();
  return data::audio::decode_wav(serve_json::base64_field(r, "wav_base64", static_cast<size_t>(limits.max_file_bytes())),
                                 "'wav_base64'", limits);
}

}  // namespace

int LoadedSpeechModel::serve_check(const json& r, const ServeLimits& limits) const {
  serve_json::check_object(r);
  serve_json::int_field(r, "beam", 1, 1, limits.max_beam);
  const data::audio::Waveform wave = read_wave(r);
  ENGRAM_CHECK(wave.sample_rate == fbank->config().sample_rate, "'wav_base64' is sampled at {} Hz; the model reads {} Hz",
               wave.sample_rate, fbank->config().sample_rate);
  return 1;
}

std::vector<json> LoadedSpeechModel::serve(std::span<const json* const> requests) const {
  const SpeechConfig& cfg = model->cfg();
  std::vector<json> out;
  for (const json* r : requests) {
    const data::audio::Waveform wave = read_wave(*r);
    const data::audio::Features f = speech_features(cfg, *fbank, wave);
    ENGRAM_CHECK(f.frames >= 1, "'wav_base64' is shorter than one analysis window");
    const std::vector<const data::audio::Features*> one = {&f};
    core::Graph g(false);
    decode::SearchOptions so;  // as `engram speech show`: at most 16 digits
    so.beam = serve_json::int_field(*r, "beam", 1, 1, 1 << 20);
    so.max_length = 16;
    so.max_length_ratio = 0.0f;
    so.max_length_offset = 16;
    so.alignments = true;
    const decode::Hypothesis h = decode::search(g, *model, speech_source(one), so)[0][0];
    const std::vector<int> digits(h.ids.begin(), h.ids.end());
    json attention = json::array();
    const size_t s = static_cast<size_t>(h.src_len);
    for (size_t row = 0; s > 0 && (row + 1) * s <= h.alignment.size(); ++row)
      attention.push_back(std::vector<float>(h.alignment.begin() + row * s, h.alignment.begin() + (row + 1) * s));
    // The log-mel spectrogram under the attention, as `engram speech show` draws it: [T][M], the
    // static block of each feature frame.
    const data::audio::Features mel = spectrogram(cfg, *fbank, wave);
    json spectrogram = json::array();
    for (int64_t t = 0; t < mel.frames; ++t) spectrogram.push_back(std::vector<float>(mel.row(t), mel.row(t) + mel.mel_bins));
    out.push_back({{"text", digits_text(digits)},
                   {"digits", digits},
                   {"score", h.score},
                   {"frames_per_step", cfg.stack << cfg.pyramid},
                   {"attention", std::move(attention)},
                   {"spectrogram", std::move(spectrogram)}});
  }
  return out;
}

}  // namespace engram::models
