// Audio front end of the speech recognizer: RIFF WAV (16-bit PCM mono) reading on libsndfile,
// Kaldi-style log-mel filterbank features (kissfft real FFT), deltas, per-utterance CMVN,
// SpecAugment masking, and the Free Spoken Digit Dataset file listing.
//
// Dims: N samples, W window samples, H hop samples, K = fft_size/2 + 1 FFT bins,
//       M mel bins, T frames, F feature width = M * (1 + delta_order).
//
// Feature recipe per frame (Kaldi compute-fbank-feats with snip_edges=true, dither=0): take W
// samples starting at t*H; subtract their mean (remove_dc); pre-emphasis x[i] -= p*x[i-1] for
// i = W-1..1 and x[0] -= p*x[0]; multiply by the window; zero-pad to fft_size; power spectrum
// |X_k|^2 (k = 0..K-1); mel energies e_m = sum_k w_mk |X_k|^2 with triangular filters spaced
// evenly on mel(f) = 1127 ln(1 + f/700) = 2595 log10(1 + f/700) between low_freq and high_freq;
// output log(max(e_m, log_floor)). Samples are in [-1, 1), not Kaldi's int16 scale, so before
// CMVN each log energy is Kaldi's minus 2 ln 32768 = 20.794 (and Kaldi floors at FLT_EPSILON).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace engram::core {
class Rng;
}
namespace engram::io {
template <class E>
struct EnumNames;
}

