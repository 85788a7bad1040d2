// Transcription, the edit-distance metrics and the loaded model directory.
#include "engram/models/speech/eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <numeric>
#include <optional>

#include "engram/data/text.h"
#include "engram/decode/ensemble.h"
#include "engram/decode/runner.h"
#include "engram/decode/search.h"
#include "engram/io/checkpoint.h"
#include "engram/models/loading.h"
#include "engram/nn/param_store.h"
#include "engram/models/speech/task.h"
#include "engram/viz/heatmap.h"

namespace engram::models {

const decode::OptionSet& speech_option_set() {
  static const decode::OptionSet set = [] {
    decode::OptionSet s{{"beam", "max_length", "precision", "batch", "stream"}, {}};
    s.defaults.max_length = SpeechDecodeOptions{}.max_length;
    return s;
  }();
  return set;
}

SpeechDecodeOptions speech_decode_options(const decode::DecodeOptions& o) {
  SpeechDecodeOptions s;
  s.beam = o.beam;
  s.batch_size = o.batch;
  s.max_length = o.max_length;
  return s;
}

decode::SearchOptions speech_search(const SpeechDecodeOptions& options) {
  decode::SearchOptions so;
  so.beam = options.beam;
  so.max_length = options.max_length;
  so.max_length_ratio = 0.0f;
  so.max_length_offset = options.max_length;
  return so;
}

std::vector<std::vector<int>> transcribe(const ModelSet<SpeechModel>& models, std::span<const data::audio::Features> utts,
                                         const SpeechDecodeOptions& options) {
  ENGRAM_CHECK(options.beam >= 1 && options.batch_size >= 1 && options.max_length >= 1,
               "speech: beam {}, batch_size {} and max_length {} must be >= 1", options.beam, options.batch_size,
               options.max_length);
  std::vector<const data::audio::Features*> all;
  for (const data::audio::Features& f : utts) all.push_back(&f);
  std::vector<std::vector<int>> out;
  for (const auto& h : transcribe_hyps(models, all, speech_search(options), options.batch_size))
    out.emplace_back(h[0].ids.begin(), h[0].ids.end());
  return out;
}

std::vector<std::vector<decode::Hypothesis>> transcribe_hyps(const ModelSet<SpeechModel>& models,
                                                             std::span<const data::audio::Features* const> utts,
                                                             const decode::SearchOptions& so, int batch_size,
                                                             std::span<const std::vector<int32_t>> prefixes) {
  core::Graph g(false);
  models.set_weights(g);
  std::optional<decode::EnsembleStepModel> ensemble;
  const decode::StepModel& model = models.decoder(ensemble);
  std::vector<int> lengths;
  for (const data::audio::Features* f : utts) lengths.push_back(static_cast<int>(f->frames));
  return decode::run_batched(g, model, lengths, batch_size, so, [&](std::span<const size_t> chunk) {
    std::vector<const data::audio::Features*> part;
    for (size_t i : chunk) part.push_back(utts[i]);
    decode::SourceBatch b = speech_source(part);
    if (!prefixes.empty())
      for (size_t i : chunk) b.prefixes.push_back(prefixes[i]);
    return b;
  });
}

int64_t edit_distance(std::span<const int> a, std::span<const int> b) {
  std::vector<int64_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    prev.swap(cur);
  }
  return prev[b.size()];
}

SpeechScore score_speech(std::span<const std::vector<int>> refs, std::span<const std::vector<int>> hyps) {
  ENGRAM_CHECK(refs.size() == hyps.size(), "speech: {} references and {} hypotheses", refs.size(), hyps.size());
  SpeechScore s;
  for (size_t i = 0; i < refs.size(); ++i) {
    ++s.utterances;
    s.ref_tokens += static_cast<int64_t>(refs[i].size());
    s.errors += edit_distance(refs[i], hyps[i]);
    s.exact += refs[i] == hyps[i] ? 1 : 0;
  }
  return s;
}

train::Metrics speech_metrics(const SpeechScore& s) { return {{"ter", s.ter()}, {"seq_acc", s.seq_acc()}}; }

std::string digits_text(std::span<const int> digits) {
  std::string out;
  for (int d : digits) {
    if (!out.empty()) out.push_back(' ');
    out += std::to_string(d);
  }
  return out;
}

std::unique_ptr<LoadedSpeechModel> load_speech_model(const std::filesystem::path& dir) {
  auto m = std::make_unique<LoadedSpeechModel>();
  m->model_dir = dir;
  m->model = load_checkpoint_model<SpeechModel, SpeechConfig>(dir);
  m->fbank = std::make_unique<data::audio::FbankComputer>(m->model->cfg().features);
  return m;
}

