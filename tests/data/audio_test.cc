// Audio front end: WAV reading against the committed files of tests/golden/audio (made by its
// make_golden.sh with SoX; every expected sample value and format is stated there), log-mel
// features against closed forms (a sinusoid on an FFT bin, a DC frame, the mel formula) and
// against the NumPy reference of tests/golden/audio/fbank_reference.py, deltas of ramps, CMVN,
// SpecAugment masks, and the FSDD listing on shared/data/fsdd (counts from its README).
#include "engram/data/audio.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <tuple>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/core/rng.h"

namespace engram::data::audio {
namespace {

using data::testing::CorpusTest;
using data::testing::TempDir;

const std::string kGolden = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/audio/";

using testing::error_of;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reads fbank_reference.py output: "frames T dim F", then "t v_0 .. v_{F-1}" lines.
struct Reference {
  int64_t frames = 0;
  int dim = 0;
  std::map<int64_t, std::vector<double>> rows;
};
Reference read_reference(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  Reference r;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    if (line.rfind("frames", 0) == 0) {
      std::string a, b;
      s >> a >> r.frames >> b >> r.dim;
      continue;
    }
    int64_t t;
    s >> t;
    std::vector<double> v(r.dim);
    for (auto& x : v) s >> x;
    r.rows[t] = v;
  }
  return r;
}

void expect_matches(const Features& f, const Reference& ref, double tol) {
  ASSERT_EQ(f.frames, ref.frames);
  ASSERT_EQ(f.dim, ref.dim);
  ASSERT_FALSE(ref.rows.empty());
  for (const auto& [t, values] : ref.rows) {
    for (int j = 0; j < ref.dim; ++j) {
      EXPECT_NEAR(f.at(t, j), values[j], tol) << "frame " << t << " feature " << j;
    }
  }
}

// Column means and population variances of [T, F].
void column_moments(const Features& f, std::vector<double>* mean, std::vector<double>* var) {
  mean->assign(f.dim, 0.0);
  var->assign(f.dim, 0.0);
  for (int64_t t = 0; t < f.frames; ++t)
    for (int j = 0; j < f.dim; ++j) (*mean)[j] += f.at(t, j) / double(f.frames);
  for (int64_t t = 0; t < f.frames; ++t)
    for (int j = 0; j < f.dim; ++j) {
      const double d = f.at(t, j) - (*mean)[j];
      (*var)[j] += d * d / double(f.frames);
    }
}

// ---------------------------------------------------------------------------------------------
// WAV

TEST(Wav, ReadsPcm16SamplesExactly) {
  // The 16 int16 values make_golden.sh writes into ramp16_11025.wav (11025 Hz, mono).
  const int16_t expected[] = {-32768, -32767, -16384, -1,    0,    1,     2,     100,
                              1000,   8192,   16384,  32767, -100, -1000, 12345, -12345};
  const Waveform w = read_wav(kGolden + "ramp16_11025.wav");
  EXPECT_EQ(w.sample_rate, 11025);
  ASSERT_EQ(w.samples.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(w.samples[i], expected[i] / 32768.0f) << i;
  EXPECT_EQ(w.samples[0], -1.0f);
  EXPECT_LT(w.samples[11], 1.0f);
  EXPECT_DOUBLE_EQ(w.seconds(), 16.0 / 11025);

  const Waveform m = decode_wav(file_bytes(kGolden + "ramp16_11025.wav"), "in-memory");
  EXPECT_EQ(m.samples, w.samples);
  EXPECT_EQ(m.sample_rate, 11025);
}

TEST(Wav, EveryRefusedFormatGetsItsOwnMessage) {
  // Each file is made by make_golden.sh from ramp16_11025.wav; the text after "<path>: " is the
  // whole message. Format names in the messages are libsndfile's (SFC_GET_FORMAT_INFO).
  const std::pair<std::string, std::string> cases[] = {
      {"stereo.wav", "2 channels, engram reads mono"},
      {"pcm8.wav", "Unsigned 8 bit PCM samples, engram reads 16-bit PCM"},
      {"pcm24.wav", "Signed 24 bit PCM samples, engram reads 16-bit PCM"},
      {"float32.wav", "32 bit float samples, engram reads 16-bit PCM"},
      {"ulaw.wav", "U-Law samples, engram reads 16-bit PCM"},
      {"ima_adpcm.wav", "IMA ADPCM samples, engram reads 16-bit PCM"},
      {"not_riff.wav", "not a RIFF WAVE file (starts with \".snd\"), engram reads RIFF WAV"},
      {"empty.wav", "empty file (0 bytes)"},
      {"zero_samples.wav", "no audio samples (the data chunk is empty)"},
      {"truncated.wav",
       "truncated or corrupt: chunk \"data\" at byte 36 declares 32 bytes, the file has 6 after "
       "its header"},
      {"hostile.wav",
       "truncated or corrupt: chunk \"data\" at byte 36 declares 2147483632 bytes, the file has 32 "
       "after its header"},
  };
  for (const auto& [file, message] : cases) {
    const std::string path = kGolden + file;
    EXPECT_EQ(error_of([&] { read_wav(path); }), path + ": " + message);
    EXPECT_EQ(error_of([&] { decode_wav(file_bytes(path), file); }), file + ": " + message);
  }
}

TEST(Wav, MissingFileDirectoryAndLimits) {
  TempDir tmp;
  EXPECT_EQ(error_of([&] { read_wav(tmp.file("nope.wav")); }),
            tmp.file("nope.wav") + ": cannot open: no such file");
  EXPECT_EQ(error_of([&] { read_wav(tmp.file("")); }),
            tmp.file("") + ": cannot open: not a regular file");
  const std::string ramp = kGolden + "ramp16_11025.wav";  // 16 samples = 1.45 ms at 11025 Hz
  WavLimits short_limit;
  short_limit.max_seconds = 0.001;
  EXPECT_EQ(error_of([&] { read_wav(ramp, short_limit); }),
            ramp + ": 0.0 s of audio, engram reads at most 0.0 s (WavLimits::max_seconds)");
  WavLimits rate_limit;
  rate_limit.max_sample_rate = 8000;
  EXPECT_EQ(error_of([&] { read_wav(ramp, rate_limit); }),
            ramp + ": sample rate 11025 Hz, engram reads 1..8000 Hz (WavLimits::max_sample_rate)");
  EXPECT_EQ(WavLimits{}.max_file_bytes(), (1 << 20) + int64_t{600} * 192000 * 2);
  EXPECT_EQ(
      error_of([&] { decode_wav("RIFF", "x.wav"); }),
      "x.wav: not a RIFF WAVE file (starts with \"RIFF\", only 4 bytes), engram reads RIFF WAV");
}

TEST(Wav, DamagedFilesThrowAndNeverCrash) {
  // Every prefix and every single-bit flip of the 76-byte ramp16_11025.wav either decodes to at
  // most 16 samples or throws engram::Error.
  const std::string good = file_bytes(kGolden + "ramp16_11025.wav");
  ASSERT_EQ(good.size(), 76u);
  int errors = 0;
  const auto attempt = [&](const std::string& bytes) {
    try {
      const Waveform w = decode_wav(bytes, "damaged.wav");
      EXPECT_LE(w.samples.size(), 16u);
    } catch (const Error&) {
      ++errors;
    }
  };
  for (size_t n = 0; n < good.size(); ++n) attempt(good.substr(0, n));
  EXPECT_EQ(errors, 76);  // every proper prefix is truncated
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string b = good;
      b[i] = static_cast<char>(b[i] ^ (1 << bit));
      attempt(b);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Mel scale, windows, filters

TEST(Mel, ScaleAtDocumentedPoints) {
  // O'Shaughnessy's mel scale, m = 2595 log10(1 + f/700): 1000 Hz is 1000 mel by construction,
  // 700 Hz is 2595 log10 2 = 781.17 mel; Kaldi's 1127 ln(1 + f/700) is the same curve.
  EXPECT_DOUBLE_EQ(hz_to_mel(0), 0.0);
  EXPECT_NEAR(hz_to_mel(1000), 1000.0, 0.02);
  EXPECT_NEAR(hz_to_mel(700), 781.17, 0.01);
  for (const double f : {20.0, 300.0, 1000.0, 3800.0, 4000.0, 8000.0}) {
    EXPECT_NEAR(hz_to_mel(f), 2595.0 * std::log10(1.0 + f / 700.0), 0.02) << f;
    EXPECT_NEAR(mel_to_hz(hz_to_mel(f)), f, 1e-9 * f) << f;
  }
}

TEST(Mel, WindowsMatchTheirFormulas) {
  // W = 5: cos(2 pi n / 4) = 1, 0, -1, 0, 1.
  const std::vector<float> hamming{0.08f, 0.54f, 1.0f, 0.54f, 0.08f};
  const std::vector<float> hann{0.0f, 0.5f, 1.0f, 0.5f, 0.0f};
  const float half = static_cast<float>(std::pow(0.5, 0.85));
  const std::vector<float> povey{0.0f, half, 1.0f, half, 0.0f};
  const auto near = [](const std::vector<float>& a, const std::vector<float>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << i;
  };
  near(window_function(WindowType::kHamming, 5), hamming);
  near(window_function(WindowType::kHann, 5), hann);
  near(window_function(WindowType::kPovey, 5), povey);
  near(window_function(WindowType::kRectangular, 5), {1, 1, 1, 1, 1});
}

// 16 kHz, W = fft_size = 256 (62.5 Hz bins), 4 filters from 0 to the frequency of 2500 mel:
// mel spacing d = 500, filter m peaks at 500 (m + 1) mel; 1000 Hz (bin 16) is 1000 mel.
FeatureConfig bin_exact_config() {
  FeatureConfig c;
  c.sample_rate = 16000;
  c.frame_length_ms = 16;
  c.frame_shift_ms = 10;
  c.window = WindowType::kRectangular;
  c.preemphasis = 0;
  c.remove_dc = false;
  c.num_mel_bins = 4;
  c.low_freq = 0;
  c.high_freq = static_cast<float>(700.0 * (std::pow(10.0, 2500.0 / 2595.0) - 1.0));
  c.cmvn = Cmvn::kNone;
  return c;
}

TEST(Mel, FiltersAreTrianglesThatSumToOne) {
  const FeatureConfig c = bin_exact_config();
  ASSERT_EQ(c.window_samples(), 256);
  ASSERT_EQ(c.fft_size(), 256);
  const std::vector<float> w = mel_filterbank(c);
  const int K = c.fft_bins();
  ASSERT_EQ(w.size(), size_t(4 * K));
  EXPECT_NEAR(w[1 * K + 16], 1.0, 1e-4);  // bin 16 = 1000 Hz sits on filter 1's peak
  EXPECT_NEAR(w[0 * K + 16], 0.0, 1e-4);
  EXPECT_NEAR(w[2 * K + 16], 0.0, 1e-4);
  // Between the first and last peaks, neighbouring triangles add up to 1.
  for (int k = 0; k < K; ++k) {
    const double mel = hz_to_mel(k * 62.5);
    if (mel <= 500 || mel >= 2000) continue;
    double sum = 0;
    for (int m = 0; m < 4; ++m) sum += w[m * K + k];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "bin " << k;
  }
}

TEST(Mel, TooManyFiltersForTheFftIsAnError) {
  FeatureConfig c;  // 8 kHz, fft 256: 31.25 Hz bins
  c.num_mel_bins = 128;
  EXPECT_NE(error_of([&] { mel_filterbank(c); }).find("covers no FFT bin: num_mel_bins 128"),
            std::string::npos);
  c.num_mel_bins = 40;  // 40 filters do fit at 8 kHz
  EXPECT_EQ(mel_filterbank(c).size(), size_t(40 * 129));
}

// ---------------------------------------------------------------------------------------------
// Features

TEST(AudioFbank, SinusoidOnAnFftBinHasClosedFormEnergy) {
  // x[n] = A cos(2 pi 16 n / 256), rectangular window of 256: |X_16|^2 = (A 256 / 2)^2 and every
  // other bin 0, so mel filter 1 (weight 1 at bin 16) holds log((A N / 2)^2) = 2 ln 64 for A = 0.5.
  const FeatureConfig c = bin_exact_config();
  std::vector<float> x(256 + 2 * 160);
  for (size_t n = 0; n < x.size(); ++n)
    x[n] = static_cast<float>(0.5 * std::cos(2 * std::numbers::pi * 16 * double(n) / 256));
  const Features f = FbankComputer(c).compute(x);
  ASSERT_EQ(f.frames, 3);  // 1 + (576 - 256) / 160
  ASSERT_EQ(f.dim, 4);
  for (int64_t t = 0; t < f.frames; ++t) {
    EXPECT_NEAR(f.at(t, 1), 2 * std::log(64.0), 1e-3) << t;
    EXPECT_LT(f.at(t, 3), std::log(1e-6)) << t;  // no energy above 1500 mel
  }
}

TEST(AudioFbank, DcFrameRemovedIsTheLogFloor) {
  // A constant signal minus its frame mean is exactly 0: every energy is floored at log_floor.
  FeatureConfig c;
  c.cmvn = Cmvn::kNone;
  const std::vector<float> x(1000, 0.25f);
  const Features f = FbankComputer(c).compute(x);
  ASSERT_EQ(f.frames, 11);
  for (const float v : f.data) EXPECT_FLOAT_EQ(v, std::log(1e-10f));
}

TEST(AudioFbank, FrameCountIsSnipEdges) {
  FeatureConfig c;  // 8 kHz: W = 200, H = 80, T = 1 + (N - 200) / 80
  EXPECT_EQ(c.window_samples(), 200);
  EXPECT_EQ(c.hop_samples(), 80);
  EXPECT_EQ(c.fft_size(), 256);
  FbankComputer fb(c);
  for (const auto& [n, frames] : std::vector<std::pair<int, int>>{
           {0, 0}, {199, 0}, {200, 1}, {279, 1}, {280, 2}, {5148, 62}}) {
    EXPECT_EQ(c.num_frames(n), frames) << n;
    if (frames == 0) {  // no frame: refused, never an empty utterance (audio_features.cc)
      EXPECT_THROW(fb.compute(std::vector<float>(n, 0.1f)), Error) << n;
      continue;
    }
    const Features f = fb.compute(std::vector<float>(n, 0.1f));
    EXPECT_EQ(f.frames, frames) << n;
    EXPECT_EQ(f.data.size(), size_t(frames) * 23) << n;
  }
}

TEST(AudioFbank, MatchesNumpyReferenceWithKaldiDefaults) {
  FeatureConfig c;
  c.cmvn = Cmvn::kNone;
  const Features f = compute_fbank(read_wav(kGolden + "synth8k.wav"), c);
  expect_matches(f, read_reference(kGolden + "fbank_default.txt"), 2e-4);
}

TEST(AudioFbank, MatchesNumpyReferenceWithOptionsDeltasAndCmvn) {
  FeatureConfig c;
  c.window = WindowType::kHamming;
  c.num_mel_bins = 40;
  c.low_freq = 0;
  c.high_freq = -200;
  c.remove_dc = false;
  c.delta_order = 2;
  c.cmvn = Cmvn::kMeanVariance;
  EXPECT_EQ(c.dim(), 120);
  const Features f = compute_fbank(read_wav(kGolden + "synth8k.wav"), c);
  EXPECT_EQ(f.mel_bins, 40);
  expect_matches(f, read_reference(kGolden + "fbank_options.txt"), 2e-4);
}

TEST(AudioFbank, ConfigErrorsNameTheField) {
  const auto err = [](const std::function<void(FeatureConfig&)>& edit) {
    FeatureConfig c;
    edit(c);
    return error_of([&] { FbankComputer fb(c); });
  };
  EXPECT_NE(err([](auto& c) { c.num_mel_bins = 0; }).find("num_mel_bins"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.high_freq = 5000; }).find("high_freq"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.low_freq = 4000; }).find("low_freq"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.frame_length_ms = 0.1f; }).find("frame_length_ms"),
            std::string::npos);
  EXPECT_NE(err([](auto& c) { c.delta_order = 3; }).find("delta_order"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.preemphasis = 1.5f; }).find("preemphasis"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.log_floor = 0; }).find("log_floor"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.trim_db = -1; }).find("trim_db"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.trim_margin_ms = -5; }).find("trim_margin_ms"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.num_ceps = c.num_mel_bins + 1; }).find("num_ceps"), std::string::npos);
  EXPECT_NE(err([](auto& c) { c.num_ceps = -1; }).find("num_ceps"), std::string::npos);
  Waveform w{std::vector<float>(400), 16000};
  EXPECT_EQ(error_of([&] { compute_fbank(w, FeatureConfig{}); }),
            "features: audio at 16000 Hz, features configured for 8000 Hz "
            "(FeatureConfig::sample_rate; engram does not resample)");
}