namespace engram::data::audio {

// ---------------------------------------------------------------------------------------------
// WAV

struct Waveform {
  std::vector<float> samples;  // [N] int16 value / 32768, so in [-1, 1)
  int sample_rate = 0;         // Hz
  double seconds() const { return sample_rate > 0 ? double(samples.size()) / sample_rate : 0.0; }
};

// Speed perturbation (Ko et al. 2015, "Audio augmentation for speech recognition": Kaldi's
// 0.9 / 1.1 copies): the waveform played `speed` times faster, tempo and pitch together, by
// linear interpolation: out[t] = x(t * speed) for t = 0 .. floor((N - 1) / speed), the sample
// rate unchanged. speed must be in [0.5, 2].
Waveform change_speed(const Waveform& w, float speed);

// Additive white Gaussian noise at a signal-to-noise ratio: out[i] = x[i] + sigma * n_i with n_i
// standard normal from `rng` and sigma^2 = mean(x^2) / 10^(snr_db / 10), the power of the whole
// recording (FSDD's are trimmed to the word) over the noise's (multi-condition training, as in
// Hirsch & Pearce's Aurora 2 noisy copies). snr_db must be finite and in [-10, 100]; silence
// (all zeros) stays silence.
Waveform add_noise(const Waveform& w, float snr_db, core::Rng& rng);

// Bounds on what a reader accepts, so that a hostile or broken header cannot make it allocate
// without limit: at most max_seconds of audio at a rate in [1, max_sample_rate], and (read_wav)
// a file of at most max_file_bytes(). Memory used is then at most the file plus 4 bytes a sample.
struct WavLimits {
  double max_seconds = 600.0;  // 10 minutes
  int max_sample_rate = 192000;
  // 1 MiB of header chunks + max_seconds of 16-bit samples at max_sample_rate (~231 MB).
  int64_t max_file_bytes() const {
    return (int64_t{1} << 20) + static_cast<int64_t>(max_seconds * max_sample_rate) * 2;
  }
};

// Reads a RIFF WAVE file of 16-bit PCM mono samples at any rate. Anything else throws
// engram::Error with one line naming the file and what it found: a missing or unreadable file,
// an empty file, not RIFF/WAVE, a data chunk longer than the file (truncated), no data chunk,
// no samples, more than one channel, another sample format (8/24/32-bit PCM, float, u-law,
// A-law, ADPCM, ...), a rate or duration over the limits.
Waveform read_wav(const std::string& path, const WavLimits& limits = {});
// The same on the bytes of a WAV file held in memory; `name` is used in error messages.
Waveform decode_wav(std::string_view bytes, const std::string& name, const WavLimits& limits = {});

// ---------------------------------------------------------------------------------------------
// Log-mel filterbank features

// Frame window w[n], n = 0..W-1, a = 2 pi / (W - 1): hamming 0.54 - 0.46 cos(a n);
// hann 0.5 - 0.5 cos(a n); povey (Kaldi's default) (0.5 - 0.5 cos(a n))^0.85; rectangular 1.
enum class WindowType { kPovey, kHamming, kHann, kRectangular };
// Per-utterance normalisation of each feature column over the T frames (applied last, after
// deltas): none; mean: x - mean; mean_variance: (x - mean) / std (population std; a column with
// variance below 1e-20 is only centred).
enum class Cmvn { kNone, kMean, kMeanVariance };
// Whose statistics the normalisation uses: each utterance its own, or those pooled over every
// utterance of one speaker (Kaldi's per-speaker CMVN, spk2utt). FbankComputer::compute sees one
// utterance and normalises it by its own statistics either way (a speaker heard once);
// callers that know the speakers compute with compute_unnormalised and pool a CmvnStats per
// speaker. On utterances as short as one spoken digit, an utterance's mean is mostly the word's
// own spectrum; a speaker's is their voice and microphone.
enum class CmvnScope { kUtterance, kSpeaker };

struct FeatureConfig {
  int sample_rate = 8000;      // Hz the audio must have (FSDD: 8000); engram does not resample
  float frame_length_ms = 25;  // W = round(sample_rate * frame_length_ms / 1000) = 200 at 8 kHz
  float frame_shift_ms = 10;   // H = round(sample_rate * frame_shift_ms / 1000) = 80 at 8 kHz
  float preemphasis = 0.97f;   // p, 0 = off
  bool remove_dc = true;       // subtract each frame's mean before pre-emphasis
  WindowType window = WindowType::kPovey;
  int num_mel_bins = 23;     // M (Kaldi's default, suited to 8 kHz; 40 also works at 8 kHz)
  float low_freq = 20;       // Hz, lower edge of the first filter
  float high_freq = 0;       // Hz, upper edge of the last filter; <= 0: Nyquist + high_freq
  float log_floor = 1e-10f;  // log(max(e, log_floor))
  // MFCC: > 0 keeps the first num_ceps coefficients of each frame's log-mel vector under the
  // orthonormal DCT-II, c_k = s_k Σ_m x_m cos(π k (m + ½) / M), s_0 = √(1/M), s_k = √(2/M) (the
  // matrix of Kaldi's ComputeDctMatrix; c_0 is kept, not replaced by the log energy, and there is
  // no lifter: per-dimension scales cancel under mean_variance CMVN). Low coefficients describe
  // the spectral envelope and drop the pitch harmonics the mel channels resolve. 0 = log-mel.
  int num_ceps = 0;
  int delta_order = 0;       // 0: statics; 1: + deltas; 2: + deltas + delta-deltas
  int delta_window = 2;      // N of the delta regression
  Cmvn cmvn = Cmvn::kMeanVariance;
  CmvnScope cmvn_scope = CmvnScope::kUtterance;
  // Endpointing: > 0 drops the leading and trailing frames whose energy (the frame's power
  // spectrum summed) lies more than trim_db below the utterance's loudest frame, keeping
  // trim_margin_ms of frames beyond the first and the last loud one; before deltas and CMVN, so
  // silence neither shifts the normalisation nor reaches the model. 0 = off.
  float trim_db = 0;
  float trim_margin_ms = 50;

