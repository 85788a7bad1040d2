// Log-mel filterbank features, deltas, CMVN and SpecAugment (see audio.h for the recipe).
// Dims: N samples, W window, H hop, K FFT bins, M mel bins, T frames, F feature width.
#include <kiss_fftr.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/data/audio.h"

namespace engram::data::audio {
namespace {

int ms_to_samples(int sample_rate, float ms) {
  return static_cast<int>(std::lround(double(sample_rate) * double(ms) / 1000.0));
}

struct FftrDeleter {
  void operator()(kiss_fftr_state* p) const { kiss_fftr_free(p); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// FeatureConfig

int FeatureConfig::window_samples() const { return ms_to_samples(sample_rate, frame_length_ms); }
int FeatureConfig::hop_samples() const { return ms_to_samples(sample_rate, frame_shift_ms); }

int FeatureConfig::fft_size() const {
  int n = 1;
  while (n < window_samples()) n <<= 1;
  return n;
}

int64_t FeatureConfig::num_frames(int64_t num_samples) const {
  const int w = window_samples();
  return num_samples < w ? 0 : 1 + (num_samples - w) / hop_samples();
}

void FeatureConfig::validate() const {
  ENGRAM_CHECK(sample_rate > 0 && sample_rate <= 1000000,
               "features: sample_rate must be in 1..1000000 Hz, got {}", sample_rate);
  ENGRAM_CHECK(frame_length_ms > 0 && frame_length_ms <= 1000 && window_samples() >= 2,
               "features: frame_length_ms {} gives a window of {} samples at {} Hz, need 2 or more "
               "(and at most 1000 ms)",
               frame_length_ms, window_samples(), sample_rate);
  ENGRAM_CHECK(frame_shift_ms > 0 && frame_shift_ms <= 1000 && hop_samples() >= 1,
               "features: frame_shift_ms {} gives a hop of {} samples at {} Hz, need 1 or more "
               "(and at most 1000 ms)",
               frame_shift_ms, hop_samples(), sample_rate);
  ENGRAM_CHECK(preemphasis >= 0 && preemphasis <= 1,
               "features: preemphasis must be in [0, 1], got {}", preemphasis);
  ENGRAM_CHECK(num_mel_bins >= 1 && num_mel_bins <= 1024,
               "features: num_mel_bins must be in 1..1024, got {}", num_mel_bins);
  ENGRAM_CHECK(low_freq >= 0 && low_freq < nyquist(),
               "features: low_freq must be in [0, Nyquist {}) Hz, got {}", nyquist(), low_freq);
  const float hi = effective_high_freq();
  ENGRAM_CHECK(hi > low_freq && hi <= nyquist(),
               "features: high_freq {} gives {} Hz, must lie in (low_freq {}, Nyquist {}] Hz",
               high_freq, hi, low_freq, nyquist());
  ENGRAM_CHECK(std::isfinite(log_floor) && log_floor > 0, "features: log_floor must be > 0, got {}",
               log_floor);
  ENGRAM_CHECK(num_ceps >= 0 && num_ceps <= num_mel_bins,
               "features: num_ceps must be in 0..num_mel_bins ({}), got {}", num_mel_bins, num_ceps);
  ENGRAM_CHECK(delta_order >= 0 && delta_order <= 2,
               "features: delta_order must be 0, 1 or 2, got {}", delta_order);
  ENGRAM_CHECK(delta_window >= 1 && delta_window <= 100,
               "features: delta_window must be in 1..100, got {}", delta_window);
  ENGRAM_CHECK(trim_db >= 0 && trim_db <= 200, "features: trim_db must be in [0, 200] dB (0 = off), got {}",
               trim_db);
  ENGRAM_CHECK(trim_margin_ms >= 0 && trim_margin_ms <= 10000,
               "features: trim_margin_ms must be in [0, 10000], got {}", trim_margin_ms);
}

// ---------------------------------------------------------------------------------------------
// Window, mel scale, filters

double hz_to_mel(double hz) { return 1127.0 * std::log1p(hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * std::expm1(mel / 1127.0); }

std::vector<float> window_function(WindowType type, int size) {
  ENGRAM_CHECK(size >= 2, "features: a window needs 2 or more samples, got {}", size);
  std::vector<float> w(size);
  const double a = 2.0 * std::numbers::pi / (size - 1);
  for (int n = 0; n < size; ++n) {
    const double c = std::cos(a * n);
    switch (type) {
      case WindowType::kPovey:
        w[n] = static_cast<float>(std::pow(0.5 - 0.5 * c, 0.85));
        break;
      case WindowType::kHamming:
        w[n] = static_cast<float>(0.54 - 0.46 * c);
        break;
      case WindowType::kHann:
        w[n] = static_cast<float>(0.5 - 0.5 * c);
        break;
      case WindowType::kRectangular:
        w[n] = 1.0f;
        break;
    }
  }
  return w;
}

std::vector<float> mel_filterbank(const FeatureConfig& c) {
  c.validate();
  const int m_bins = c.num_mel_bins, k_bins = c.fft_bins();
  const double lo = hz_to_mel(c.low_freq), hi = hz_to_mel(c.effective_high_freq());
  const double d = (hi - lo) / (m_bins + 1);
  const double bin_hz = double(c.sample_rate) / c.fft_size();
  std::vector<float> w(static_cast<size_t>(m_bins) * k_bins, 0.0f);  // [M, K]
  for (int m = 0; m < m_bins; ++m) {
    const double left = lo + m * d, center = left + d, right = center + d;
    int covered = 0;
    for (int k = 0; k < k_bins; ++k) {
      const double mel = hz_to_mel(k * bin_hz);
      if (mel <= left || mel >= right) continue;
      w[size_t(m) * k_bins + k] = static_cast<float>(
          mel <= center ? (mel - left) / (center - left) : (right - mel) / (right - center));
      ++covered;
    }
    ENGRAM_CHECK(
        covered > 0,
        "features: mel filter {} ({:.1f}-{:.1f} Hz) covers no FFT bin: num_mel_bins {} is too many "
        "for fft_size {} at {} Hz (bins {:.2f} Hz apart)",
        m, mel_to_hz(left), mel_to_hz(right), m_bins, c.fft_size(), c.sample_rate, bin_hz);
  }
  return w;
}

// ---------------------------------------------------------------------------------------------
// FbankComputer

FbankComputer::FbankComputer(const FeatureConfig& config)
    : config_((config.validate(), config)),  // validated before the window and filters are built
      window_(window_function(config.window, config.window_samples())),
      filters_(mel_filterbank(config)),
      dct_(config.num_ceps > 0 ? dct_matrix(config.num_ceps, config.num_mel_bins) : std::vector<float>{}) {
  const int k_bins = config_.fft_bins();
  for (int m = 0; m < config_.num_mel_bins; ++m) {
    const float* w = filters_.data() + size_t(m) * k_bins;
    int first = 0, last = k_bins;
    while (first < k_bins && w[first] == 0.0f) ++first;
    while (last > first && w[last - 1] == 0.0f) --last;
    filter_range_.emplace_back(first, last);
  }
}

Features FbankComputer::unnormalised(std::span<const float> samples) const {
  const FeatureConfig& c = config_;
  const int win = c.window_samples(), hop = c.hop_samples(), nfft = c.fft_size(),
            k_bins = c.fft_bins();
  const int m_bins = c.num_mel_bins;
  const float p = c.preemphasis;
  // Fewer samples than one window give no frame: refused here, the one path every caller's
  // features take (transcription, evaluation, `speech show`, the HTTP route), never an empty or
  // padded utterance that the model would still "hear" as a digit.
  ENGRAM_CHECK(static_cast<int64_t>(samples.size()) >= win,
               "audio of {} samples ({:.1f} ms at {} Hz) is shorter than one analysis window ({} samples, {} ms)",
               samples.size(), 1000.0 * static_cast<double>(samples.size()) / c.sample_rate, c.sample_rate, win,
               c.frame_length_ms);
  Features out;
  out.frames = c.num_frames(static_cast<int64_t>(samples.size()));
  out.mel_bins = out.dim = m_bins;
  out.data.assign(static_cast<size_t>(out.frames) * m_bins, 0.0f);  // [T, M]

  std::unique_ptr<kiss_fftr_state, FftrDeleter> fft(kiss_fftr_alloc(nfft, 0, nullptr, nullptr));
  ENGRAM_CHECK(fft != nullptr, "features: kissfft could not set up a real FFT of size {}", nfft);
  std::vector<float> frame(nfft);              // [fft_size] windowed frame, zero-padded
  std::vector<kiss_fft_cpx> spectrum(k_bins);  // [K]
  std::vector<float> power(k_bins);            // [K] |X_k|^2
  std::vector<double> energy(static_cast<size_t>(out.frames));  // [T] Σ_k |X_k|^2 (for trim_db)
  for (int64_t t = 0; t < out.frames; ++t) {
    const float* x = samples.data() + t * hop;
    std::copy(x, x + win, frame.begin());
    if (c.remove_dc) {
      double sum = 0;
      for (int i = 0; i < win; ++i) sum += frame[i];
      const float mean = static_cast<float>(sum / win);
      for (int i = 0; i < win; ++i) frame[i] -= mean;
    }
    if (p != 0.0f) {
      for (int i = win - 1; i > 0; --i) frame[i] -= p * frame[i - 1];
      frame[0] -= p * frame[0];
    }
    for (int i = 0; i < win; ++i) frame[i] *= window_[i];
    std::fill(frame.begin() + win, frame.end(), 0.0f);
    kiss_fftr(fft.get(), frame.data(), spectrum.data());
    double total = 0;
    for (int k = 0; k < k_bins; ++k) {
      power[k] = spectrum[k].r * spectrum[k].r + spectrum[k].i * spectrum[k].i;
      total += power[k];
    }
    energy[static_cast<size_t>(t)] = total;
    float* row = out.row(t);
    for (int m = 0; m < m_bins; ++m) {
      const float* w = filters_.data() + size_t(m) * k_bins;
      float e = 0.0f;
      for (int k = filter_range_[m].first; k < filter_range_[m].second; ++k) e += w[k] * power[k];
      row[m] = std::log(std::max(e, c.log_floor));
    }
  }
  if (c.trim_db > 0 && out.frames > 0) {
    const auto [first, last] = loud_frame_span(energy, c.trim_db, c.frame_shift_ms, c.trim_margin_ms);
    out.data.erase(out.data.begin() + (last + 1) * m_bins, out.data.end());
    out.data.erase(out.data.begin(), out.data.begin() + first * m_bins);
    out.frames = last + 1 - first;
  }
  if (c.num_ceps > 0) out = cepstra(out, dct_, c.num_ceps);
  if (c.delta_order > 0) out = add_deltas(out, c.delta_order, c.delta_window);
  return out;
}

std::vector<float> dct_matrix(int num_ceps, int m) {
  ENGRAM_CHECK(m >= 1 && num_ceps >= 1 && num_ceps <= m, "dct_matrix: {} rows of a DCT of size {}", num_ceps, m);
  std::vector<float> dct(static_cast<size_t>(num_ceps) * m);  // [C, M]
  for (int k = 0; k < num_ceps; ++k) {
    const double s = std::sqrt((k == 0 ? 1.0 : 2.0) / m);
    for (int j = 0; j < m; ++j)
      dct[static_cast<size_t>(k) * m + j] = static_cast<float>(s * std::cos(std::numbers::pi * k * (j + 0.5) / m));
  }
  return dct;
}

Features cepstra(const Features& in, std::span<const float> dct, int num_ceps) {
  const int m = in.mel_bins;
  ENGRAM_CHECK(in.dim == m && m > 0 && !in.cepstral && num_ceps >= 1 && num_ceps <= m &&
                   dct.size() == static_cast<size_t>(num_ceps) * m,
               "cepstra: needs log-mel statics only (dim {}, mel_bins {}), 1..{} coefficients (got {}) and a [{}, {}] "
               "DCT ({} values)",
               in.dim, m, m, num_ceps, num_ceps, m, dct.size());
  Features out;
  out.frames = in.frames;
  out.mel_bins = out.dim = num_ceps;
  out.cepstral = true;
  out.data.assign(static_cast<size_t>(in.frames) * num_ceps, 0.0f);
  for (int64_t t = 0; t < in.frames; ++t) {
    const float* x = in.row(t);
    float* y = out.row(t);
    for (int k = 0; k < num_ceps; ++k) {
      const float* d = dct.data() + static_cast<size_t>(k) * m;
      double acc = 0;
      for (int j = 0; j < m; ++j) acc += double{d[j]} * x[j];
      y[k] = static_cast<float>(acc);
    }
  }
  return out;
}

Features cepstra(const Features& in, int num_ceps) {
  ENGRAM_CHECK(in.mel_bins >= 1 && num_ceps >= 1 && num_ceps <= in.mel_bins,
               "cepstra: needs log-mel statics only (mel_bins {}) and 1..{} coefficients, got {}", in.mel_bins,
               in.mel_bins, num_ceps);
  return cepstra(in, dct_matrix(num_ceps, in.mel_bins), num_ceps);
}

std::pair<int64_t, int64_t> loud_frame_span(std::span<const double> energy, float trim_db, float shift_ms,
                                             float margin_ms) {
  ENGRAM_CHECK(!energy.empty(), "loud_frame_span: no frames");
  const double peak = *std::max_element(energy.begin(), energy.end());
  const double floor = peak * std::pow(10.0, -trim_db / 10.0);
  const auto n = static_cast<int64_t>(energy.size());
  int64_t first = 0, last = n - 1;
  if (peak > 0) {  // all-zero audio: nothing is louder than anything else, keep it all
    while (energy[static_cast<size_t>(first)] < floor) ++first;
    while (energy[static_cast<size_t>(last)] < floor) --last;
  }
  const auto margin = static_cast<int64_t>(std::lround(margin_ms / shift_ms));
  return {std::max<int64_t>(0, first - margin), std::min(n - 1, last + margin)};
}

void FbankComputer::check_rate(const Waveform& wave) const {
  ENGRAM_CHECK(
      wave.sample_rate == config_.sample_rate,
      "features: audio at {} Hz, features configured for {} Hz (FeatureConfig::sample_rate; "
      "engram does not resample)",
      wave.sample_rate, config_.sample_rate);
}

Features FbankComputer::compute(const Waveform& wave) const {
  check_rate(wave);
  return compute(std::span<const float>(wave.samples));
}

Features FbankComputer::compute(std::span<const float> samples) const {
  Features out = unnormalised(samples);
  apply_cmvn(&out, config_.cmvn);
  return out;
}

Features FbankComputer::compute_unnormalised(const Waveform& wave) const {
  check_rate(wave);
  return unnormalised(std::span<const float>(wave.samples));
}

Features compute_fbank(const Waveform& wave, const FeatureConfig& config) {
  return FbankComputer(config).compute(wave);
}

// ---------------------------------------------------------------------------------------------
// Deltas and CMVN

Features add_deltas(const Features& in, int order, int window) {
  ENGRAM_CHECK(order >= 1 && order <= 2, "add_deltas: order must be 1 or 2, got {}", order);
  ENGRAM_CHECK(window >= 1, "add_deltas: window must be >= 1, got {}", window);
  ENGRAM_CHECK(in.dim == in.mel_bins && in.dim > 0,
               "add_deltas: input must hold statics only (dim {} == mel_bins {})", in.dim,
               in.mel_bins);
  // scales[i]: the order-i filter, 2 i N + 1 taps centred on the frame (Kaldi's DeltaFeatures).
  std::vector<std::vector<double>> scales{{1.0}};
  double normalizer = 0;
  for (int n = 1; n <= window; ++n) normalizer += 2.0 * n * n;
  for (int i = 1; i <= order; ++i) {
    const auto& prev = scales.back();
    std::vector<double> cur(prev.size() + 2 * window, 0.0);
    for (int j = -window; j <= window; ++j) {
      for (size_t k = 0; k < prev.size(); ++k) cur[j + window + k] += j * prev[k] / normalizer;
    }
    scales.push_back(std::move(cur));
  }
  const int m_bins = in.mel_bins;
  const int64_t frames = in.frames;
  Features out;
  out.frames = frames;
  out.mel_bins = m_bins;
  out.cepstral = in.cepstral;
  out.dim = m_bins * (order + 1);
  out.data.assign(static_cast<size_t>(frames) * out.dim, 0.0f);  // [T, F]
  std::vector<double> acc(m_bins);
  for (int64_t t = 0; t < frames; ++t) {
    for (int i = 0; i <= order; ++i) {
      const auto& s = scales[i];
      const int64_t offset = static_cast<int64_t>(s.size() / 2);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (size_t j = 0; j < s.size(); ++j) {
        if (s[j] == 0.0) continue;
        const int64_t src =
            std::clamp<int64_t>(t + static_cast<int64_t>(j) - offset, 0, frames - 1);
        const float* x = in.row(src);
        for (int m = 0; m < m_bins; ++m) acc[m] += s[j] * x[m];
      }
      float* y = out.row(t) + i * m_bins;
      for (int m = 0; m < m_bins; ++m) y[m] = static_cast<float>(acc[m]);
    }
  }
  return out;
}

void apply_cmvn(Features* f, Cmvn mode) {
  if (mode == Cmvn::kNone || f->frames == 0) return;
  CmvnStats stats;
  stats.add(*f);
  stats.apply(f, mode);
}

void CmvnStats::add(const Features& f) {
  if (dim_ < 0) {
    dim_ = f.dim;
    sum_.assign(static_cast<size_t>(dim_), 0.0);
    sum_sq_.assign(static_cast<size_t>(dim_), 0.0);
  }
  ENGRAM_CHECK(f.dim == dim_, "CMVN statistics: features of width {} pooled with width {}", f.dim, dim_);
  for (int64_t t = 0; t < f.frames; ++t) {
    const float* row = f.row(t);
    for (int j = 0; j < dim_; ++j) {
      sum_[j] += row[j];
      sum_sq_[j] += static_cast<double>(row[j]) * row[j];
    }
  }
  frames_ += f.frames;
}

void CmvnStats::apply(Features* f, Cmvn mode) const {
  if (mode == Cmvn::kNone) return;
  ENGRAM_CHECK(frames_ > 0, "CMVN statistics: no frames pooled");
  ENGRAM_CHECK(f->dim == dim_, "CMVN statistics of width {} applied to features of width {}", dim_, f->dim);
  const double n = static_cast<double>(frames_);
  std::vector<double> mean(static_cast<size_t>(dim_)), scale(static_cast<size_t>(dim_), 1.0);
  for (int j = 0; j < dim_; ++j) {
    mean[j] = sum_[j] / n;
    const double var = std::max(0.0, sum_sq_[j] / n - mean[j] * mean[j]);
    if (mode == Cmvn::kMeanVariance && var >= 1e-20) scale[j] = 1.0 / std::sqrt(var);
  }
  for (int64_t t = 0; t < f->frames; ++t) {
    float* row = f->row(t);
    for (int j = 0; j < dim_; ++j) row[j] = static_cast<float>((row[j] - mean[j]) * scale[j]);
  }
}

// ---------------------------------------------------------------------------------------------
// SpecAugment

void SpecAugmentConfig::validate() const {
  ENGRAM_CHECK(freq_masks >= 0 && time_masks >= 0 && freq_masks <= 1000 && time_masks <= 1000,
               "spec_augment: mask counts must be in [0, 1000], got {} and {}", freq_masks, time_masks);
  ENGRAM_CHECK(freq_mask_width >= 0 && time_mask_width >= 0,
               "spec_augment: mask widths must be >= 0, got {} and {}", freq_mask_width,
               time_mask_width);
  ENGRAM_CHECK(time_mask_ratio >= 0 && time_mask_ratio <= 1,
               "spec_augment: time_mask_ratio must be in [0, 1], got {}", time_mask_ratio);
  ENGRAM_CHECK(freq_warp >= 0 && freq_warp <= 0.5f, "spec_augment: freq_warp must be in [0, 0.5], got {}",
               freq_warp);
  ENGRAM_CHECK(crop_start >= 0 && crop_end >= 0 && crop_start <= 10000 && crop_end <= 10000,
               "spec_augment: crop_start and crop_end must be in [0, 10000] frames, got {} and {}", crop_start,
               crop_end);
}

void warp_channels(Features* f, float a) {
  ENGRAM_CHECK(std::isfinite(a) && a > 0, "warp_channels: the factor must be finite and > 0, got {}", a);
  const int m_bins = f->mel_bins;
  if (f->frames == 0 || m_bins < 2 || a == 1.0f) return;
  ENGRAM_CHECK(f->dim % m_bins == 0, "warp_channels: dim {} is not a multiple of mel_bins {}", f->dim, m_bins);
  const int blocks = f->dim / m_bins;
  std::vector<int> lo(m_bins);
  std::vector<float> frac(m_bins);
  for (int m = 0; m < m_bins; ++m) {
    const float pos = std::min(static_cast<float>(m) * a, static_cast<float>(m_bins - 1));
    lo[m] = std::min(static_cast<int>(pos), m_bins - 2);
    frac[m] = pos - static_cast<float>(lo[m]);
  }
  std::vector<float> src(m_bins);
  for (int64_t t = 0; t < f->frames; ++t) {
    for (int b = 0; b < blocks; ++b) {
      float* x = f->row(t) + b * m_bins;
      std::copy_n(x, m_bins, src.begin());
      for (int m = 0; m < m_bins; ++m) x[m] = src[lo[m]] + frac[m] * (src[lo[m] + 1] - src[lo[m]]);
    }
  }
}

void spec_augment(Features* f, const SpecAugmentConfig& c, core::Rng& rng) {
  c.validate();
  if (f->frames == 0 || f->mel_bins == 0) return;
  ENGRAM_CHECK(f->dim % f->mel_bins == 0, "spec_augment: dim {} is not a multiple of mel_bins {}",
               f->dim, f->mel_bins);
  ENGRAM_CHECK(!(c.freq_warp > 0 && f->cepstral),
               "spec_augment: freq_warp resamples mel channels; these features are cepstra (features.num_ceps)");
  const int m_bins = f->mel_bins, blocks = f->dim / f->mel_bins;
  const int64_t frames = f->frames;
  if (c.freq_warp > 0 && m_bins > 1) warp_channels(f, rng.uniform(1.0f - c.freq_warp, 1.0f + c.freq_warp));
  for (int i = 0; i < c.freq_masks; ++i) {
    const int width = static_cast<int>(rng.below(std::min(c.freq_mask_width, m_bins) + 1));
    const int f0 = static_cast<int>(rng.below(m_bins - width + 1));
    for (int64_t t = 0; t < frames; ++t) {
      for (int b = 0; b < blocks; ++b) std::fill_n(f->row(t) + b * m_bins + f0, width, 0.0f);
    }
  }
  const auto widest =
      std::min<int64_t>(c.time_mask_width, static_cast<int64_t>(c.time_mask_ratio * frames));
  for (int i = 0; i < c.time_masks; ++i) {
    const auto width = static_cast<int64_t>(rng.below(widest + 1));
    const auto t0 = static_cast<int64_t>(rng.below(frames - width + 1));
    std::fill_n(f->row(t0), width * f->dim, 0.0f);
  }
  if (c.crop_start > 0 || c.crop_end > 0) {
    const int64_t third = frames / 3;
    const auto head = static_cast<int64_t>(rng.below(std::min<int64_t>(c.crop_start, third) + 1));
    const auto tail = static_cast<int64_t>(rng.below(std::min<int64_t>(c.crop_end, third) + 1));
    f->data.erase(f->data.end() - tail * f->dim, f->data.end());
    f->data.erase(f->data.begin(), f->data.begin() + head * f->dim);
    f->frames = frames - head - tail;
  }
}

}  // namespace engram::data::audio
