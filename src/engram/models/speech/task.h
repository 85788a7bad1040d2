// Training a SpeechModel on the Free Spoken Digit Dataset: the run config (`engram train
// CONFIG.yaml` with `model: speech`) and the train::TrainTask adapter. Features are computed once
// at load, one recording after another; each epoch shuffles the training set; optional SpecAugment
// per batch; teacher-forced NLL; validation decodes the validation set (data.valid_reps; the test
// split when 0), greedy or beam, and reports the token (digit) error rate and sequence accuracy
// ("seq_acc" picks best/).
// Digit strings (data.train_strings / test_strings > 0): 1-7 recordings of one speaker from the
// split, joined with pauses of gap_ms (or drawn up to gap_max_ms; silent, or noise at the
// recording's own floor with gap_noise), features computed over the joined waveform.
// features.cmvn_scope speaker: the statistics pool every utterance of one speaker in a set (a
// speed-perturbed or noisy copy counts as another speaker); the held-out speaker's test set is pooled
// too, an unsupervised adaptation to their voice that needs none of their labels.
// Split: the upstream one (repetition index 0-4 = test), or with data.test_speaker every recording
// of that speaker is the test set and the other speakers train.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/data/audio.h"
#include "engram/models/speech/model.h"
#include "engram/train/trainer.h"

namespace engram::models {

struct SpeechDataConfig {
  std::string dir = "fsdd";          // FSDD (its recordings/), relative to $ENGRAM_DATA_DIR unless it exists
  std::string test_speaker;          // "" = the upstream split (index 0-4 test); else this speaker held out
  int64_t max_train = 0;             // use at most this many training recordings (0 = all), a fixed subset
  int64_t max_test = 0;              // the same for the test (validation) set
  int batch_size = 32;
  int valid_beam = 1;                // validation decoding beam (1 = greedy)
  uint64_t subset_seed = 7;          // which recordings max_train / max_test keep
  data::audio::SpecAugmentConfig spec_augment;
  int64_t train_strings = 0;         // > 0: train on this many digit strings instead of single digits
  int64_t test_strings = 0;          // > 0: test on this many digit strings
  int min_digits = 1;                // digits per string, uniform in [min_digits, max_digits]
  int max_digits = 7;
  float gap_ms = 50;                 // pause between the concatenated recordings
  float gap_max_ms = 0;              // > gap_ms: each pause drawn uniformly from [gap_ms, gap_max_ms]
  bool gap_noise = false;            // pauses carry Gaussian noise at the RMS of the quietest 25 ms frame
                                     // of the recording before them (else digital silence)
  uint64_t string_seed = 3;          // which recordings each string joins
  int valid_reps = 0;                // > 0: validation set = that many repetitions of every training
                                     // speaker/digit (the lowest indices outside the test set); 0 = the test set
  int valid_offset = 0;              // the validation repetitions start this many indices above the lowest one
                                     // outside the test set (cross-validation folds over the training indices)
  int64_t valid_strings = 0;         // digit strings of the validation set (0 = as many as test_strings)
  std::vector<float> speed_perturb;  // extra training copies at these speeds, e.g. [0.9, 1.1] (resampled audio);
                                     // digit strings: each string at 1 or one of these speeds
  std::vector<float> noise_snr_db;   // extra training copies with white noise at these SNRs (dB), e.g. [20, 30];
                                     // digit strings: each string clean or at one of these

  template <class V>
  void visit(V& v) {
    v("dir", dir, "FSDD directory (with recordings/); relative paths also under $ENGRAM_DATA_DIR");
    v("test_speaker", test_speaker, "'' = upstream split (index 0-4 test); else this speaker is the test set");
    v("max_train", max_train, "at most this many training recordings (0 = all)");
    v("max_test", max_test, "at most this many test recordings (0 = all)");
    v("batch_size", batch_size, "utterances per update");
    v("valid_beam", valid_beam, "validation decoding beam (1 = greedy)");
    v("subset_seed", subset_seed, "seed of the max_train / max_test subsets");
    v("spec_augment", spec_augment, "SpecAugment masking of training batches");
    v("train_strings", train_strings, "> 0: that many training digit strings (recordings of one speaker joined)");
    v("test_strings", test_strings, "> 0: that many test digit strings (from the test recordings)");
    v("min_digits", min_digits, "digit strings: fewest digits");
    v("max_digits", max_digits, "digit strings: most digits");
    v("gap_ms", gap_ms, "digit strings: pause between the joined recordings (ms); the shortest with gap_max_ms");
    v("gap_max_ms", gap_max_ms, "digit strings: > gap_ms draws each pause from [gap_ms, gap_max_ms] (0 = every pause gap_ms)");
    v("gap_noise", gap_noise, "digit strings: fill pauses with noise at the level of the recording before them (else silence)");
    v("string_seed", string_seed, "digit strings: seed of the recordings joined");
    v("valid_reps", valid_reps,
      "> 0: repetitions per training speaker/digit held out for validation (upstream: indices 5.., held-out speaker: "
      "0..); 0 = validate on the test set");
    v("valid_offset", valid_offset,
      "validation repetitions start this many indices above the lowest outside the test set (folds for "
      "cross-validation; 0 = the lowest)");
    v("valid_strings", valid_strings, "digit strings of the validation set (0 = as many as test_strings)");
    v("speed_perturb", speed_perturb, "extra training copies of every recording at these speeds (0.5-2, e.g. [0.9, 1.1])");
    v("noise_snr_db", noise_snr_db,
      "extra training copies of every recording with white noise at these signal-to-noise ratios (dB, -10-100)");
  }
  void validate() const;
};

struct SpeechTrainConfig {
  std::string model = SpeechModel::kName;
  SpeechConfig speech;
  SpeechDataConfig data;
  train::TrainerConfig train;