  template <class V>
  void visit(V& v) {
    v("sample_rate", sample_rate, "sample rate (Hz) the audio must have; no resampling");
    v("frame_length_ms", frame_length_ms, "analysis window length (ms)");
    v("frame_shift_ms", frame_shift_ms, "hop between frames (ms)");
    v("preemphasis", preemphasis, "pre-emphasis coefficient (0 = off)");
    v("remove_dc", remove_dc, "subtract each frame's mean");
    v("window", window, "povey | hamming | hann | rectangular");
    v("num_mel_bins", num_mel_bins, "number of triangular mel filters");
    v("low_freq", low_freq, "lowest filter edge (Hz)");
    v("high_freq", high_freq, "highest filter edge (Hz); <= 0 means Nyquist + this value");
    v("log_floor", log_floor, "mel energies are floored at this before the log");
    v("num_ceps", num_ceps, "MFCC: keep this many DCT-II coefficients of each log-mel frame (0 = log-mel), at most num_mel_bins");
    v("delta_order", delta_order, "0 statics, 1 + deltas, 2 + deltas and delta-deltas");
    v("delta_window", delta_window, "delta regression window N");
    v("cmvn", cmvn, "normalisation of each feature column: none | mean | mean_variance");
    v("cmvn_scope", cmvn_scope, "statistics of the normalisation: utterance (each its own) | speaker (pooled over a speaker's utterances)");
    v("trim_db", trim_db, "drop leading/trailing frames more than this many dB below the loudest (0 = off)");
    v("trim_margin_ms", trim_margin_ms, "frames kept beyond the first and last loud one when trimming (ms)");
  }
  // Errors name the first invalid field.
  void validate() const;

  int window_samples() const;                          // W
  int hop_samples() const;                             // H
  int fft_size() const;                                // smallest power of two >= W
  int fft_bins() const { return fft_size() / 2 + 1; }  // K
  float nyquist() const { return 0.5f * sample_rate; }
  float effective_high_freq() const { return high_freq > 0 ? high_freq : nyquist() + high_freq; }
  int statics() const { return num_ceps > 0 ? num_ceps : num_mel_bins; }  // M: mel channels or cepstra
  int dim() const { return statics() * (1 + delta_order); }               // F
  // T = 0 if N < W, else 1 + (N - W) / H (integer division; Kaldi snip_edges=true): frames never
  // run past the end, and the last N - W - (T-1) H samples are not used.
  int64_t num_frames(int64_t num_samples) const;
};

struct Features {
  int64_t frames = 0;       // T
  int mel_bins = 0;         // M: width of each block [statics | deltas | delta-deltas]
  bool cepstral = false;    // the statics are cepstra (FeatureConfig::num_ceps), not mel channels
  int dim = 0;              // F = M * blocks
  std::vector<float> data;  // [T, F] row-major

  float* row(int64_t t) { return data.data() + t * dim; }
  const float* row(int64_t t) const { return data.data() + t * dim; }
  float at(int64_t t, int f) const { return data[t * dim + f]; }
};

// Mel scale of the filters: 1127 ln(1 + hz/700) (equal to 2595 log10(1 + hz/700)), and inverse.
double hz_to_mel(double hz);
double mel_to_hz(double mel);

// Window w[n] of W points (see WindowType).
std::vector<float> window_function(WindowType type, int size);

// Triangular filters: [M, K] row-major weights. Filter m has edges at mel
// lo + m d, lo + (m+1) d (peak, weight 1), lo + (m+2) d with d = (hi - lo) / (M + 1), and weight
// linear in mel between them; FFT bin k sits at k * sample_rate / fft_size Hz. A filter that
// covers no bin is an error (num_mel_bins too large for the FFT resolution).
std::vector<float> mel_filterbank(const FeatureConfig& config);

// Computes features with a fixed config; the window and filters are built once. compute() is
// const and allocates its own scratch, so one computer may serve several threads.
class FbankComputer {
 public:
  explicit FbankComputer(const FeatureConfig& config);  // validates config
  const FeatureConfig& config() const { return config_; }
  const std::vector<float>& window() const { return window_; }       // [W]
  const std::vector<float>& filterbank() const { return filters_; }  // [M, K]
  const std::vector<float>& dct() const { return dct_; }             // [C, M] (num_ceps > 0), else empty

  // Log-mel features of samples at config().sample_rate: [T, F], with deltas and CMVN as
  // configured (by the utterance's own statistics, whatever cmvn_scope says). Fewer than W
  // samples give T = 0 frames.
  Features compute(std::span<const float> samples) const;
  // The same; errors if the waveform's rate differs from config().sample_rate.
  Features compute(const Waveform& wave) const;
  // Everything but the CMVN, for statistics pooled over a speaker (CmvnStats).
  Features compute_unnormalised(const Waveform& wave) const;