TEST(AudioFbank, LoudFrameSpanByHand) {
  // Energies 1e-6, 1e-6, 1, 0.5, 1e-3, 1e-6: at 20 dB the floor is 0.01, so frames 2-3 are loud.
  const std::vector<double> e = {1e-6, 1e-6, 1, 0.5, 1e-3, 1e-6};
  EXPECT_EQ(loud_frame_span(e, 20, 10, 0), std::make_pair(int64_t{2}, int64_t{3}));
  // At 40 dB (floor 1e-4) frame 4 (1e-3) is loud too.
  EXPECT_EQ(loud_frame_span(e, 40, 10, 0), std::make_pair(int64_t{2}, int64_t{4}));
  // A 10 ms margin at a 10 ms hop keeps one frame more on each side; 50 ms is clamped to the ends.
  EXPECT_EQ(loud_frame_span(e, 20, 10, 10), std::make_pair(int64_t{1}, int64_t{4}));
  EXPECT_EQ(loud_frame_span(e, 20, 10, 50), std::make_pair(int64_t{0}, int64_t{5}));
  // Silence throughout (all 0) keeps every frame; one frame is its own span.
  EXPECT_EQ(loud_frame_span(std::vector<double>(4, 0.0), 20, 10, 0), std::make_pair(int64_t{0}, int64_t{3}));
  EXPECT_EQ(loud_frame_span(std::vector<double>{2.0}, 20, 10, 0), std::make_pair(int64_t{0}, int64_t{0}));
}

