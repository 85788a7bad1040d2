// Decoding and scoring a SpeechModel: transcriptions through the shared search (greedy or
// beam), the token (digit) error rate by edit distance and the sequence accuracy, and the loaded
// model directory whose run_line takes a WAV path and returns the digits heard.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/decode/options.h"
#include "engram/models/loaded_family.h"
#include "engram/models/registry.h"
#include "engram/models/speech/model.h"
#include "engram/train/trainer.h"

namespace engram::models {

struct SpeechDecodeOptions {
  int beam = 1;          // 1 = greedy
  int batch_size = 64;   // utterances decoded together
  int max_length = 16;   // output digits at most
};

// The decode options the family honours (decode/options.h) with its defaults, the
// SpeechDecodeOptions they give, and the search of those (every output at most max_length digits,
// whatever the audio's length).
const decode::OptionSet& speech_option_set();
SpeechDecodeOptions speech_decode_options(const decode::DecodeOptions& o);
decode::SearchOptions speech_search(const SpeechDecodeOptions& options);

// One digit sequence per utterance (stacked features, as speech_features gives them), in the
// order given; batches group utterances of similar lengths (less padding). More than one model:
// one ensemble (decode/ensemble.h), their probabilities averaged.
std::vector<std::vector<int>> transcribe(const ModelSet<SpeechModel>& models, std::span<const data::audio::Features> utts,
                                         const SpeechDecodeOptions& options = {});
// The same as hypotheses (best first) of the search `so`, batch_size utterances a batch;
// `prefixes`: none, or one per utterance (digits forced first).
std::vector<std::vector<decode::Hypothesis>> transcribe_hyps(const ModelSet<SpeechModel>& models,
                                                             std::span<const data::audio::Features* const> utts,
                                                             const decode::SearchOptions& so, int batch_size,
                                                             std::span<const std::vector<int32_t>> prefixes = {});

// Levenshtein distance between two token sequences.
int64_t edit_distance(std::span<const int> a, std::span<const int> b);

struct SpeechScore {
  int64_t utterances = 0;
  int64_t ref_tokens = 0;
  int64_t errors = 0;       // Σ edit distances
  int64_t exact = 0;        // sequences equal to the reference
  double ter() const { return ref_tokens ? double(errors) / double(ref_tokens) : 0.0; }
  double seq_acc() const { return utterances ? double(exact) / double(utterances) : 0.0; }
};
SpeechScore score_speech(std::span<const std::vector<int>> refs, std::span<const std::vector<int>> hyps);
// {"ter": token error rate, "seq_acc": exact sequences} as fractions.
train::Metrics speech_metrics(const SpeechScore& s);

// Digits as text: "7", "3 1 4".
std::string digits_text(std::span<const int> digits);

// A loaded "speech" model directory.
struct LoadedSpeechModel : LoadedFamily<LoadedSpeechModel, SpeechModel> {
  std::unique_ptr<data::audio::FbankComputer> fbank;

  // A WAV path (16-bit PCM mono at the model's rate) -> the digits transcribed (greedy).
  std::string run_line(const std::string& line) override;
  std::string input_help() const override;
  // The same with a beam (and this model's ensemble members).
  std::string transcribe_file(const std::string& path, const SpeechDecodeOptions& options = {}) const;
  // Files of one speaker, transcribed in order: a model with features.cmvn_scope speaker
  // normalises them by statistics pooled over all of them (one file: its own, which is
  // transcribe_file), any other model each by its own.
  std::vector<std::string> transcribe_speaker(std::span<const std::string> paths,
                                              const SpeechDecodeOptions& options = {}) const;
  // POST /v1/transcribe (serve.cc, docs/serve.md): {"wav_base64": a WAV file in base64, "beam"?}
  // -> {"text", "digits", "score", "frames_per_step", "attention": [[α per encoder step] per
  // output token, <eos> last], "spectrogram": [T][M] log-mel frames (encoder step s covers
  // frames s * frames_per_step ...)}. At most 30 seconds of audio.
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // Members with this model's front end (features.* and stack: the features are computed once).
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};

// `engram speech show`: one recording's log-mel spectrogram (frames as columns, the highest mel
// bin on top, scaled to [0, 1]) with each output token's attention above it (one row per digit
// and <eos>, spread over the frames its encoder step covers, scaled to its row maximum), as one
// SVG heatmap; `text` is the transcription.
struct SpeechShow {
  std::string svg;
  std::string text;
};
SpeechShow show_speech(const LoadedSpeechModel& loaded, const std::string& wav_path,
                       const SpeechDecodeOptions& options = {});

std::unique_ptr<LoadedSpeechModel> load_speech_model(const std::filesystem::path& dir);

// `engram speech transcribe`: "FILE<TAB>digits" lines on stdout for `files`, or (none given)
// for the WAV paths read from stdin, each transcribed as its path arrives. With `one_speaker`
// every file is read first and their features normalised by pooled statistics
// (transcribe_speaker).
void transcribe_to_stdout(const LoadedSpeechModel& m, const std::vector<std::string>& files,
                          const SpeechDecodeOptions& options, bool one_speaker);

// `engram speech eval`: the loaded model scored on one set ("train", "valid" or "test") of the
// data its run was trained on: the run's train.yaml (in the model directory or its parent),
// with `sets` overrides (`data.test_speaker=theo`, `data.dir=...`) applied; the model's own
// front end computes the features.
struct SpeechEval {
  std::filesystem::path train_yaml;
  std::string set, split;  // split: "upstream split" or "test speaker NAME"
  std::string models;      // the model directories decoded, " + "-joined (an ensemble; default: `loaded`'s)
  int beam = 1, batch = 64;
  SpeechScore score;
  double audio_seconds = 0;   // total duration of the set's utterances
  double feature_seconds = 0;  // wall time of reading the WAV files and computing the features
  double decode_seconds = 0;   // wall time of transcription (features excluded)
  // Per utterance, in the set's order: its WAV path ('+'-joined for a digit string), the digits
  // spoken and the digits heard.
  std::vector<std::string> paths;
  std::vector<std::vector<int>> refs, hyps;
};
// "path<TAB>spoken<TAB>heard" lines (digits as digits_text) of the utterances heard wrong.
std::string speech_errors_tsv(const SpeechEval& e);
// `engram speech eval`'s report: what was scored, the digit error rate, the sequence accuracy and
// the time taken (reading + features, decoding), one line each.
std::string speech_eval_report(const SpeechEval& e);
// options.batch_size: utterances decoded together (1 = one file at a time); `loaded`'s ensemble
// members decode with it as one. The set is `loaded`'s run's.
SpeechEval evaluate_speech(const LoadedSpeechModel& loaded, const std::string& set, const SpeechDecodeOptions& options,
                           const std::vector<std::string>& sets = {});

}  // namespace engram::models