void LoadedSpeechModel::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> ms) {
  const auto front_end = [](const SpeechConfig& c) {
    return YAML::Dump(io::to_yaml(c.features)) + "\nstack: " + std::to_string(c.stack);
  };
  setup.set_members(*this, std::move(ms), [&](const LoadedModel& m) {
    ENGRAM_CHECK(front_end(dynamic_cast<const LoadedSpeechModel&>(m).model->cfg()) == front_end(model->cfg()),
                 "speech: ensemble member {} computes other features than {} (features.* and stack must be equal)",
                 m.dir().string(), model_dir.string());
  });
}

void transcribe_to_stdout(const LoadedSpeechModel& m, const std::vector<std::string>& files,
                          const SpeechDecodeOptions& o, bool one_speaker) {
  const auto print = [](const std::string& f, const std::string& text) {
    ENGRAM_CHECK(std::printf("%s\t%s\n", f.c_str(), text.c_str()) >= 0 && std::fflush(stdout) == 0,
                 "cannot write to standard output");
  };
  if (one_speaker) {  // every file first: their statistics are pooled
    std::vector<std::string> all = files;
    if (all.empty())
      for (const std::string& line : data::read_lines_or_stdin("-"))
        if (!line.empty()) all.push_back(line);
    if (all.empty()) return;
    const std::vector<std::string> texts = m.transcribe_speaker(all, o);
    for (size_t i = 0; i < all.size(); ++i) print(all[i], texts[i]);
    return;
  }
  if (!files.empty()) {
    for (const std::string& f : files) print(f, m.transcribe_file(f, o));
    return;
  }
  char buf[4096];  // one file at a time as its path arrives
  while (std::fgets(buf, sizeof buf, stdin)) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) print(line, m.transcribe_file(line, o));
  }
}

SpeechEval evaluate_speech(const LoadedSpeechModel& loaded, const std::string& set, const SpeechDecodeOptions& o,
                           const std::vector<std::string>& sets) {
  namespace fs = std::filesystem;
  SpeechEval e;
  for (const fs::path& p : {loaded.model_dir / "train.yaml", loaded.model_dir.parent_path() / "train.yaml"})
    if (fs::exists(p)) {
      e.train_yaml = p;
      break;
    }
  ENGRAM_CHECK(!e.train_yaml.empty(), "{}: no train.yaml in the model directory or its parent (the run's data config)",
               loaded.model_dir.string());
  const SpeechTrainConfig run = read_speech_config(io::load_yaml_file(e.train_yaml), e.train_yaml.string(), sets);
  run.data.validate();
  e.set = set;
  e.beam = o.beam;
  e.batch = o.batch_size;
  e.models = loaded.dir().string();
  e.split = run.data.test_speaker.empty() ? "upstream split" : "test speaker " + run.data.test_speaker;
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<SpeechUtterance> utts = load_speech_set(loaded.model->cfg(), run.data, set);
  e.feature_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<data::audio::Features> feats;
  for (const SpeechUtterance& u : utts) {
    feats.push_back(u.features);
    e.refs.push_back(u.digits);
    e.paths.push_back(u.path);
    e.audio_seconds += u.seconds;
  }
  t0 = std::chrono::steady_clock::now();
  e.hyps = transcribe(loaded.models(), feats, o);
  e.decode_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  e.score = score_speech(e.refs, e.hyps);
  return e;
}

std::string speech_eval_report(const SpeechEval& e) {
  const double total = e.feature_seconds + e.decode_seconds;
  return fmt::format(
      "{} on the {} set ({}, from {}), beam {}: {} utterances, {} digits\n"
      "digit error rate  {:.2f}% ({} edits)\n"
      "sequence accuracy {:.2f}% ({} / {})\n"
      "time              {:.3f} s for {:.1f} s of audio, {} per batch: {:.0f}x real time; reading + features {:.3f} s "
      "({:.0f}%), decoding {:.3f} s\n",
      e.models, e.set, e.split, e.train_yaml.string(), e.beam, e.score.utterances, e.score.ref_tokens,
      100 * e.score.ter(), e.score.errors, 100 * e.score.seq_acc(), e.score.exact, e.score.utterances, total,
      e.audio_seconds, e.batch, total > 0 ? e.audio_seconds / total : 0.0, e.feature_seconds,
      total > 0 ? 100 * e.feature_seconds / total : 0.0, e.decode_seconds);
}

std::string speech_errors_tsv(const SpeechEval& e) {
  std::string out;
  for (size_t i = 0; i < e.hyps.size(); ++i)
    if (e.hyps[i] != e.refs[i])
      out += fmt::format("{}\t{}\t{}\n", e.paths[i], digits_text(e.refs[i]), digits_text(e.hyps[i]));
  return out;
}