TEST(AudioFbank, TrimKeepsTheLoudFramesRowsUnchanged) {
  // 0.3 s of silence, 0.2 s of a 1 kHz tone, 0.3 s of silence at 8 kHz; statics, no CMVN, so the
  // trimmed features are rows of the untrimmed ones: the tone's frames and 2 frames (20 ms) of
  // margin on each side, where frames touching the tone are loud too.
  std::vector<float> x(6400, 0.0f);
  for (int n = 2400; n < 4000; ++n) x[n] = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * 1000 * n / 8000.0));
  FeatureConfig c;
  c.cmvn = Cmvn::kNone;
  const Features all = FbankComputer(c).compute(x);
  c.trim_db = 40;
  c.trim_margin_ms = 20;
  const Features cut = FbankComputer(c).compute(x);
  // Frame t covers samples [80 t, 80 t + 200): it touches the tone for 80 t + 200 > 2400 and
  // 80 t < 4000, i.e. t = 28 ... 49 (silent frames are exactly 0: the log floor).
  int64_t first = -1, last = -1;
  for (int64_t t = 0; t < all.frames; ++t)
    if (all.at(t, 0) > std::log(1e-10f) + 1) last = t, first = first < 0 ? t : first;
  ASSERT_EQ(first, 28);
  ASSERT_EQ(last, 49);
  ASSERT_EQ(cut.frames, (last + 2) - (first - 2) + 1);
  for (int64_t t = 0; t < cut.frames; ++t)
    for (int m = 0; m < c.num_mel_bins; ++m) ASSERT_EQ(cut.at(t, m), all.at(t + first - 2, m)) << t << " " << m;
  // With CMVN the silence no longer enters the statistics: each channel's mean is the mean of the
  // kept frames only (the untrimmed utterance's mean, dominated by the log floor, is far lower).
  c.cmvn = Cmvn::kMean;
  const Features norm = FbankComputer(c).compute(x);
  ASSERT_EQ(norm.frames, cut.frames);
  for (int m = 0; m < c.num_mel_bins; ++m) {
    double kept = 0, whole = 0;
    for (int64_t t = 0; t < cut.frames; ++t) kept += cut.at(t, m);
    for (int64_t t = 0; t < all.frames; ++t) whole += all.at(t, m);
    kept /= double(cut.frames), whole /= double(all.frames);
    ASSERT_GT(kept - whole, 1.0) << m;
    for (int64_t t = 0; t < norm.frames; ++t) ASSERT_NEAR(norm.at(t, m), cut.at(t, m) - kept, 1e-3) << t << " " << m;
  }
}

