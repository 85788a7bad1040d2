// SpeechTrainTask: FSDD listing and split, features once, batches, loss and validation.
#include "engram/models/speech/task.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>

#include "engram/core/memory.h"
#include "engram/core/ops.h"
#include "engram/data/paths.h"
#include "engram/models/speech/eval.h"
#include "engram/models/training.h"

namespace engram::models {

namespace fs = std::filesystem;
namespace audio = data::audio;

namespace {

// A fixed subset of at most `max` (0 = all), in the listing's order.
std::vector<audio::FsddRecording> subset(std::vector<audio::FsddRecording> recs, int64_t max, uint64_t seed) {
  if (max <= 0 || static_cast<int64_t>(recs.size()) <= max) return recs;
  std::vector<int64_t> idx(recs.size());
  std::iota(idx.begin(), idx.end(), int64_t{0});
  core::Rng rng(seed);
  rng.shuffle(idx.begin(), idx.end());
  idx.resize(static_cast<size_t>(max));
  std::sort(idx.begin(), idx.end());
  std::vector<audio::FsddRecording> out;
  for (int64_t i : idx) out.push_back(recs[i]);
  return out;
}

// The speaker key of a copy at `speed` (SpeechUtterance::speaker).
std::string speaker_key(const std::string& speaker, float speed, std::optional<float> snr_db = std::nullopt) {
  std::string key = speed == 1.0f ? speaker : fmt::format("{}@{:g}", speaker, speed);
  if (snr_db) key += fmt::format("+{:g}dB", *snr_db);
  return key;
}

// The strings of one set: training strings get the speed and noise copies.
DigitStringSpec string_spec(const SpeechDataConfig& d, int64_t count, uint64_t seed, bool train) {
  DigitStringSpec spec{count, d.min_digits, d.max_digits, d.gap_ms, d.gap_max_ms, d.gap_noise, seed, {}, {}};
  if (train) spec.speeds = d.speed_perturb, spec.noise_snr_db = d.noise_snr_db;
  return spec;
}

// The features of utterances as the model takes them, from each one's unnormalised features
// (FbankComputer::compute_unnormalised): CMVN over each speaker's utterances pooled (cmvn_scope
// speaker) or each its own, then stacking.
void finish_features(const SpeechConfig& cfg, std::vector<SpeechUtterance>* utts) {
  std::map<std::string, std::vector<audio::Features*>> by_speaker;
  for (SpeechUtterance& u : *utts) by_speaker[u.speaker].push_back(&u.features);
  for (auto& [speaker, list] : by_speaker) finish_speaker_features(cfg, list);
}

// The RMS of the quietest frame (the features' window and hop) of a recording: its noise floor.
float noise_floor(const audio::Waveform& w, const audio::FeatureConfig& fc) {
  const size_t win = static_cast<size_t>(fc.window_samples()), hop = static_cast<size_t>(fc.hop_samples());
  double lowest = -1;
  for (size_t a = 0; a + win <= w.samples.size(); a += hop) {
    double e = 0;
    for (size_t b = a; b < a + win; ++b) e += static_cast<double>(w.samples[b]) * w.samples[b];
    if (lowest < 0 || e < lowest) lowest = e;
  }
  return lowest <= 0 ? 0.0f : static_cast<float>(std::sqrt(lowest / static_cast<double>(win)));
}

}  // namespace

SpeechTrainConfig read_speech_config(const YAML::Node& node, const std::string& source,
                                     const std::vector<std::string>& sets) {
  return parse_run_config<SpeechTrainConfig>(node, source, sets);
}

void SpeechDataConfig::validate() const {
  ENGRAM_CHECK(batch_size >= 1 && valid_beam >= 1 && max_train >= 0 && max_test >= 0,
               "speech data: batch_size {} and valid_beam {} must be >= 1, max_train {} and max_test {} >= 0",
               batch_size, valid_beam, max_train, max_test);
  spec_augment.validate();
  ENGRAM_CHECK(train_strings >= 0 && test_strings >= 0 && min_digits >= 1 && max_digits >= min_digits &&
                   max_digits <= 15 && gap_ms >= 0,
               "speech data: train_strings {} and test_strings {} must be >= 0, 1 <= min_digits {} <= max_digits {} "
               "<= 15, gap_ms {} >= 0",
               train_strings, test_strings, min_digits, max_digits, gap_ms);
  ENGRAM_CHECK(std::isfinite(gap_ms) && gap_ms <= 10000 && std::isfinite(gap_max_ms) &&
                   (gap_max_ms == 0 || (gap_max_ms >= gap_ms && gap_max_ms <= 10000)),
               "speech data: gap_ms {} must be at most 10000 and gap_max_ms {} 0 or in [gap_ms, 10000]", gap_ms,
               gap_max_ms);
  ENGRAM_CHECK(valid_reps >= 0 && valid_reps <= 45 && valid_strings >= 0,
               "speech data: valid_reps {} must be in [0, 45] and valid_strings {} >= 0", valid_reps, valid_strings);
  // Digit strings are held whole: at least the utterances and their digits each.
  for (const auto& [key, n] : {std::pair{"train_strings", train_strings}, std::pair{"test_strings", test_strings},
                               std::pair{"valid_strings", valid_strings}})
    core::check_memory((sizeof(SpeechUtterance) + sizeof(int) * static_cast<double>(min_digits)) * n,
                       fmt::format("speech: data.{} {}", key, n));
  ENGRAM_CHECK(valid_offset >= 0 && valid_offset + valid_reps <= 45,
               "speech data: valid_offset {} must be >= 0 with valid_offset + valid_reps ({}) <= 45", valid_offset,
               valid_offset + valid_reps);
  for (float s : speed_perturb)
    ENGRAM_CHECK(s >= 0.5f && s <= 2.0f && s != 1.0f,
                 "speech data: speed_perturb {} must be in [0.5, 2] and not 1 (the original is always used)", s);
  for (float snr : noise_snr_db)
    ENGRAM_CHECK(std::isfinite(snr) && snr >= -10.0f && snr <= 100.0f,
                 "speech data: noise_snr_db {} must be in [-10, 100] dB", snr);
}

FsddSplit split_fsdd(const std::vector<audio::FsddRecording>& all, const SpeechDataConfig& cfg) {
  FsddSplit s;
  const bool upstream = cfg.test_speaker.empty();
  const int first = (upstream ? 5 : 0) + cfg.valid_offset;  // the lowest validation index
  for (const auto& r : all) {
    if (upstream ? r.is_test() : r.speaker == cfg.test_speaker)
      s.test.push_back(r);
    else if (r.index >= first && r.index < first + cfg.valid_reps)
      s.valid.push_back(r);
    else
      s.train.push_back(r);
  }
  ENGRAM_CHECK(!s.train.empty() && !s.test.empty() && (cfg.valid_reps == 0 || !s.valid.empty()),
               "speech: {} training, {} validation and {} test recordings{}", s.train.size(), s.valid.size(),
               s.test.size(), upstream ? "" : fmt::format(" (test speaker '{}')", cfg.test_speaker));
  s.train = subset(std::move(s.train), cfg.max_train, cfg.subset_seed);
  s.test = subset(std::move(s.test), cfg.max_test, cfg.subset_seed + 1);
  return s;
}

std::vector<SpeechUtterance> load_speech_set(const SpeechConfig& cfg, const SpeechDataConfig& d,
                                             const std::string& set) {
  ENGRAM_CHECK(set == "train" || set == "valid" || set == "test", "speech: set '{}' is not train, valid or test", set);
  const std::string dir = data::resolve_data_path(d.dir);
  FsddSplit split = split_fsdd(audio::list_fsdd(dir), d);
  if (set == "train") {
    if (d.train_strings > 0)
      return make_digit_strings(cfg, split.train, string_spec(d, d.train_strings, d.string_seed, true));
    std::vector<SpeechUtterance> out = load_speech_utterances(cfg, split.train);
    const auto append = [&out](std::vector<SpeechUtterance> more) {
      out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    };
    for (float speed : d.speed_perturb) append(load_speech_utterances(cfg, split.train, speed));
    for (size_t k = 0; k < d.noise_snr_db.size(); ++k)
      append(load_speech_utterances(cfg, split.train, 1.0f, d.noise_snr_db[k], d.string_seed * 1000 + k));
    return out;
  }
  const bool test = set == "test" || d.valid_reps == 0;
  const std::vector<audio::FsddRecording>& recs = test ? split.test : split.valid;
  if (d.test_strings > 0) {
    const int64_t count = test || d.valid_strings == 0 ? d.test_strings : d.valid_strings;
    return make_digit_strings(cfg, recs, string_spec(d, count, d.string_seed + (test ? 1 : 2), false));
  }
  return load_speech_utterances(cfg, recs);
}

std::vector<SpeechUtterance> make_digit_strings(const SpeechConfig& cfg, const std::vector<audio::FsddRecording>& recs,
                                                const DigitStringSpec& spec) {
  const auto& [count, min_digits, max_digits, gap_ms, gap_max_ms, gap_noise, seed, speeds, noise_snr_db] = spec;
  ENGRAM_CHECK(!recs.empty(), "speech: digit strings from no recordings");
  std::map<std::string, std::vector<size_t>> by_speaker;
  for (size_t i = 0; i < recs.size(); ++i) by_speaker[recs[i].speaker].push_back(i);
  std::vector<std::pair<const std::string*, const std::vector<size_t>*>> speakers;
  for (const auto& [name, list] : by_speaker) speakers.emplace_back(&name, &list);
  const audio::FbankComputer fbank(cfg.features);
  struct Recording {
    audio::Waveform wave;
    float floor = 0;  // noise_floor(wave), for the pause after it
  };
  std::map<size_t, Recording> cache;
  const bool noisy_gaps = gap_noise;  // clang 14 (make fuzz) cannot capture a structured binding
  const auto recording = [&](size_t i) -> const Recording& {
    auto it = cache.find(i);
    if (it == cache.end()) {
      audio::Waveform w = audio::read_wav(recs[i].path);
      const float floor = noisy_gaps ? noise_floor(w, cfg.features) : 0.0f;
      it = cache.emplace(i, Recording{std::move(w), floor}).first;
    }
    return it->second;
  };
  const auto samples = [&](float ms) { return static_cast<size_t>(cfg.features.sample_rate * ms / 1000.0f); };
  core::Rng rng(seed);
  // The pauses' lengths and noise have their own stream: the recordings joined stay those of a
  // fixed gap.
  core::Rng pause_rng(seed ^ 0x9a05'e5ee'd000'0001ULL);
  core::Rng noise_rng(seed ^ 0x6e01'5e00'd000'0002ULL);
  std::vector<SpeechUtterance> out;
  // The strings are held whole: counted against the machine's memory as they are made.
  const std::string what = fmt::format("speech: {} digit strings (data.train_strings / test_strings / valid_strings)",
                                       count);
  double bytes = 0;
  for (int64_t n = 0; n < count; ++n) {
    const auto [speaker, pool_list] = speakers[rng.below(speakers.size())];
    const std::vector<size_t>& pool = *pool_list;
    const int len = min_digits + static_cast<int>(rng.below(static_cast<uint64_t>(max_digits - min_digits + 1)));
    audio::Waveform joined;
    SpeechUtterance u;
    size_t before = 0;  // the recording before the pause
    for (int k = 0; k < len; ++k) {
      const size_t i = pool[rng.below(pool.size())];
      const audio::Waveform& w = recording(i).wave;
      joined.sample_rate = w.sample_rate;
      if (k > 0) {
        const size_t gap = samples(gap_max_ms > gap_ms ? pause_rng.uniform(gap_ms, gap_max_ms) : gap_ms);
        if (gap_noise) {
          const float level = recording(before).floor;
          for (size_t q = 0; q < gap; ++q) joined.samples.push_back(level * static_cast<float>(pause_rng.normal()));
        } else {
          joined.samples.insert(joined.samples.end(), gap, 0.0f);
        }
      }
      before = i;
      joined.samples.insert(joined.samples.end(), w.samples.begin(), w.samples.end());
      u.digits.push_back(recs[i].digit);
      if (k > 0) u.path.push_back('+');
      u.path.append(recs[i].path);
    }
    float speed = 1.0f;
    if (!speeds.empty()) {  // the original or one of the perturbed speeds, uniformly
      const size_t pick = rng.below(speeds.size() + 1);
      if (pick > 0) speed = speeds[pick - 1], joined = audio::change_speed(joined, speed);
    }
    std::optional<float> snr;
    if (!noise_snr_db.empty()) {  // clean or at one of the SNRs, uniformly
      const size_t pick = noise_rng.below(noise_snr_db.size() + 1);
      if (pick > 0) snr = noise_snr_db[pick - 1], joined = audio::add_noise(joined, *snr, noise_rng);
    }
    u.features = fbank.compute_unnormalised(joined);
    u.seconds = joined.seconds();
    u.speaker = speaker_key(*speaker, speed, snr);
    bytes += static_cast<double>(sizeof u) + sizeof(float) * static_cast<double>(u.features.data.size()) +
             static_cast<double>(u.path.size() + sizeof(int) * u.digits.size());
    core::check_memory(bytes, what);
    out.push_back(std::move(u));
  }
  finish_features(cfg, &out);
  return out;
}

std::vector<SpeechUtterance> load_speech_utterances(const SpeechConfig& cfg,
                                                    const std::vector<audio::FsddRecording>& recs, float speed,
                                                    std::optional<float> snr_db, uint64_t noise_seed) {
  const audio::FbankComputer fbank(cfg.features);
  core::Rng rng(noise_seed);
  std::vector<SpeechUtterance> out;
  out.reserve(recs.size());
  for (const auto& r : recs) {
    audio::Waveform w = audio::read_wav(r.path);
    if (speed != 1.0f) w = audio::change_speed(w, speed);
    if (snr_db) w = audio::add_noise(w, *snr_db, rng);
    audio::Features f;
    try {
      f = fbank.compute_unnormalised(w);
    } catch (const Error& e) {  // a recording shorter than one window: the error names it
      throw Error(fmt::format("{}: {}", r.path, e.what()));
    }
    out.push_back({std::move(f), {r.digit}, r.path, w.seconds(), speaker_key(r.speaker, speed, snr_db)});
  }
  finish_features(cfg, &out);
  return out;
}

SpeechTrainTask::SpeechTrainTask(const SpeechTrainConfig& cfg, std::FILE* log) : cfg_(cfg) {
  ENGRAM_CHECK(cfg_.model == SpeechModel::kName, "speech training: config names model '{}'", cfg_.model);
  cfg_.data.validate();
  cfg_.speech.validate();
  ENGRAM_CHECK(!(cfg_.data.spec_augment.freq_warp > 0 && cfg_.speech.features.num_ceps > 0),
               "data.spec_augment.freq_warp resamples mel channels; speech.features.num_ceps {} makes them cepstra",
               cfg_.speech.features.num_ceps);
  const auto t0 = std::chrono::steady_clock::now();
  const SpeechDataConfig& d = cfg_.data;
  train_ = load_speech_set(cfg_.speech, d, "train");
  valid_ = load_speech_set(cfg_.speech, d, "valid");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_note(log, fmt::format("data: FSDD {} ({}): {} training{}, {} validation ({}) {}; features in {:.1f} s", d.dir,
                        d.test_speaker.empty() ? "upstream split" : fmt::format("test speaker {}", d.test_speaker),
                        train_.size(),
                        d.speed_perturb.empty() ? "" : fmt::format(" (with {} speed copies)", d.speed_perturb.size()),
                        valid_.size(), d.valid_reps > 0 ? fmt::format("{} repetitions held out", d.valid_reps) : "the test set",
                        d.train_strings > 0 || d.test_strings > 0
                            ? fmt::format("utterances ({}-{} digit strings)", d.min_digits, d.max_digits)
                            : std::string("recordings"),
                        secs));
  init();
  log_note(log, fmt::format("model: speech, {} {} attention, encoder {} x {}{} + {} pyramidal, stack {}, {} parameters",
                        io::to_yaml(cfg_.speech)["cell"].as<std::string>(),
                        io::to_yaml(cfg_.speech)["attention"].as<std::string>(), cfg_.speech.encoder_layers,
                        cfg_.speech.encoder_units, cfg_.speech.bidirectional ? " (bi)" : "", cfg_.speech.pyramid, cfg_.speech.stack,
                        model_->params().numel()));
}

SpeechTrainTask::SpeechTrainTask(const SpeechTrainConfig& cfg, std::vector<SpeechUtterance> train,
                                 std::vector<SpeechUtterance> valid)
    : cfg_(cfg), train_(std::move(train)), valid_(std::move(valid)) {
  cfg_.data.validate();
  ENGRAM_CHECK(!train_.empty() && !valid_.empty(), "speech: {} training and {} validation utterances", train_.size(),
               valid_.size());
  init();
}

void SpeechTrainTask::init() {
  core::Rng rng(cfg_.train.seed);
  model_ = std::make_unique<SpeechModel>(cfg_.speech, rng);
  batches_ = (static_cast<int64_t>(train_.size()) + cfg_.data.batch_size - 1) / cfg_.data.batch_size;
  begin_epoch(0, cfg_.train.seed);
}

void SpeechTrainTask::begin_epoch(int epoch, uint64_t seed) {
  epoch_ = epoch;
  seed_ = seed;
  order_.resize(train_.size());
  std::iota(order_.begin(), order_.end(), int64_t{0});
  core::Rng rng(train::epoch_seed(seed, epoch));
  rng.shuffle(order_.begin(), order_.end());
}

train::BatchResult SpeechTrainTask::train_batch(int64_t index) {
  ENGRAM_CHECK(index >= 0 && index < batches_, "speech: batch {} of {}", index, batches_);
  const int64_t bs = cfg_.data.batch_size;
  const int64_t begin = index * bs, end = std::min<int64_t>(begin + bs, static_cast<int64_t>(train_.size()));
  std::vector<audio::Features> augmented;
  std::vector<const audio::Features*> feats;
  std::vector<std::vector<int>> digits;
  const bool aug = cfg_.data.spec_augment.enabled();
  core::Rng rng(train::batch_seed(seed_, epoch_, index));
  if (aug) augmented.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    const SpeechUtterance& u = train_[order_[i]];
    if (aug) {
      augmented.push_back(u.features);
      audio::spec_augment(&augmented.back(), cfg_.data.spec_augment, rng);
      feats.push_back(&augmented.back());
    } else {
      feats.push_back(&u.features);
    }
    digits.push_back(u.digits);
  }
  // This rank's shard (augmentation was drawn for the whole batch, in order); the gradient is of
  // the whole batch's mean.
  const int64_t all = static_cast<int64_t>(feats.size());
  const auto [lo, hi] = train::shard_range(all, shard());
  if (lo == hi) return {0, 0};
  if (hi - lo < all) {
    feats = std::vector<const audio::Features*>(feats.begin() + lo, feats.begin() + hi);
    digits = std::vector<std::vector<int>>(digits.begin() + lo, digits.begin() + hi);
  }
  const decode::SourceBatch src = speech_source(feats);
  graph_.reset();
  // Dropout masks from their own stream (the augmentation's draws stay as they were).
  core::Rng drop(train::batch_seed(seed_ ^ 0x5eed'd120'90a7ULL, epoch_, index));
  Var sum = model_->loss(graph_, src, digits, cfg_.speech.dropout > 0 ? &drop : nullptr);
  graph_.backward(core::scale(sum, 1.0f / static_cast<float>(all)));
  return {static_cast<double>(sum.data()[0]), hi - lo};
}

train::Metrics SpeechTrainTask::validate() {
  core::Graph g(false);
  double nll = 0;
  const size_t bs = static_cast<size_t>(cfg_.data.batch_size);
  std::vector<audio::Features> feats;
  std::vector<std::vector<int>> refs;
  for (const auto& u : valid_) {
    feats.push_back(u.features);
    refs.push_back(u.digits);
  }
  for (size_t first = 0; first < valid_.size(); first += bs) {
    const size_t n = std::min(bs, valid_.size() - first);
    std::vector<const audio::Features*> part;
    std::vector<std::vector<int>> d;
    for (size_t i = first; i < first + n; ++i) {
      part.push_back(&valid_[i].features);
      d.push_back(valid_[i].digits);
    }
    g.reset();
    nll += model_->loss(g, speech_source(part), d).data()[0];
  }
  SpeechDecodeOptions o;
  o.beam = cfg_.data.valid_beam;
  o.batch_size = cfg_.data.batch_size;
  const auto hyps = transcribe(*model_, feats, o);
  train::Metrics m = speech_metrics(score_speech(refs, hyps));
  m["loss"] = nll / static_cast<double>(valid_.size());
  return m;
}

}  // namespace engram::models