std::string LoadedSpeechModel::input_help() const {
  return fmt::format("FILE.wav: a 16-bit PCM mono recording at {} Hz (spoken digits)",
                     model->cfg().features.sample_rate);
}

std::string LoadedSpeechModel::transcribe_file(const std::string& path, const SpeechDecodeOptions& o) const {
  return transcribe_speaker(std::span(&path, 1), o)[0];
}

std::vector<std::string> LoadedSpeechModel::transcribe_speaker(std::span<const std::string> paths,
                                                              const SpeechDecodeOptions& o) const {
  std::vector<data::audio::Features> feats;
  feats.reserve(paths.size());
  for (const std::string& p : paths) {
    const data::audio::Waveform wave = data::audio::read_wav(p);
    try {
      feats.push_back(fbank->compute_unnormalised(wave));
    } catch (const Error& e) {  // a recording shorter than one window: the error names it
      throw Error(fmt::format("{}: {}", p, e.what()));
    }
  }
  std::vector<data::audio::Features*> all;
  for (auto& f : feats) all.push_back(&f);
  finish_speaker_features(model->cfg(), all);
  std::vector<std::string> out;
  for (const auto& digits : transcribe(models(), feats, o)) out.push_back(digits_text(digits));
  return out;
}

SpeechShow show_speech(const LoadedSpeechModel& loaded, const std::string& wav_path, const SpeechDecodeOptions& o) {
  const SpeechModel& model = *loaded.model;
  const SpeechConfig& cfg = model.cfg();
  const data::audio::Waveform wave = data::audio::read_wav(wav_path);
  data::audio::Features frames;
  try {
    frames = loaded.fbank->compute(wave);  // refuses a recording shorter than one window
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", wav_path, e.what()));
  }
  const data::audio::Features stacked = stack_frames(frames, cfg.stack);
  const std::vector<const data::audio::Features*> one = {&stacked};
  const decode::SourceBatch src = speech_source(one);
  core::Graph g(false);
  loaded.models().set_weights(g);  // the picture is the first model's alone
  decode::SearchOptions so = speech_search(o);
  so.alignments = true;
  const decode::Hypothesis h = decode::search(g, model, src, so)[0][0];
  const std::vector<int> digits(h.ids.begin(), h.ids.end());
  const data::audio::Features picture = spectrogram(cfg, *loaded.fbank, wave, &frames);  // log-mel, even under MFCCs
  const int t = static_cast<int>(picture.frames), m = picture.mel_bins;
  const int per_step = cfg.stack << cfg.pyramid;  // frames per encoder output step
  const int rows = static_cast<int>(h.alignment.size()) / std::max(1, h.src_len);
  viz::Heatmap hm;
  hm.title = fmt::format("{}: \"{}\"", std::filesystem::path(wav_path).filename().string(), digits_text(digits));
  hm.cols = t;
  hm.rows = rows + m;
  hm.show_values = false;
  hm.values.assign(static_cast<size_t>(hm.rows) * t, 0.0f);
  for (int r = 0; r < rows; ++r) {
    hm.row_labels.push_back(r < static_cast<int>(digits.size()) ? std::to_string(digits[r]) : "<eos>");
    const float* a = h.alignment.data() + static_cast<size_t>(r) * h.src_len;
    const float peak = std::max(1e-12f, *std::max_element(a, a + h.src_len));
    for (int f = 0; f < t; ++f) hm.values[static_cast<size_t>(r) * t + f] = a[std::min(f / per_step, h.src_len - 1)] / peak;
  }
  float lo = picture.data[0], hi = picture.data[0];
  for (int f = 0; f < t; ++f)
    for (int k = 0; k < m; ++k) lo = std::min(lo, picture.at(f, k)), hi = std::max(hi, picture.at(f, k));
  for (int k = m - 1; k >= 0; --k) {
    const int r = rows + (m - 1 - k);
    hm.row_labels.push_back(k % 5 == 0 ? fmt::format("mel {}", k) : "");
    for (int f = 0; f < t; ++f)
      hm.values[static_cast<size_t>(r) * t + f] = hi > lo ? (picture.at(f, k) - lo) / (hi - lo) : 0.0f;
  }
  for (int f = 0; f < t; ++f) hm.col_labels.push_back(f % 10 == 0 ? fmt::format("{:g} ms", f * cfg.features.frame_shift_ms) : "");
  return {viz::heatmap_svg(hm), digits_text(digits)};
}

std::string LoadedSpeechModel::run_line(const std::string& line) {
  std::string path = line;
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) path.pop_back();
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.front()))) path.erase(path.begin());
  ENGRAM_CHECK(!path.empty(), "speech: run_line takes the path of a WAV file");
  return transcribe_file(path);
}

}  // namespace engram::models