// Collects the keys a config's visit() declares.
struct KeyNames {
  std::vector<std::string> keys;
  template <class T>
  void operator()(const char* key, T&, const char* = "") {
    keys.emplace_back(key);
  }
};

TEST(AudioFbank, ConfigVisitsEveryField) {
  KeyNames n;
  FeatureConfig c;
  c.visit(n);
  EXPECT_EQ(n.keys, (std::vector<std::string>{"sample_rate", "frame_length_ms", "frame_shift_ms",
                                              "preemphasis", "remove_dc", "window", "num_mel_bins",
                                              "low_freq", "high_freq", "log_floor", "num_ceps", "delta_order",
                                              "delta_window", "cmvn", "cmvn_scope", "trim_db", "trim_margin_ms"}));
  KeyNames s;
  SpecAugmentConfig sa;
  sa.visit(s);
  EXPECT_EQ(s.keys, (std::vector<std::string>{"freq_masks", "freq_mask_width", "time_masks", "time_mask_width",
                                              "time_mask_ratio", "freq_warp", "crop_start", "crop_end"}));
  EXPECT_STREQ(io::EnumNames<WindowType>::items[0].second, "povey");
  EXPECT_STREQ(io::EnumNames<Cmvn>::items[2].second, "mean_variance");
  EXPECT_STREQ(io::EnumNames<CmvnScope>::items[1].second, "speaker");
}

// ---------------------------------------------------------------------------------------------
// Deltas, CMVN

Features from_columns(int64_t frames, int dims, const std::function<float(int64_t, int)>& value) {
  Features f;
  f.frames = frames;
  f.mel_bins = f.dim = dims;
  f.data.resize(size_t(frames) * dims);
  for (int64_t t = 0; t < frames; ++t)
    for (int m = 0; m < dims; ++m) f.row(t)[m] = value(t, m);
  return f;
}

TEST(AudioDeltas, LinearRampHasConstantDeltaAndZeroDeltaDelta) {
  // c_t = a t + b: sum_n n (c_{t+n} - c_{t-n}) / (2 sum n^2) = a wherever t +- 2 is inside; at
  // t = 0 (clamped) (1 a + 2 * 2 a) / 10 = 0.5 a, at t = 1 (1 * 2a + 2 * 3a) / 10 = 0.8 a.
  const float slope[] = {1.0f, -0.5f, 3.0f};
  const Features in = from_columns(12, 3, [&](int64_t t, int m) { return slope[m] * t + m; });
  const Features d = add_deltas(in, 2, 2);
  ASSERT_EQ(d.dim, 9);
  ASSERT_EQ(d.mel_bins, 3);
  for (int m = 0; m < 3; ++m) {
    for (int64_t t = 0; t < 12; ++t) EXPECT_FLOAT_EQ(d.at(t, m), in.at(t, m));
    for (int64_t t = 2; t < 10; ++t) EXPECT_NEAR(d.at(t, 3 + m), slope[m], 1e-5) << t;
    for (int64_t t = 4; t < 8; ++t) EXPECT_NEAR(d.at(t, 6 + m), 0.0, 1e-5) << t;
    EXPECT_NEAR(d.at(0, 3 + m), 0.5 * slope[m], 1e-5);
    EXPECT_NEAR(d.at(1, 3 + m), 0.8 * slope[m], 1e-5);
    EXPECT_NEAR(d.at(11, 3 + m), 0.5 * slope[m], 1e-5);
  }
  // c_t = t^2: the delta filter gives 2t, applied twice 2 (four frames from the edges).
  const Features q =
      add_deltas(from_columns(12, 1, [](int64_t t, int) { return float(t * t); }), 2, 2);
  for (int64_t t = 2; t < 10; ++t) EXPECT_NEAR(q.at(t, 1), 2.0 * t, 1e-4) << t;
  for (int64_t t = 4; t < 8; ++t) EXPECT_NEAR(q.at(t, 2), 2.0, 1e-4) << t;
}