 private:
  Features unnormalised(std::span<const float> samples) const;
  void check_rate(const Waveform& wave) const;
  FeatureConfig config_;
  std::vector<float> window_;                      // [W]
  std::vector<float> filters_;                     // [M, K]
  std::vector<std::pair<int, int>> filter_range_;  // [M] first, last+1 bin with weight > 0
  std::vector<float> dct_;                         // [C, M] dct_matrix(num_ceps, M) when num_ceps > 0
};

// One-off convenience: FbankComputer(config).compute(wave).
Features compute_fbank(const Waveform& wave, const FeatureConfig& config);

// FeatureConfig::trim_db's endpoints: the first and last frame (inclusive, 0-based) whose energy
// is at least the loudest's times 10^(-trim_db / 10), each moved margin_ms / shift_ms frames
// outwards (clamped to the utterance). energy [T], T >= 1.
std::pair<int64_t, int64_t> loud_frame_span(std::span<const double> energy, float trim_db, float shift_ms,
                                             float margin_ms);

// Appends deltas (order >= 1) and delta-deltas (order 2) of the [T, M] statics `in` (its dim
// must equal mel_bins): [T, M * (1 + order)], blocks [statics | deltas | delta-deltas]. Kaldi's
// add-deltas: delta_t = sum_{n=1..N} n (c_{t+n} - c_{t-n}) / (2 sum_{n=1..N} n^2), frame
// indices clamped to [0, T-1]; the order-2 filter is the delta filter convolved with itself,
// applied to the statics (so on c_t = t^2 it gives 2 away from the edges).
Features add_deltas(const Features& in, int order, int window);
// The first num_ceps rows (1..M) of the orthonormal DCT-II matrix of size M, [C, M] row-major
// (FeatureConfig::num_ceps has the formula).
std::vector<float> dct_matrix(int num_ceps, int m);
// MFCC from log-mel statics [T, M]: each row times `dct` [C, M] (dct_matrix(C, M)), [T, C],
// marked cepstral. The second form builds the matrix itself.
Features cepstra(const Features& in, std::span<const float> dct, int num_ceps);
Features cepstra(const Features& in, int num_ceps);

// Per-utterance normalisation of every column (see Cmvn), in place.
void apply_cmvn(Features* features, Cmvn mode);

// Column statistics pooled over any number of utterances of one width (a speaker's): apply()
// normalises as apply_cmvn would over all the added frames as one utterance (population std; a
// column with variance below 1e-20 is only centred). Sums are kept in double.
class CmvnStats {
 public:
  void add(const Features& f);  // errors if f's width differs from the first one added
  void apply(Features* f, Cmvn mode) const;  // errors on another width or with no frames added
  int64_t frames() const { return frames_; }

 private:
  int dim_ = -1;
  int64_t frames_ = 0;
  std::vector<double> sum_, sum_sq_;
};

// ---------------------------------------------------------------------------------------------
// SpecAugment (Park et al. 2019) masking, for training

// Each frequency mask sets channels [f0, f0 + f) to 0 in every block (statics and deltas), with
// f ~ U{0..freq_mask_width} and f0 ~ U{0..M - f}; each time mask sets frames [t0, t0 + t) to 0,
// with t ~ U{0..min(time_mask_width, floor(time_mask_ratio * T))} and t0 ~ U{0..T - t}. After
// CMVN, 0 is the utterance mean. The paper's LibriSpeech LD policy (80 mel bins): 2 frequency
// masks of width 27, 2 time masks of width 100, ratio 1.0.
// Before the masks, freq_warp w > 0 warps every utterance's mel channels: with one factor
// a ~ U[1 - w, 1 + w] per utterance, channel m takes the value at position m * a, linearly
// interpolated between channels and clamped to the last one, in every block. It stands in for
// vocal tract length perturbation (Jaitly & Hinton 2013, who warp the spectrum's frequency axis
// before the filterbank), applied to the channels instead.
struct SpecAugmentConfig {
  int freq_masks = 0;            // 0 = none
  int freq_mask_width = 8;       // F: widest frequency mask (channels)
  int time_masks = 0;            // 0 = none
  int time_mask_width = 20;      // T: widest time mask (frames)
  float time_mask_ratio = 1.0f;  // p: a time mask covers at most this fraction of the frames
  float freq_warp = 0.0f;        // w: channel warp factor drawn from [1 - w, 1 + w] (0 = off)
  // Onset / offset cropping: cut a number of frames drawn from [0, crop_start] ([0, crop_end])
  // off the start (end), at most a third of the utterance each, as recordings whose first or
  // last sound was trimmed away. After the masks; 0 = off.
  int crop_start = 0;
  int crop_end = 0;

