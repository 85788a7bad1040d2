// Fuzz harness: WAV decoding (data/audio.h: decode_wav on bytes, read_wav on the same bytes as a
// file; both must agree). A decoded waveform must respect WavLimits (rate, duration, samples in
// [-1, 1)); short ones (<= 48000 samples) also go through the log-mel front end at their own
// rate with deltas, whose features must be finite and [T, F].
#include <cmath>
#include <cstring>

#include "engram/data/audio.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "wav";
using namespace engram::data::audio;

void features(const Waveform& wave) {
  FeatureConfig cfg;
  cfg.sample_rate = wave.sample_rate;
  cfg.delta_order = 2;
  const Features f = compute_fbank(wave, cfg);  // an engram::Error for rates the filters cannot cover
  FUZZ_CHECK(kHarness, f.dim == f.mel_bins * 3 && f.frames >= 0 &&
                           f.data.size() == static_cast<size_t>(f.frames) * static_cast<size_t>(f.dim),
             "features: {} values for [{}, {}]", f.data.size(), f.frames, f.dim);
  for (float v : f.data) FUZZ_CHECK(kHarness, std::isfinite(v), "non-finite feature {}", v);
}

void run(std::string_view bytes) {
  const WavLimits limits;
  const Waveform wave = decode_wav(bytes, "fuzz.wav", limits);
  FUZZ_CHECK(kHarness, wave.sample_rate >= 1 && wave.sample_rate <= limits.max_sample_rate, "sample rate {}",
             wave.sample_rate);
  FUZZ_CHECK(kHarness, !wave.samples.empty() && wave.seconds() <= limits.max_seconds, "{} samples, {} s",
             wave.samples.size(), wave.seconds());
  FUZZ_CHECK(kHarness, wave.samples.size() <= bytes.size() / 2, "{} samples from {} bytes of 16-bit PCM",
             wave.samples.size(), bytes.size());
  for (float v : wave.samples) FUZZ_CHECK(kHarness, v >= -1.0f && v < 1.0f, "sample {} outside [-1, 1)", v);

  const auto path = engram::fuzz::temp_file("in.wav", bytes);
  Waveform from_file;
  try {
    from_file = read_wav(path.string(), limits);
  } catch (const engram::Error& e) {
    engram::fuzz::finding(kHarness, fmt::format("decode_wav accepted what read_wav rejects: {}", e.what()));
  }
  FUZZ_CHECK(kHarness, from_file.sample_rate == wave.sample_rate && from_file.samples == wave.samples,
             "read_wav and decode_wav disagree");
  if (wave.samples.size() <= 48000) features(wave);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