TEST(AudioCmvn, GivesMeanZeroVarianceOnePerFeature) {
  FeatureConfig c;
  c.delta_order = 2;
  const Features f = compute_fbank(read_wav(kGolden + "synth8k.wav"), c);
  ASSERT_EQ(f.dim, 69);
  std::vector<double> mean, var;
  column_moments(f, &mean, &var);
  for (int j = 0; j < f.dim; ++j) {
    EXPECT_NEAR(mean[j], 0.0, 1e-5) << j;
    EXPECT_NEAR(var[j], 1.0, 1e-4) << j;
  }
  // Mean only keeps the spread; a constant column becomes 0 (not NaN) under mean_variance.
  Features g = from_columns(5, 2, [](int64_t t, int m) { return m == 0 ? 7.0f : float(2 * t); });
  apply_cmvn(&g, Cmvn::kMean);
  EXPECT_FLOAT_EQ(g.at(0, 1), -4.0f);
  EXPECT_FLOAT_EQ(g.at(4, 1), 4.0f);
  apply_cmvn(&g, Cmvn::kMeanVariance);
  for (int64_t t = 0; t < 5; ++t) EXPECT_EQ(g.at(t, 0), 0.0f);
  EXPECT_NEAR(g.at(4, 1), std::sqrt(2.0), 1e-6);  // (8 - 4) / sqrt(8)
}

TEST(AudioCmvn, UnnormalisedFeaturesThenCmvnAreCompute) {
  FeatureConfig c;
  c.delta_order = 1;
  c.num_ceps = 13;
  const Waveform w = read_wav(kGolden + "synth8k.wav");
  const FbankComputer fbank(c);
  Features raw = fbank.compute_unnormalised(w);
  const Features full = fbank.compute(w);
  ASSERT_EQ(raw.dim, full.dim);
  EXPECT_NE(raw.data, full.data);
  apply_cmvn(&raw, c.cmvn);
  EXPECT_EQ(raw.data, full.data);
  c.cmvn_scope = CmvnScope::kSpeaker;  // compute() of one utterance: its own statistics still
  EXPECT_EQ(FbankComputer(c).compute(w).data, full.data);
  Waveform other = w;
  other.sample_rate = 16000;
  EXPECT_NE(error_of([&] { fbank.compute_unnormalised(other); }).find("audio at 16000 Hz"), std::string::npos);
}