  template <class V>
  void visit(V& v) {
    v("freq_masks", freq_masks, "SpecAugment: frequency masks per utterance (0 = off)");
    v("freq_mask_width", freq_mask_width, "SpecAugment: widest frequency mask (mel channels)");
    v("time_masks", time_masks, "SpecAugment: time masks per utterance (0 = off)");
    v("time_mask_width", time_mask_width, "SpecAugment: widest time mask (frames)");
    v("time_mask_ratio", time_mask_ratio, "SpecAugment: a time mask covers at most this fraction");
    v("freq_warp", freq_warp, "warp the mel channels by a factor from [1 - w, 1 + w] per utterance, in [0, 0.5] (0 = off)");
    v("crop_start", crop_start, "cut up to this many frames off each utterance's start (at most a third; 0 = off)");
    v("crop_end", crop_end, "cut up to this many frames off each utterance's end (at most a third; 0 = off)");
  }
  void validate() const;
  bool enabled() const { return freq_masks > 0 || time_masks > 0 || freq_warp > 0 || crop_start > 0 || crop_end > 0; }
};

// Warps every frame's mel channels by factor a > 0: channel m takes the value at position m * a,
// linearly interpolated between channels and clamped to the last one, in every block of M.
// SpecAugmentConfig::freq_warp draws a per training utterance. a = 1 changes nothing. (Decoding
// at several warps, the likeliest kept, did not help held-out speakers: bench/results_speech.md.)
void warp_channels(Features* f, float a);

// Masks features in place, drawing from rng (same seed, same masks).
void spec_augment(Features* features, const SpecAugmentConfig& config, core::Rng& rng);

// ---------------------------------------------------------------------------------------------
// Free Spoken Digit Dataset

struct FsddRecording {
  std::string path;     // full path of the .wav
  int digit = 0;        // 0..9, the spoken word
  std::string speaker;  // "jackson"
  int index = 0;        // repetition, 0..49 upstream
  // The upstream split: indices 0-4 are the test set.
  bool is_test() const { return index < 5; }
};

// Parses "{digit}_{speaker}_{index}.wav" (the file name part of path): digit one character 0-9,
// speaker a non-empty run of letters/digits/'-', index a decimal without sign below 1e6. A name
// that does not match throws engram::Error naming the file and the expected pattern.
FsddRecording parse_fsdd_name(const std::string& path);

// Every *.wav in dir (or in dir/recordings when dir has that folder), sorted by (speaker, digit,
// index); other files are ignored. A .wav with a bad name, a missing dir or no .wav is an error.
std::vector<FsddRecording> list_fsdd(const std::string& dir);

}  // namespace engram::data::audio

template <>
struct engram::io::EnumNames<engram::data::audio::WindowType> {
  static constexpr std::pair<engram::data::audio::WindowType, const char*> items[] = {
      {engram::data::audio::WindowType::kPovey, "povey"},
      {engram::data::audio::WindowType::kHamming, "hamming"},
      {engram::data::audio::WindowType::kHann, "hann"},
      {engram::data::audio::WindowType::kRectangular, "rectangular"}};
};
template <>
struct engram::io::EnumNames<engram::data::audio::Cmvn> {
  static constexpr std::pair<engram::data::audio::Cmvn, const char*> items[] = {
      {engram::data::audio::Cmvn::kNone, "none"},
      {engram::data::audio::Cmvn::kMean, "mean"},
      {engram::data::audio::Cmvn::kMeanVariance, "mean_variance"}};
};
template <>
struct engram::io::EnumNames<engram::data::audio::CmvnScope> {
  static constexpr std::pair<engram::data::audio::CmvnScope, const char*> items[] = {
      {engram::data::audio::CmvnScope::kUtterance, "utterance"},
      {engram::data::audio::CmvnScope::kSpeaker, "speaker"}};
};