  template <class V>
  void visit(V& v) {
    v("model", model, "model family (speech)");
    v("speech", speech, "the model and its front end");
    v("data", data, "FSDD recordings and batching");
    v("train", train, "training loop");
  }
};

SpeechTrainConfig read_speech_config(const YAML::Node& node, const std::string& source,
                                     const std::vector<std::string>& sets);

// The recordings of a run: the test set (upstream indices 0-4, or every recording of
// test_speaker), the validation set (valid_reps > 0: indices [first, first + valid_reps) of the
// other recordings, first = 5 upstream and 0 with a held-out speaker; else empty: validation on
// the test set) and the rest for training; max_train / max_test subsets applied.
struct FsddSplit {
  std::vector<data::audio::FsddRecording> train, valid, test;
};
FsddSplit split_fsdd(const std::vector<data::audio::FsddRecording>& all, const SpeechDataConfig& cfg);

// One utterance: stacked features and the digits spoken.
struct SpeechUtterance {
  data::audio::Features features;
  std::vector<int> digits;
  std::string path;
  double seconds = 0;  // duration of the audio the features were computed from
  std::string speaker;  // whose voice: the FSDD speaker, "@speed" appended for a speed-perturbed copy,
                        // "+NdB" for a noisy one
};

// Utterances of FSDD recordings (features computed one recording after another); speed != 1 resamples each
// waveform first (data::audio::change_speed); snr_db adds white noise at that SNR
// (data::audio::add_noise, seeded by noise_seed).
std::vector<SpeechUtterance> load_speech_utterances(const SpeechConfig& cfg,
                                                    const std::vector<data::audio::FsddRecording>& recs,
                                                    float speed = 1.0f, std::optional<float> snr_db = std::nullopt,
                                                    uint64_t noise_seed = 1);

// The utterances of one set of a run's data config: "train" (speed and noise copies included; the
// noise of copy k drawn from seed string_seed * 1000 + k), "valid"
// (the test set's when valid_reps = 0) or "test"; digit strings when the config asks for them.
std::vector<SpeechUtterance> load_speech_set(const SpeechConfig& cfg, const SpeechDataConfig& data,
                                             const std::string& set);

// How digit strings are made: `count` strings of min_digits-max_digits recordings of one speaker,
// pauses as SpeechDataConfig's gap_ms, gap_max_ms and gap_noise; with `speeds`, each string is
// played at 1 or one of them, and with `noise_snr_db` it is clean or carries white noise at one
// of those SNRs, each drawn uniformly.
struct DigitStringSpec {
  int64_t count = 0;
  int min_digits = 1;
  int max_digits = 7;
  float gap_ms = 50;
  float gap_max_ms = 0;
  bool gap_noise = false;
  uint64_t seed = 1;
  std::vector<float> speeds{};
  std::vector<float> noise_snr_db{};
};

// Digit strings joined from `recs` (each string from one speaker's recordings). The pauses'
// lengths and noise, and the strings' added noise, come from streams of their own, so the
// recordings joined and the speeds do not depend on them.
std::vector<SpeechUtterance> make_digit_strings(const SpeechConfig& cfg,
                                                const std::vector<data::audio::FsddRecording>& recs,
                                                const DigitStringSpec& spec);

class SpeechTrainTask final : public train::TrainTask {
 public:
  explicit SpeechTrainTask(const SpeechTrainConfig& cfg, std::FILE* log = stdout);
  // With utterances given directly (tests, synthetic features).
  SpeechTrainTask(const SpeechTrainConfig& cfg, std::vector<SpeechUtterance> train, std::vector<SpeechUtterance> valid);

  nn::ParamStore& params() override { return model_->params(); }
  std::string model_name() const override { return SpeechModel::kName; }
  YAML::Node model_config() const override { return model_->config(); }
  int64_t batches_per_epoch() const override { return batches_; }
  void begin_epoch(int epoch, uint64_t seed) override;
  train::BatchResult train_batch(int64_t index) override;  // loss per utterance
  bool shardable() const override { return true; }
  train::Metrics validate() override;                       // {loss, ter, seq_acc}
  std::string primary_metric() const override { return "seq_acc"; }
  bool higher_is_better() const override { return true; }
  bool reports_perplexity() const override { return false; }

  const SpeechModel& model() const { return *model_; }
  const std::vector<SpeechUtterance>& valid_set() const { return valid_; }

 private:
  void init();
  SpeechTrainConfig cfg_;
  std::unique_ptr<SpeechModel> model_;
  std::vector<SpeechUtterance> train_, valid_;
  std::vector<int64_t> order_;
  int64_t batches_ = 0;
  int epoch_ = 0;
  uint64_t seed_ = 1;
  core::Graph graph_;
};

}  // namespace engram::models