// Statistics pooled over two utterances normalise each as apply_cmvn normalises the two joined.
TEST(AudioCmvn, PooledStatisticsNormaliseAsTheUtterancesJoined) {
  const Features a = from_columns(4, 2, [](int64_t t, int m) { return m == 0 ? float(t) : 3.0f; });
  const Features b = from_columns(6, 2, [](int64_t t, int m) { return m == 0 ? float(10 - t * t) : 5.0f; });
  Features joined = from_columns(10, 2, [&](int64_t t, int m) { return t < 4 ? a.at(t, m) : b.at(t - 4, m); });
  for (Cmvn mode : {Cmvn::kMean, Cmvn::kMeanVariance}) {
    CmvnStats stats;
    stats.add(a);
    stats.add(b);
    EXPECT_EQ(stats.frames(), 10);
    Features na = a, nb = b, nj = joined;
    stats.apply(&na, mode);
    stats.apply(&nb, mode);
    apply_cmvn(&nj, mode);
    for (int64_t t = 0; t < 10; ++t)
      for (int m = 0; m < 2; ++m) EXPECT_NEAR(t < 4 ? na.at(t, m) : nb.at(t - 4, m), nj.at(t, m), 1e-5) << t << m;
  }
  // Column 1 by hand: four 3s and six 5s, mean 4.2, variance 0.96; a's 3 becomes -1.2 / sqrt(0.96).
  CmvnStats stats;
  stats.add(a);
  stats.add(b);
  Features na = a;
  stats.apply(&na, Cmvn::kMeanVariance);
  EXPECT_NEAR(na.at(0, 1), -1.2 / std::sqrt(0.96), 1e-5);
  Features narrow = from_columns(3, 1, [](int64_t t, int) { return float(t); });
  EXPECT_NE(error_of([&] { stats.add(narrow); }).find("width 1 pooled with width 2"), std::string::npos);
  EXPECT_NE(error_of([&] { stats.apply(&narrow, Cmvn::kMean); }).find("width 2 applied to features of width 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { CmvnStats().apply(&na, Cmvn::kMean); }).find("no frames pooled"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// SpecAugment

TEST(AudioSpecAugment, CropCutsFramesOffTheEndsAtMostAThird) {
  // Row t holds t in every column, so the kept rows say which frames were cut.
  const Features rows = from_columns(30, 4, [](int64_t t, int) { return static_cast<float>(t); });
  SpecAugmentConfig c;
  c.crop_start = 4;
  c.crop_end = 3;
  std::set<int64_t> heads, tails;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Features f = rows;
    core::Rng rng(seed);
    spec_augment(&f, c, rng);
    ASSERT_EQ(f.data.size(), static_cast<size_t>(f.frames) * 4);
    const auto head = static_cast<int64_t>(f.at(0, 0));
    const int64_t tail = 29 - static_cast<int64_t>(f.at(f.frames - 1, 0));
    ASSERT_EQ(f.frames, 30 - head - tail);
    for (int64_t t = 0; t < f.frames; ++t) ASSERT_EQ(f.at(t, 2), static_cast<float>(head + t));  // contiguous
    heads.insert(head), tails.insert(tail);
  }
  EXPECT_EQ(heads, (std::set<int64_t>{0, 1, 2, 3, 4}));  // every cut from 0 to crop_start is drawn
  EXPECT_EQ(tails, (std::set<int64_t>{0, 1, 2, 3}));
  // A 6-frame utterance loses at most 2 frames (a third) on each side.
  c.crop_start = c.crop_end = 100;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Features f = from_columns(6, 4, [](int64_t t, int) { return static_cast<float>(t); });
    core::Rng rng(seed);
    spec_augment(&f, c, rng);
    EXPECT_GE(f.frames, 2);
  }
  c.crop_end = -1;
  EXPECT_NE(error_of([&] { c.validate(); }).find("crop_start and crop_end"), std::string::npos);
}

// MFCC (FeatureConfig::num_ceps): the orthonormal DCT-II of each log-mel row, c_k = s_k Σ_m x_m
// cos(π k (m + ½) / M), s_0 = √(1/M), s_k = √(2/M) (Kaldi's ComputeDctMatrix, matrix-functions.cc).
// Its rows are orthogonal, so a constant row a gives c_0 = a √M and nothing else, and a cosine row
// of frequency k0 gives only c_k0.
TEST(AudioCepstra, DctOfConstantAndCosineRowsByHand) {
  constexpr int kM = 8;
  const Features flat = from_columns(2, kM, [](int64_t t, int) { return t == 0 ? 3.0f : -1.5f; });
  const Features c = cepstra(flat, 5);
  ASSERT_EQ(c.dim, 5);
  ASSERT_EQ(c.mel_bins, 5);
  EXPECT_TRUE(c.cepstral);
  EXPECT_NEAR(c.at(0, 0), 3.0 * std::sqrt(8.0), 1e-5);
  EXPECT_NEAR(c.at(1, 0), -1.5 * std::sqrt(8.0), 1e-5);
  for (int k = 1; k < 5; ++k) EXPECT_NEAR(c.at(0, k), 0.0, 1e-5) << k;
  // x_m = cos(π 3 (m + ½) / M): Σ_m cos² = M / 2, so c_3 = √(2/M) · M/2 = √(M/2) = 2, the rest 0.
  const Features cosine =
      from_columns(1, kM, [](int64_t, int m) { return static_cast<float>(std::cos(std::numbers::pi * 3 * (m + 0.5) / kM)); });
  const Features cc = cepstra(cosine, kM);
  for (int k = 0; k < kM; ++k) EXPECT_NEAR(cc.at(0, k), k == 3 ? 2.0 : 0.0, 1e-5) << k;
  EXPECT_NE(error_of([&] { cepstra(flat, kM + 1); }).find("cepstra"), std::string::npos);
  EXPECT_NE(error_of([&] { cepstra(c, 2); }).find("cepstra"), std::string::npos);  // cepstra of cepstra
}

// The front end with num_ceps: the first coefficients of the full transform, every frame's norm
// kept by the full one (no CMVN), deltas over the cepstra, and freq_warp refused on them.
TEST(AudioCepstra, FbankWithNumCepsIsTheDctOfItsLogMel) {
  std::vector<float> x(4000);
  core::Rng rng(3);
  for (int n = 0; n < 4000; ++n)
    x[n] = static_cast<float>(0.3 * std::sin(2 * std::numbers::pi * 440 * n / 8000.0) + 0.05 * rng.uniform(-1.0f, 1.0f));
  FeatureConfig c;
  c.cmvn = Cmvn::kNone;
  const Features mel = FbankComputer(c).compute(x);
  c.num_ceps = c.num_mel_bins;
  const Features full = FbankComputer(c).compute(x);
  c.num_ceps = 13;
  const Features mfcc = FbankComputer(c).compute(x);
  ASSERT_EQ(mfcc.frames, mel.frames);
  ASSERT_EQ(mfcc.dim, 13);
  EXPECT_EQ(c.dim(), 13);
  for (int64_t t = 0; t < mel.frames; ++t) {
    double a = 0, b = 0;
    for (int m = 0; m < mel.dim; ++m) a += double{mel.at(t, m)} * mel.at(t, m), b += double{full.at(t, m)} * full.at(t, m);
    ASSERT_NEAR(std::sqrt(b), std::sqrt(a), 1e-3 * std::sqrt(a)) << "frame " << t;
    for (int k = 0; k < 13; ++k) ASSERT_EQ(mfcc.at(t, k), full.at(t, k)) << t << " " << k;
  }
  c.delta_order = 1;
  const Features with_deltas = FbankComputer(c).compute(x);
  EXPECT_EQ(with_deltas.dim, 26);
  EXPECT_EQ(with_deltas.mel_bins, 13);
  EXPECT_TRUE(with_deltas.cepstral);
  Features warped = with_deltas;
  SpecAugmentConfig sa;
  sa.freq_warp = 0.1f;
  core::Rng r(1);
  EXPECT_NE(error_of([&] { spec_augment(&warped, sa, r); }).find("cepstra"), std::string::npos);
}

TEST(AudioSpecAugment, MasksAreBandsSharedAcrossBlocksAndSeeded) {
  Features ones = from_columns(50, 10, [](int64_t, int) { return 1.0f; });
  ones = add_deltas(ones, 2, 2);  // deltas of a constant are 0: refill every block with 1
  std::fill(ones.data.begin(), ones.data.end(), 1.0f);
  SpecAugmentConfig c;
  c.freq_masks = 2;
  c.freq_mask_width = 4;
  c.time_masks = 2;
  c.time_mask_width = 5;
  Features a = ones, b = ones, other = ones;
  core::Rng r1(7), r2(7), r3(8);
  spec_augment(&a, c, r1);
  spec_augment(&b, c, r2);
  spec_augment(&other, c, r3);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, other.data);
  std::set<int> zero_channels;
  std::set<int64_t> zero_frames;
  for (int64_t t = 0; t < 50; ++t) {
    bool all_zero = true;
    for (int j = 0; j < 30; ++j) all_zero = all_zero && a.at(t, j) == 0.0f;
    if (all_zero) zero_frames.insert(t);
  }
  for (int m = 0; m < 10; ++m) {
    bool all_zero = true;
    for (int64_t t = 0; t < 50; ++t) all_zero = all_zero && a.at(t, m) == 0.0f;
    if (all_zero) zero_channels.insert(m);
  }
  EXPECT_LE(zero_frames.size(), 10u);   // 2 masks of at most 5 frames
  EXPECT_LE(zero_channels.size(), 8u);  // 2 masks of at most 4 channels
  for (int64_t t = 0; t < 50; ++t) {
    for (int m = 0; m < 10; ++m) {
      const bool masked = zero_frames.count(t) || zero_channels.count(m);
      for (int blk = 0; blk < 3; ++blk) EXPECT_EQ(a.at(t, blk * 10 + m), masked ? 0.0f : 1.0f);
    }
  }
  Features same = ones;
  core::Rng r4(7);
  spec_augment(&same, SpecAugmentConfig{}, r4);  // no masks configured
  EXPECT_EQ(same.data, ones.data);
  c.freq_masks = 0;
  c.time_mask_ratio = 0;  // a time mask may cover at most 0 frames
  spec_augment(&same, c, r4);
  EXPECT_EQ(same.data, ones.data);
}

// Two blocks of M channels (statics and deltas) in which channel m of block b holds 100 b + m in
// every frame: a ramp, which linear interpolation between channels reproduces exactly.
Features channel_ramp(int64_t frames, int m_bins) {
  Features ramp = add_deltas(from_columns(frames, m_bins, [](int64_t, int m) { return static_cast<float>(m); }), 1, 2);
  for (int64_t t = 0; t < frames; ++t)
    for (int blk = 0; blk < 2; ++blk)
      for (int m = 0; m < m_bins; ++m) ramp.row(t)[blk * m_bins + m] = 100.0f * blk + m;
  return ramp;
}

// channel_ramp after a warp by a: channel m of block b holds 100 b + min(m a, M - 1).
void expect_warped_ramp(const Features& w, int m_bins, float a, const std::string& what) {
  for (int64_t t = 0; t < w.frames; ++t)
    for (int blk = 0; blk < 2; ++blk)
      for (int m = 0; m < m_bins; ++m)
        EXPECT_NEAR(w.at(t, blk * m_bins + m), 100.0f * blk + std::min(m * a, m_bins - 1.0f), 1e-4f)
            << what << " frame " << t << " block " << blk << " channel " << m;
}

TEST(AudioSpecAugment, FrequencyWarpResamplesEveryChannelByOneFactorPerUtterance) {
  // Channel m of every block holds 100 * block + m: after the warp, channel m must hold
  // 100 * block + min(m * a, M - 1) (linear interpolation of a ramp is exact) with one a in
  // [1 - w, 1 + w] for every frame and block.
  const int m_bins = 12;
  const Features ramp = channel_ramp(20, m_bins);
  SpecAugmentConfig c;
  c.freq_warp = 0.2f;
  std::set<float> factors;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Features w = ramp;
    core::Rng rng(seed);
    spec_augment(&w, c, rng);
    const float a = w.at(0, 1);  // channel 1 reads position a
    EXPECT_GE(a, 0.8f - 1e-6f);
    EXPECT_LE(a, 1.2f + 1e-6f);
    factors.insert(a);
    expect_warped_ramp(w, m_bins, a, "seed " + std::to_string(seed));
    Features again = ramp;
    core::Rng same(seed);
    spec_augment(&again, c, same);
    EXPECT_EQ(again.data, w.data);
  }
  EXPECT_GE(factors.size(), 5u);  // the factor is drawn per utterance, not fixed
  c.freq_warp = 0.6f;
  Features bad = ramp;
  core::Rng rng(1);
  EXPECT_THROW(spec_augment(&bad, c, rng), engram::Error);
  c.freq_warp = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(spec_augment(&bad, c, rng), engram::Error);
}

TEST(AudioWarp, ChannelMTakesTheValueAtMTimesAInEveryBlock) {
  // The fixed-factor warp of decoding (warp_channels): on a ramp (exact under linear
  // interpolation), channel m of each block holds 100 * block + min(m * a, M - 1); a = 1 changes
  // nothing; a factor <= 0 or NaN is refused.
  const int m_bins = 10;
  const Features ramp = channel_ramp(6, m_bins);
  for (const float a : {0.5f, 0.85f, 1.0f, 1.3f, 2.0f}) {
    Features w = ramp;
    warp_channels(&w, a);
    expect_warped_ramp(w, m_bins, a, "a " + std::to_string(a));
  }
  Features same = ramp;
  warp_channels(&same, 1.0f);
  EXPECT_EQ(same.data, ramp.data);
  for (const float bad : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    Features f = ramp;
    EXPECT_THROW(warp_channels(&f, bad), engram::Error) << bad;
  }
}

TEST(SpeedPerturb, LinearInterpolationByHand) {
  Waveform w;
  w.sample_rate = 8000;
  w.samples = {0.0f, 1.0f, 0.5f, -0.5f, 0.25f};
  // speed 2: t * 2 for t = 0 .. floor(4 / 2) = 2 -> samples 0, 2, 4.
  EXPECT_EQ(change_speed(w, 2.0f).samples, (std::vector<float>{0.0f, 0.5f, 0.25f}));
  // speed 0.5: positions 0, 0.5, 1, ..., 4 (9 samples), the midpoints averaged.
  EXPECT_EQ(change_speed(w, 0.5f).samples,
            (std::vector<float>{0.0f, 0.5f, 1.0f, 0.75f, 0.5f, 0.0f, -0.5f, -0.125f, 0.25f}));
  const Waveform w3 = change_speed(w, 0.75f);  // positions 0, 0.75, 1.5, 2.25, 3, 3.75
  ASSERT_EQ(w3.samples.size(), 6u);            // floor(4 / 0.75) + 1
  EXPECT_FLOAT_EQ(w3.samples[1], 0.75f);       // 0.25 * 0 + 0.75 * 1
  EXPECT_FLOAT_EQ(w3.samples[2], 0.75f);       // 0.5 * 1 + 0.5 * 0.5
  EXPECT_FLOAT_EQ(w3.samples[5], 0.25f * -0.5f + 0.75f * 0.25f);
  EXPECT_EQ(w3.sample_rate, 8000);
  EXPECT_TRUE(change_speed(Waveform{{}, 8000}, 1.1f).samples.empty());
  EXPECT_EQ(error_of([&] { change_speed(w, 0.3f); }), "speed perturbation: speed 0.3 is outside [0.5, 2]");
}

TEST(AddNoise, PowerMatchesTheRatioAndSilenceStays) {
  Waveform w;
  w.sample_rate = 8000;
  for (int i = 0; i < 80000; ++i) w.samples.push_back(0.5f * static_cast<float>(std::sin(0.01 * i)));
  core::Rng rng(3);
  const Waveform noisy = add_noise(w, 20.0f, rng);
  ASSERT_EQ(noisy.samples.size(), w.samples.size());
  EXPECT_EQ(noisy.sample_rate, 8000);
  double signal = 0, noise = 0;
  for (size_t i = 0; i < w.samples.size(); ++i) {
    signal += double(w.samples[i]) * w.samples[i];
    const double d = noisy.samples[i] - w.samples[i];
    noise += d * d;
  }
  // 20 dB: the noise has 1/100 of the signal's power (0.125 for a sine of amplitude 0.5); with
  // 80,000 draws the estimate is within 2% of it.
  EXPECT_NEAR(10.0 * std::log10(signal / noise), 20.0, 0.1);
  core::Rng same(3);
  EXPECT_EQ(add_noise(w, 20.0f, same).samples, noisy.samples) << "deterministic in the generator";
  const Waveform silent{std::vector<float>(100, 0.0f), 8000};
  EXPECT_EQ(add_noise(silent, 10.0f, rng).samples, silent.samples);
  EXPECT_TRUE(add_noise(Waveform{{}, 8000}, 10.0f, rng).samples.empty());
  EXPECT_EQ(error_of([&] { add_noise(w, 101.0f, rng); }), "noise: SNR 101 dB is outside [-10, 100]");
  EXPECT_EQ(error_of([&] { add_noise(w, std::nanf(""), rng); }), "noise: SNR nan dB is outside [-10, 100]");
}

// ---------------------------------------------------------------------------------------------
// FSDD

TEST(Fsdd, ParsesRecordingNames) {
  const FsddRecording r = parse_fsdd_name("/x/recordings/7_jackson_32.wav");
  EXPECT_EQ(r.path, "/x/recordings/7_jackson_32.wav");
  EXPECT_EQ(r.digit, 7);
  EXPECT_EQ(r.speaker, "jackson");
  EXPECT_EQ(r.index, 32);
  EXPECT_FALSE(r.is_test());
  EXPECT_TRUE(parse_fsdd_name("0_george_4.wav").is_test());
  for (const std::string bad :
       {"7_jackson.wav", "x_jackson_1.wav", "10_jackson_1.wav", "1__3.wav", "1_jackson_-1.wav",
        "1_jackson_01a.wav", "1_jack son_2.wav", "1_jackson_2.WAV", "1_jackson_1234567.wav"}) {
    EXPECT_EQ(error_of([&] { parse_fsdd_name("/d/" + bad); }),
              "/d/" + bad +
                  ": not an FSDD recording name (expected digit_speaker_index.wav, e.g. "
                  "7_jackson_32.wav)");
  }
}

TEST(Fsdd, ListingFindsRecordingsAndNamesBadFiles) {
  TempDir tmp;
  EXPECT_EQ(error_of([&] { list_fsdd(tmp.file("missing")); }),
            "FSDD: " + tmp.file("missing") + " is not a directory");
  EXPECT_EQ(error_of([&] { list_fsdd(tmp.file("")); }), "FSDD: no .wav files in " + tmp.file(""));
  std::filesystem::create_directories(tmp.file("recordings"));
  for (const char* name : {"recordings/3_theo_1.wav", "recordings/0_theo_9.wav",
                           "recordings/0_george_2.wav", "recordings/README.md"}) {
    tmp.write(name, "");
  }
  const auto list = list_fsdd(tmp.file(""));  // finds the recordings/ folder
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].speaker, "george");
  EXPECT_EQ(list[1].digit, 0);
  EXPECT_EQ(list[2].digit, 3);
  tmp.write("recordings/3_theo.wav", "");
  EXPECT_NE(error_of([&] {
              list_fsdd(tmp.file("recordings"));
            }).find(tmp.file("recordings/3_theo.wav") + ": not an FSDD recording name"),
            std::string::npos);
}

class FsddCorpus : public CorpusTest {};

TEST_F(FsddCorpus, ListsAllRecordingsWithTheOfficialSplit) {
  // shared/data/fsdd/README.md: 6 speakers x 10 digits x 50 = 3000; indices 0-4 (300) are test.
  const auto list = list_fsdd(path("fsdd"));
  ASSERT_EQ(list.size(), 3000u);
  std::map<std::string, int> per_speaker;
  std::set<std::tuple<std::string, int, int>> unique;
  int test = 0;
  for (const auto& r : list) {
    ++per_speaker[r.speaker];
    unique.emplace(r.speaker, r.digit, r.index);
    EXPECT_LT(r.index, 50);
    test += r.is_test();
  }
  EXPECT_EQ(per_speaker, (std::map<std::string, int>{{"george", 500},
                                                     {"jackson", 500},
                                                     {"lucas", 500},
                                                     {"nicolas", 500},
                                                     {"theo", 500},
                                                     {"yweweler", 500}}));
  EXPECT_EQ(unique.size(), 3000u);
  EXPECT_EQ(test, 300);
}

TEST_F(FsddCorpus, ReadsARecordingAndMakesNormalisedFeatures) {
  // soxi 0_jackson_0.wav: 8000 Hz, 1 channel, 16-bit, 5148 samples.
  const Waveform w = read_wav(path("fsdd/recordings/0_jackson_0.wav"));
  EXPECT_EQ(w.sample_rate, 8000);
  ASSERT_EQ(w.samples.size(), 5148u);
  const Features f = compute_fbank(w, FeatureConfig{});
  EXPECT_EQ(f.frames, 62);  // 1 + (5148 - 200) / 80
  EXPECT_EQ(f.dim, 23);
  std::vector<double> mean, var;
  column_moments(f, &mean, &var);
  for (int j = 0; j < f.dim; ++j) {
    EXPECT_NEAR(mean[j], 0.0, 1e-5) << j;
    EXPECT_NEAR(var[j], 1.0, 1e-4) << j;
  }
}

TEST_F(FsddCorpus, EveryRecordingIsReadable) {
  // README: every file is 16-bit mono 8000 Hz PCM.
  int64_t samples = 0;
  for (const auto& r : list_fsdd(path("fsdd"))) {
    const Waveform w = read_wav(r.path);
    ASSERT_EQ(w.sample_rate, 8000) << r.path;
    ASSERT_GT(w.samples.size(), 0u) << r.path;
    samples += static_cast<int64_t>(w.samples.size());
  }
  EXPECT_GT(samples, 3000 * 2000);
}

}  // namespace
}  // namespace engram::data::audio
