// SpeechModel: finite-difference checks of the teacher-forced model (additive and location-aware
// attention, GRU and LSTM), greedy == beam 1 through the shared search, frame stacking, the
// edit-distance metrics, a learnability test on synthetic "spoken digit" features (seconds), and
// the checkpoint round trip through models::load_model + run_line on a committed tiny WAV.
// Dims: B batch, S encoder steps, F features, T output steps, V = 11 classes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "data/test_util.h"
#include "engram/core/grad_check.h"
#include "engram/core/ops.h"
#include "engram/decode/search.h"
#include "engram/io/checkpoint.h"
#include "engram/models/registry.h"
#include "engram/models/speech/eval.h"
#include "engram/models/speech/task.h"

namespace engram::models {
namespace speech_test {

using core::Graph;
using core::Var;
using data::testing::TempDir;
namespace audio = data::audio;

const std::string kGolden = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/audio/";

SpeechConfig tiny_config(SpeechAttention att, SpeechCell cell, int pyramid = 0) {
  SpeechConfig c;
  c.pyramid = pyramid;
  c.features.num_mel_bins = 4;
  c.stack = 1;
  c.embed_dim = 3;
  c.encoder_units = 3;
  c.cell = cell;
  c.attention = att;
  c.attn_dim = 3;
  c.conv_filters = 2;
  c.conv_width = 3;
  c.token_dim = 3;
  c.decoder_hidden = 4;
  c.readout_dim = 4;
  return c;
}

audio::Features random_features(int frames, int dim, core::Rng& rng) {
  audio::Features f;
  f.frames = frames;
  f.dim = dim;
  f.mel_bins = dim;
  for (int i = 0; i < frames * dim; ++i) f.data.push_back(rng.uniform(-1.0f, 1.0f));
  return f;
}

std::vector<core::GradTarget> all_params(nn::ParamStore& store) {
  std::vector<core::GradTarget> t;
  for (nn::ParamId id = 0; id < store.count(); ++id)
    t.push_back({store.name(id), store.value(id).data, store.grad(id).data, store.shape(id).numel()});
  return t;
}

Var flat(Var v) { return core::reshape(v, {static_cast<int>(v.numel())}); }

TEST(SpeechGradCheck, TeacherForcedDistributionsAndLoss) {
  struct V {
    const char* name;
    SpeechAttention att;
    SpeechCell cell;
    int pyramid = 0;
    float dropout = 0;
  };
  for (const V& v : {V{"location/gru", SpeechAttention::kLocation, SpeechCell::kGru},
                     V{"location/gru/dropout", SpeechAttention::kLocation, SpeechCell::kGru, 0, 0.3f},
                     V{"additive/lstm", SpeechAttention::kAdditive, SpeechCell::kLstm},
                     V{"location/lstm", SpeechAttention::kLocation, SpeechCell::kLstm},
                     V{"location/gru/pyramid2", SpeechAttention::kLocation, SpeechCell::kGru, 2}}) {
    core::Rng rng(5);
    SpeechConfig cfg = tiny_config(v.att, v.cell, v.pyramid);
    cfg.dropout = v.dropout;
    SpeechModel model(cfg, rng);
    const std::vector<audio::Features> u = {random_features(5, 4, rng), random_features(3, 4, rng)};
    const std::vector<const audio::Features*> ptrs = {&u[0], &u[1]};
    const decode::SourceBatch src = speech_source(ptrs);
    const std::vector<std::vector<int>> digits = {{3, 1}, {7}};
    // With dropout, the same masks at every evaluation (a fresh stream of one seed each time).
    auto f = [&](Graph& g) {
      core::Rng d1(11), d2(11);
      core::Rng* r1 = v.dropout > 0 ? &d1 : nullptr;
      core::Rng* r2 = v.dropout > 0 ? &d2 : nullptr;
      Var lp = model.log_probs(g, src, digits, nullptr, r1);
      return core::concat({flat(core::exp(lp)), flat(model.loss(g, src, digits, r2))}, 0);
    };
    if (v.dropout > 0) {  // the masks act in training and not without an Rng
      Graph g(false);
      core::Rng d(11);
      const float with = model.loss(g, src, digits, &d).data()[0];
      const float without = model.loss(g, src, digits).data()[0];
      EXPECT_GT(std::abs(with - without), 1e-4f) << v.name;
    }
    const core::GradCheckResult r = core::grad_check(f, all_params(model.params()), {.max_elements = 24});
    std::printf("%-16s %12.3e %8lld  %s\n", v.name, r.max_error, static_cast<long long>(r.checked), r.worst.c_str());
    EXPECT_GT(r.checked, 0) << v.name;
    EXPECT_LE(r.max_error, 1e-2) << v.name << ": " << r.worst;
  }
}

TEST(SpeechStep, GreedyEqualsBeamOneAndStepsMatchTeacherForcing) {
  for (int pyramid : {0, 1}) {
  SCOPED_TRACE(pyramid);
  core::Rng rng(3);
  SpeechModel model(tiny_config(SpeechAttention::kLocation, SpeechCell::kGru, pyramid), rng);
  std::vector<audio::Features> u;
  for (int n : {6, 4, 9}) u.push_back(random_features(n, 4, rng));
  std::vector<const audio::Features*> ptrs;
  for (const auto& x : u) ptrs.push_back(&x);
  const decode::SourceBatch src = speech_source(ptrs);
  Graph g(false);
  decode::SearchOptions o;
  o.max_length = 6;
  const auto greedy = decode::greedy_search(g, model, src, o);
  const auto beam = decode::beam_search(g, model, src, o);
  ASSERT_EQ(greedy.size(), 3u);
  for (size_t i = 0; i < greedy.size(); ++i) {
    EXPECT_EQ(greedy[i].ids, beam[i][0].ids) << i;
    EXPECT_NEAR(greedy[i].log_prob, beam[i][0].log_prob, 1e-4) << i;
  }
  // Stepping with the teacher's tokens gives the teacher-forced distributions.
  const std::vector<std::vector<int>> digits = {{2, 5}, {9, 0}, {4, 4}};
  Graph tg(false);
  const Var lp = model.log_probs(tg, src, digits, nullptr);  // [T*B, V]
  Graph sg(false);
  auto st = model.encode(sg, src);
  std::vector<int32_t> prev(3, model.go_id());
  for (int t = 0; t < 3; ++t) {
    const decode::StepOutput out = model.step(sg, *st, prev);
    for (int b = 0; b < 3; ++b) {
      for (int k = 0; k < kSpeechClasses; ++k)
        EXPECT_NEAR(out.log_probs.data[b * kSpeechClasses + k], lp.data()[(t * 3 + b) * kSpeechClasses + k], 1e-4)
            << t << " " << b << " " << k;
      if (t < 2) prev[b] = digits[b][t];
    }
  }
  }
}

TEST(SpeechFeatures, StackFramesAndMetrics) {
  audio::Features f;
  f.frames = 5;
  f.dim = 2;
  f.mel_bins = 2;
  for (int i = 0; i < 10; ++i) f.data.push_back(static_cast<float>(i));
  const audio::Features s = stack_frames(f, 2);
  EXPECT_EQ(s.frames, 3);
  EXPECT_EQ(s.dim, 4);
  EXPECT_EQ(s.data, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0}));
  EXPECT_EQ(edit_distance(std::vector<int>{1, 2, 3}, std::vector<int>{1, 3}), 1);
  EXPECT_EQ(edit_distance(std::vector<int>{}, std::vector<int>{4, 4}), 2);
  EXPECT_EQ(edit_distance(std::vector<int>{1, 2}, std::vector<int>{2, 1}), 2);
  const std::vector<std::vector<int>> refs = {{1}, {2, 3}}, hyps = {{1}, {2}};
  const SpeechScore sc = score_speech(refs, hyps);
  EXPECT_DOUBLE_EQ(sc.ter(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(sc.seq_acc(), 0.5);
  EXPECT_EQ(digits_text(std::vector<int>{3, 1, 4}), "3 1 4");
}

// Synthetic "recordings": each digit is a fixed 3-frame pattern (plus noise), utterances of 1-3
// digits separated by a quiet frame. Learnt to > 90% exact sequences through the Trainer.
std::vector<SpeechUtterance> synthetic(int count, uint64_t seed, int dim) {
  core::Rng proto_rng(99);
  std::vector<std::vector<float>> proto(10);
  for (auto& p : proto)
    for (int i = 0; i < 3 * dim; ++i) p.push_back(proto_rng.uniform(-1.0f, 1.0f));
  core::Rng rng(seed);
  std::vector<SpeechUtterance> out;
  for (int n = 0; n < count; ++n) {
    SpeechUtterance u;
    const int len = 1 + static_cast<int>(rng.below(3));
    u.features.dim = u.features.mel_bins = dim;
    for (int k = 0; k < len; ++k) {
      const int d = static_cast<int>(rng.below(10));
      u.digits.push_back(d);
      for (float x : proto[d]) u.features.data.push_back(x + rng.uniform(-0.2f, 0.2f));
      for (int i = 0; i < dim; ++i) u.features.data.push_back(rng.uniform(-0.1f, 0.1f));
    }
    u.features.frames = static_cast<int64_t>(u.features.data.size()) / dim;
    out.push_back(std::move(u));
  }
  return out;
}

TEST(SpeechLearnability, SyntheticDigitStrings) {
  TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  SpeechTrainConfig cfg;
  cfg.speech.features.num_mel_bins = 8;
  cfg.speech.stack = 1;
  cfg.speech.embed_dim = 32;
  cfg.speech.encoder_units = 32;
  cfg.speech.decoder_hidden = 32;
  cfg.speech.readout_dim = 32;
  cfg.data.batch_size = 16;
  cfg.train.max_epochs = 10;
  cfg.train.log_every = 100000;
  cfg.train.optimizer.name = "adam";
  cfg.train.optimizer.lr = 3e-3f;
  cfg.train.clip.global_norm = 5.0f;
  cfg.train.run_dir = dir.file("run");
  SpeechTrainTask task(cfg, synthetic(400, 1, 8), synthetic(100, 2, 8));
  train::Trainer trainer(task, cfg.train);
  const train::TrainSummary s = trainer.run();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("synthetic digit strings: best seq_acc %.3f after %.1f s (%lld steps)\n", s.best_metric, secs,
              static_cast<long long>(s.steps));
  EXPECT_GT(s.best_metric, 0.9);
  // best/ loads through the registry and decodes the same.
  std::unique_ptr<LoadedSpeechModel> m = load_model_as<LoadedSpeechModel>(dir.file("run"), "speech");
  std::vector<audio::Features> feats;
  std::vector<std::vector<int>> refs;
  for (const auto& u : task.valid_set()) {
    feats.push_back(u.features);
    refs.push_back(u.digits);
  }
  EXPECT_NEAR(score_speech(refs, transcribe(*m->model, feats)).seq_acc(), s.best_metric, 1e-9);
}

TEST(SpeechCheckpoint, RoundTripThroughTheRegistryAndRunLine) {
  TempDir dir;
  core::Rng rng(11);
  SpeechConfig cfg;
  cfg.embed_dim = cfg.encoder_units = cfg.decoder_hidden = cfg.readout_dim = 8;
  SpeechModel model(cfg, rng);
  const std::string path = dir.file("model");
  io::save_checkpoint(path, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  std::unique_ptr<LoadedModel> m = load_model(path);
  EXPECT_EQ(m->family(), "speech");
  EXPECT_NE(m->input_help().find("8000 Hz"), std::string::npos);
  const std::string wav = kGolden + "synth8k.wav";
  const audio::FbankComputer fbank(cfg.features);
  const audio::Features f = speech_features(cfg, fbank, audio::read_wav(wav));
  EXPECT_EQ(f.dim, 23 * 3);
  EXPECT_EQ(f.frames, 10);  // 2400 samples: 1 + (2400 - 200) / 80 = 28 frames, stacked by 3: ceil(28 / 3)
  const std::string expected = digits_text(transcribe(model, std::span(&f, 1))[0]);
  EXPECT_EQ(m->run_line(wav), expected);
  EXPECT_EQ(m->run_line("  " + wav + "\n"), expected);
  EXPECT_THROW(m->run_line(""), Error);
  EXPECT_THROW(m->run_line(kGolden + "stereo.wav"), Error);
  EXPECT_THROW(m->run_line(kGolden + "no_such.wav"), Error);
  // The attention picture: one row per output token (and <eos>) above the 23 mel rows.
  auto* sm = dynamic_cast<LoadedSpeechModel*>(m.get());
  ASSERT_NE(sm, nullptr);
  const SpeechShow show = show_speech(*sm, wav, {.beam = 2});
  EXPECT_EQ(show.text, sm->transcribe_file(wav, {.beam = 2}));
  const std::vector<std::string> files = {wav, wav};
  EXPECT_EQ(sm->transcribe_speaker(files, {.beam = 2}), (std::vector<std::string>{show.text, show.text}));
  // -m and --ensemble of the same model: one decoder averaging two equal members hears the same.
  const auto ens = load_model_as<LoadedSpeechModel>(path, "speech");
  ens->set_ensemble(load_ensemble_members<LoadedModel>({path}, "speech"));
  ASSERT_EQ(ens->setup.members(), 1);
  EXPECT_EQ(ens->transcribe_file(wav, {.beam = 2}), show.text);
  EXPECT_THROW(load_ensemble_members<LoadedModel>({dir.file("no_such_model")}, "speech"), Error);
  EXPECT_EQ(show.svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(show.svg.find("synth8k.wav"), std::string::npos);
  EXPECT_NE(show.svg.find(">mel 0<"), std::string::npos);
}

// A canonical 16-bit PCM mono WAV of n samples (a ramp) at `rate` Hz.
std::string pcm16_wav(int rate, int n) {
  auto u32 = [](uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; };
  auto u16 = [](uint16_t v) { return std::string{char(v), char(v >> 8)}; };
  std::string data;
  for (int i = 0; i < n; ++i) data += u16(static_cast<uint16_t>(i * 97));
  return "RIFF" + u32(36 + static_cast<uint32_t>(data.size())) + "WAVEfmt " + u32(16) + u16(1) + u16(1) +
         u32(rate) + u32(rate * 2) + u16(2) + u16(16) + "data" + u32(static_cast<uint32_t>(data.size())) + data;
}

// A recording shorter than one analysis window (25 ms: 200 samples at 8 kHz) has no frame: the
// shared feature path refuses it, so transcription, `speech show` and the HTTP route all do; it
// used to be padded to one zero frame and transcribed as a digit.
TEST(SpeechFeatures, AudioShorterThanOneWindowIsRefused) {
  TempDir dir;
  core::Rng rng(13);
  SpeechConfig cfg;
  cfg.embed_dim = cfg.encoder_units = cfg.decoder_hidden = cfg.readout_dim = 8;
  SpeechModel model(cfg, rng);
  const std::string path = dir.file("model");
  io::save_checkpoint(path, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  std::unique_ptr<LoadedModel> m = load_model(path);
  auto* sm = dynamic_cast<LoadedSpeechModel*>(m.get());
  ASSERT_NE(sm, nullptr);
  const std::string short_wav = dir.file("short.wav"), ok_wav = dir.file("ok.wav");
  std::ofstream(short_wav, std::ios::binary) << pcm16_wav(8000, 199);
  std::ofstream(ok_wav, std::ios::binary) << pcm16_wav(8000, 200);
  const std::string why = "is shorter than one analysis window (200 samples, 25 ms)";
  auto expect_refused = [&](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("short.wav"), std::string::npos) << e.what();
    }
  };
  expect_refused([&] { sm->transcribe_file(short_wav); });
  expect_refused([&] { m->run_line(short_wav); });
  expect_refused([&] { show_speech(*sm, short_wav); });
  const std::vector<std::string> both = {ok_wav, short_wav};
  expect_refused([&] { sm->transcribe_speaker(both); });
  const audio::FbankComputer fbank(cfg.features);
  EXPECT_THROW(speech_features(cfg, fbank, audio::read_wav(short_wav)), Error);  // the route's path
  EXPECT_EQ(speech_features(cfg, fbank, audio::read_wav(ok_wav)).frames, 1);     // one window: one frame
  EXPECT_NO_THROW(sm->transcribe_file(ok_wav));
}

// An MFCC model (features.num_ceps) reads 13 cepstra per frame, and its picture is still the 23
// log-mel channels of the same frames: the log-mel model's features, exactly.
TEST(SpeechCheckpoint, MfccModelShowsTheLogMelSpectrogram) {
  TempDir dir;
  core::Rng rng(12);
  SpeechConfig cfg;
  cfg.embed_dim = cfg.encoder_units = cfg.decoder_hidden = cfg.readout_dim = 8;
  cfg.features.num_ceps = 13;
  SpeechModel model(cfg, rng);
  const std::string path = dir.file("model");
  io::save_checkpoint(path, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  std::unique_ptr<LoadedModel> m = load_model(path);
  const std::string wav = kGolden + "synth8k.wav";
  const audio::Waveform wave = audio::read_wav(wav);
  const audio::FbankComputer fbank(cfg.features);
  const audio::Features f = speech_features(cfg, fbank, wave);
  EXPECT_EQ(f.dim, 13 * 3);
  SpeechConfig mel_cfg = cfg;
  mel_cfg.features.num_ceps = 0;
  const audio::Features mel = audio::FbankComputer(mel_cfg.features).compute(wave);
  const audio::Features pic = spectrogram(cfg, fbank, wave);
  EXPECT_EQ(pic.mel_bins, 23);
  EXPECT_FALSE(pic.cepstral);
  EXPECT_EQ(pic.data, mel.data);
  const audio::Features mfcc = fbank.compute(wave);
  EXPECT_EQ(spectrogram(cfg, fbank, wave, &mfcc).data, mel.data);  // the caller's cepstra are not the picture
  EXPECT_EQ(spectrogram(mel_cfg, audio::FbankComputer(mel_cfg.features), wave).data, mel.data);
  auto* sm = dynamic_cast<LoadedSpeechModel*>(m.get());
  ASSERT_NE(sm, nullptr);
  const SpeechShow show = show_speech(*sm, wav);
  EXPECT_NE(show.svg.find(">mel 20<"), std::string::npos);  // 23 mel rows, not 13 cepstra
}

TEST(SpeechData, DigitStringsJoinOneSpeakersRecordings) {
  SpeechConfig cfg;
  std::vector<audio::FsddRecording> recs = {{kGolden + "synth8k.wav", 4, "a", 0}, {kGolden + "synth8k.wav", 2, "a", 1},
                                            {kGolden + "synth8k.wav", 9, "b", 0}};
  const auto strings = make_digit_strings(cfg, recs, {.count = 20, .min_digits = 2, .max_digits = 2, .gap_ms = 50, .seed = 5});
  ASSERT_EQ(strings.size(), 20u);
  for (const auto& u : strings) {
    ASSERT_EQ(u.digits.size(), 2u);
    const bool b = u.digits[0] == 9;
    EXPECT_EQ(u.digits[1] == 9, b) << "one speaker per string";
    // 2 x 2400 samples + 400 of silence: 1 + (5200 - 200) / 80 = 63 frames, stacked by 3.
    EXPECT_EQ(u.features.frames, 21);
    EXPECT_DOUBLE_EQ(u.seconds, 5200.0 / 8000);
  }
  const DigitStringSpec spec{.count = 20, .min_digits = 2, .max_digits = 2, .gap_ms = 50, .seed = 5};
  EXPECT_EQ(make_digit_strings(cfg, recs, spec)[7].digits, strings[7].digits) << "deterministic";
  // Noisy strings: clean or at 10 dB, the recordings joined unchanged (the noise has its own stream).
  DigitStringSpec noisy_spec = spec;
  noisy_spec.noise_snr_db = {10.0f};
  const auto noisy = make_digit_strings(cfg, recs, noisy_spec);
  int with_noise = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_EQ(noisy[i].digits, strings[i].digits) << i;
    const bool added = noisy[i].speaker.ends_with("+10dB");
    with_noise += added;
    EXPECT_EQ(noisy[i].features.data == strings[i].features.data, !added) << i;
  }
  EXPECT_GT(with_noise, 0);
  EXPECT_LT(with_noise, 20);
}

// Pauses drawn from [gap_ms, gap_max_ms] and filled with noise at the recording's floor; the
// recordings joined are those of a fixed pause (their own random stream).
TEST(SpeechData, DigitStringPausesDrawnAndFilledWithNoise) {
  SpeechConfig cfg;
  cfg.stack = 1;
  const std::vector<audio::FsddRecording> recs = {{kGolden + "synth8k.wav", 4, "a", 0},
                                                  {kGolden + "synth8k.wav", 2, "a", 1}};
  const auto fixed = make_digit_strings(cfg, recs, {.count = 30, .min_digits = 1, .max_digits = 4, .gap_ms = 50, .seed = 5});
  const auto drawn = make_digit_strings(
      cfg, recs, {.count = 30, .min_digits = 1, .max_digits = 4, .gap_ms = 20, .gap_max_ms = 100, .gap_noise = true, .seed = 5});
  bool differs = false;
  for (size_t i = 0; i < fixed.size(); ++i) {
    EXPECT_EQ(drawn[i].digits, fixed[i].digits) << i;
    const double pauses = static_cast<double>(fixed[i].digits.size() - 1);
    const double audio = 2400.0 * static_cast<double>(fixed[i].digits.size());  // samples of the recordings
    const double paused = drawn[i].seconds * 8000 - audio;
    EXPECT_GE(paused, pauses * 160 - 1e-6) << i;  // each pause 20..100 ms = 160..800 samples
    EXPECT_LE(paused, pauses * 800 + 1e-6) << i;
    if (pauses > 0 && std::abs(paused - pauses * 400) > 1) differs = true;
  }
  EXPECT_TRUE(differs) << "pauses of 50 ms every time";
  // Noise, not silence: a silent pause has frames at the log floor (log 1e-10 = -23.03 before
  // CMVN), a noisy one none.
  const auto lowest = [&](const audio::Features& f) { return *std::min_element(f.data.begin(), f.data.end()); };
  audio::FeatureConfig raw = cfg.features;
  raw.cmvn = audio::Cmvn::kNone;
  SpeechConfig raw_cfg = cfg;
  raw_cfg.features = raw;
  const auto silent = make_digit_strings(raw_cfg, recs, {.count = 10, .min_digits = 3, .max_digits = 3, .gap_ms = 50, .seed = 5});
  const auto noisy = make_digit_strings(
      raw_cfg, recs, {.count = 10, .min_digits = 3, .max_digits = 3, .gap_ms = 50, .gap_noise = true, .seed = 5});
  for (size_t i = 0; i < silent.size(); ++i) {
    EXPECT_NEAR(lowest(silent[i].features), std::log(1e-10f), 1e-3);
    EXPECT_GT(lowest(noisy[i].features), std::log(1e-10f) + 1);
  }
  SpeechDataConfig d;
  d.gap_ms = 50;
  d.gap_max_ms = 40;
  EXPECT_NE(data::testing::error_of([&] { d.validate(); }).find("gap_max_ms 40 0 or in [gap_ms, 10000]"),
            std::string::npos);
}

// features.cmvn_scope speaker: every column has mean 0 and variance 1 over each speaker's
// utterances together (a speed copy is another speaker), not over each utterance.
TEST(SpeechData, SpeakerCmvnPoolsEachSpeakersUtterances) {
  SpeechConfig cfg;
  cfg.stack = 1;
  cfg.features.cmvn_scope = audio::CmvnScope::kSpeaker;
  const std::vector<audio::FsddRecording> recs = {{kGolden + "synth8k.wav", 4, "a", 0},
                                                  {kGolden + "synth8k.wav", 2, "a", 1},
                                                  {kGolden + "synth8k.wav", 9, "b", 0}};
  std::vector<SpeechUtterance> utts = make_digit_strings(
      cfg, recs, {.count = 12, .min_digits = 1, .max_digits = 3, .gap_ms = 20, .gap_max_ms = 100, .gap_noise = true, .seed = 5});
  const auto fast = make_digit_strings(cfg, recs,
                                       {.count = 12, .min_digits = 1, .max_digits = 3, .gap_ms = 20, .gap_max_ms = 100,
                                        .gap_noise = true, .seed = 5, .speeds = {1.25f}});
  utts.insert(utts.end(), fast.begin(), fast.end());
  std::map<std::string, std::vector<const audio::Features*>> by;
  for (const auto& u : utts) by[u.speaker].push_back(&u.features);
  EXPECT_EQ(by.size(), 4u);  // a, b, a@1.25, b@1.25
  EXPECT_TRUE(by.count("a@1.25"));
  bool some_utterance_off = false;
  for (const auto& [speaker, list] : by) {
    const int dim = list[0]->dim;
    for (int j = 0; j < dim; ++j) {
      double sum = 0, sq = 0, n = 0;
      for (const auto* f : list)
        for (int64_t t = 0; t < f->frames; ++t) sum += f->at(t, j), sq += f->at(t, j) * f->at(t, j), n += 1;
      EXPECT_NEAR(sum / n, 0.0, 1e-4) << speaker << " " << j;
      EXPECT_NEAR(sq / n, 1.0, 1e-3) << speaker << " " << j;
      for (const auto* f : list) {
        double m = 0;
        for (int64_t t = 0; t < f->frames; ++t) m += f->at(t, j);
        if (std::abs(m / static_cast<double>(f->frames)) > 0.05) some_utterance_off = true;
      }
    }
  }
  EXPECT_TRUE(some_utterance_off) << "every utterance normalised by its own statistics";
  // Single recordings too, and a stacked model's input is the pooled features stacked.
  const auto singles = load_speech_utterances(cfg, recs);
  EXPECT_EQ(singles[0].speaker, "a");
  EXPECT_EQ(load_speech_utterances(cfg, recs, 1.25f)[2].speaker, "b@1.25");
  const auto noisy = load_speech_utterances(cfg, recs, 1.25f, 20.0f);
  EXPECT_EQ(noisy[2].speaker, "b@1.25+20dB") << "a noisy copy is a speaker of its own";
  EXPECT_NE(noisy[2].features.data, load_speech_utterances(cfg, recs, 1.25f)[2].features.data);
  SpeechConfig stacked = cfg;
  stacked.stack = 3;
  EXPECT_EQ(load_speech_utterances(stacked, recs)[0].features.data, stack_frames(singles[0].features, 3).data);
}

TEST(SpeechEval, ErrorsTsvAndReport) {
  SpeechEval e;
  e.paths = {"a.wav", "b.wav+c.wav", "d.wav"};
  e.refs = {{7}, {3, 1}, {0}};
  e.hyps = {{7}, {3}, {8, 8}};
  EXPECT_EQ(speech_errors_tsv(e), "b.wav+c.wav\t3 1\t3\nd.wav\t0\t8 8\n");
  e.hyps = e.refs;
  EXPECT_EQ(speech_errors_tsv(e), "");
  // The report's lines, from the scores and times by hand: 2 edits of 4 digits, 2 of 3 exact,
  // 1.5 s of audio in 0.25 + 0.5 s (2x real time, features a third).
  e.models = "runs/a + runs/b";
  e.set = "test";
  e.split = "test speaker theo";
  e.train_yaml = "runs/a/train.yaml";
  e.beam = 4;
  e.batch = 8;
  e.score = {.utterances = 3, .ref_tokens = 4, .errors = 2, .exact = 2};
  e.audio_seconds = 1.5;
  e.feature_seconds = 0.25;
  e.decode_seconds = 0.5;
  EXPECT_EQ(speech_eval_report(e),
            "runs/a + runs/b on the test set (test speaker theo, from runs/a/train.yaml), beam 4: 3 utterances, 4 digits\n"
            "digit error rate  50.00% (2 edits)\n"
            "sequence accuracy 66.67% (2 / 3)\n"
            "time              0.750 s for 1.5 s of audio, 8 per batch: 2x real time; reading + features 0.250 s (33%), "
            "decoding 0.500 s\n");
}

TEST(SpeechDecode, BatchesByLengthKeepTheCallersOrder) {
  // transcribe() batches utterances of similar lengths together; the results must come back in
  // the order given, equal to decoding one utterance at a time.
  core::Rng rng(9);
  const SpeechModel model(tiny_config(SpeechAttention::kLocation, SpeechCell::kGru), rng);
  std::vector<audio::Features> u;
  for (int frames : {9, 2, 7, 3, 12, 5, 1}) u.push_back(random_features(frames, 4, rng));
  SpeechDecodeOptions one, batched;
  one.batch_size = 1;
  batched.batch_size = 3;
  one.max_length = batched.max_length = 6;
  const auto a = transcribe(model, u, one), b = transcribe(model, u, batched);
  ASSERT_EQ(a.size(), u.size());
  EXPECT_EQ(a, b);
  std::set<std::vector<int>> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 1u) << "an untrained model's outputs still differ per input, so order matters";
}

// transcribe_hyps with a target prefix per utterance (the transcribe route's batches): each
// utterance's output starts with its own prefix, batched by length or one at a time alike.
TEST(SpeechDecode, EachUtteranceKeepsItsOwnPrefixInABatch) {
  core::Rng rng(9);
  const SpeechModel model(tiny_config(SpeechAttention::kLocation, SpeechCell::kGru), rng);
  std::vector<audio::Features> u;
  for (int frames : {9, 2, 7, 3}) u.push_back(random_features(frames, 4, rng));
  std::vector<const audio::Features*> ptrs;
  for (const audio::Features& f : u) ptrs.push_back(&f);
  const std::vector<std::vector<int32_t>> prefixes = {{1, 2}, {3}, {}, {4, 5, 6}};
  SpeechDecodeOptions o;
  o.max_length = 6;
  const decode::SearchOptions so = speech_search(o);
  const auto batched = transcribe_hyps(model, ptrs, so, 3, prefixes);
  ASSERT_EQ(batched.size(), u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    const std::vector<int32_t>& got = batched[i].at(0).ids;
    ASSERT_GE(got.size(), prefixes[i].size()) << i;
    EXPECT_TRUE(std::equal(prefixes[i].begin(), prefixes[i].end(), got.begin())) << "utterance " << i;
    EXPECT_EQ(got, transcribe_hyps(model, {&ptrs[i], 1}, so, 1, {&prefixes[i], 1}).at(0).at(0).ids) << i;
  }
}

TEST(SpeechDecode, EnsembleOfTwoModelsAndItsFrontEndCheck) {
  // Two differently initialised models as one ensemble (decode/ensemble.h): a model twice gives
  // that model's transcriptions; the pair gives the transcriptions of their averaged
  // probabilities, which (untrained) differ from either member's somewhere; a member with
  // another front end is refused.
  TempDir dir;
  const auto save = [&](const SpeechConfig& cfg, uint64_t seed, const std::string& name) {
    core::Rng rng(seed);
    SpeechModel model(cfg, rng);
    io::save_checkpoint(dir.file(name), {.model_name = model.name(), .config = model.config(), .params = &model.params()});
    return load_speech_model(dir.file(name));
  };
  SpeechConfig cfg;
  cfg.embed_dim = cfg.encoder_units = cfg.decoder_hidden = cfg.readout_dim = 8;
  const auto a = save(cfg, 1, "a"), b = save(cfg, 2, "b");
  core::Rng rng(5);
  std::vector<audio::Features> u;
  for (int frames : {9, 4, 12, 6, 3, 10, 7, 5}) u.push_back(random_features(frames, cfg.input_dim(), rng));
  const auto members = [&](const std::string& name) {
    std::vector<std::unique_ptr<LoadedModel>> v;
    v.push_back(load_speech_model(dir.file(name)));
    return v;
  };
  const auto alone = transcribe(*a->model, u);
  a->set_ensemble(members("a"));
  EXPECT_EQ(transcribe(a->models(), u), alone);
  a->set_ensemble(members("b"));
  const auto pair = transcribe(a->models(), u);
  EXPECT_TRUE(pair != alone || pair != transcribe(*b->model, u));
  SpeechConfig stacked = cfg;
  stacked.stack = 2;
  save(stacked, 3, "c");
  try {
    a->set_ensemble(members("c"));
    FAIL() << "a member with stack 2 joined a model with stack 3";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("computes other features"), std::string::npos) << e.what();
  }
}

// The recordings of 2 speakers x 2 digits x 12 repetitions, as list_fsdd would give them.
std::vector<audio::FsddRecording> fake_listing() {
  std::vector<audio::FsddRecording> all;
  for (const char* sp : {"a", "b"})
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < 12; ++i) all.push_back({"", d, sp, i});
  return all;
}

TEST(SpeechData, ValidationRepetitionsAreHeldOutOfTraining) {
  SpeechDataConfig d;
  // Upstream split: indices 0-4 test; valid_reps 3 holds out indices 5-7 of every speaker/digit.
  d.valid_reps = 3;
  FsddSplit s = split_fsdd(fake_listing(), d);
  EXPECT_EQ(s.test.size(), 2u * 2 * 5);
  EXPECT_EQ(s.valid.size(), 2u * 2 * 3);
  EXPECT_EQ(s.train.size(), 2u * 2 * 4);
  for (const auto& r : s.test) EXPECT_LT(r.index, 5);
  for (const auto& r : s.valid) EXPECT_TRUE(r.index >= 5 && r.index < 8);
  for (const auto& r : s.train) EXPECT_GE(r.index, 8);
  // valid_offset 4 moves the validation block to indices 9-11 (a cross-validation fold); 5-8 train.
  d.valid_offset = 4;
  s = split_fsdd(fake_listing(), d);
  EXPECT_EQ(s.test.size(), 2u * 2 * 5);
  EXPECT_EQ(s.valid.size(), 2u * 2 * 3);
  EXPECT_EQ(s.train.size(), 2u * 2 * 4);
  for (const auto& r : s.valid) EXPECT_TRUE(r.index >= 9 && r.index < 12);
  for (const auto& r : s.train) EXPECT_TRUE(r.index >= 5 && r.index < 9);
  d.valid_offset = 0;
  // A held-out speaker: all of b is test; indices 0-2 of a are validation.
  d.test_speaker = "b";
  s = split_fsdd(fake_listing(), d);
  EXPECT_EQ(s.test.size(), 24u);
  EXPECT_EQ(s.valid.size(), 6u);
  EXPECT_EQ(s.train.size(), 18u);
  for (const auto& r : s.test) EXPECT_EQ(r.speaker, "b");
  for (const auto& r : s.valid) EXPECT_TRUE(r.speaker == "a" && r.index < 3);
  for (const auto& r : s.train) EXPECT_TRUE(r.speaker == "a" && r.index >= 3);
  // valid_reps 0: no validation recordings (validation runs on the test set, as before).
  d.valid_reps = 0;
  s = split_fsdd(fake_listing(), d);
  EXPECT_TRUE(s.valid.empty());
  EXPECT_EQ(s.train.size(), 24u);
  // A validation set that leaves nothing to train on is an error.
  d.valid_reps = 12;
  EXPECT_NE(data::testing::error_of([&] { split_fsdd(fake_listing(), d); }).find("0 training"), std::string::npos);
}

TEST(SpeechData, OptionsOutOfRangeAreErrors) {
  SpeechDataConfig d;
  d.speed_perturb = {0.9f, 1.0f};
  EXPECT_NE(data::testing::error_of([&] { d.validate(); }).find("speed_perturb 1 must be in [0.5, 2]"),
            std::string::npos);
  d.speed_perturb = {2.5f};
  EXPECT_NE(data::testing::error_of([&] { d.validate(); }).find("speed_perturb 2.5"), std::string::npos);
  d.speed_perturb = {0.9f, 1.1f};
  d.valid_reps = 46;
  EXPECT_NE(data::testing::error_of([&] { d.validate(); }).find("valid_reps 46 must be in [0, 45]"), std::string::npos);
  d.valid_reps = 5;
  d.valid_offset = 41;
  EXPECT_NE(data::testing::error_of([&] { d.validate(); }).find("valid_offset 41 must be >= 0 with valid_offset + valid_reps (46) <= 45"),
            std::string::npos);
  d.valid_offset = -1;
  EXPECT_NE(data::testing::error_of([&] { d.validate(); }).find("valid_offset -1"), std::string::npos);
  d.valid_offset = 40;
  d.validate();
  d.noise_snr_db = {20.0f, -11.0f};
  EXPECT_EQ(data::testing::error_of([&] { d.validate(); }), "speech data: noise_snr_db -11 must be in [-10, 100] dB");
  d.noise_snr_db = {std::numeric_limits<float>::infinity()};
  EXPECT_EQ(data::testing::error_of([&] { d.validate(); }), "speech data: noise_snr_db inf must be in [-10, 100] dB");
  d.noise_snr_db = {-10.0f, 100.0f};
  d.validate();
}

TEST(SpeechData, SpeedCopiesChangeTheFrameCount) {
  SpeechConfig cfg;
  const std::vector<audio::FsddRecording> recs = {{kGolden + "synth8k.wav", 4, "a", 0}};
  const auto orig = load_speech_utterances(cfg, recs);
  const auto fast = load_speech_utterances(cfg, recs, 1.25f);
  // 2400 samples -> 1 + (2400 - 200) / 80 = 28 frames, stacked by 3 -> 10; at 1.25x:
  // floor(2399 / 1.25) + 1 = 1920 samples -> 1 + (1920 - 200) / 80 = 22 frames -> 8.
  EXPECT_EQ(orig[0].features.frames, 10);
  EXPECT_EQ(fast[0].features.frames, 8);
  EXPECT_EQ(fast[0].digits, orig[0].digits);
  EXPECT_DOUBLE_EQ(orig[0].seconds, 2400.0 / 8000);  // the audio played, not the frames' span
  EXPECT_DOUBLE_EQ(fast[0].seconds, 1920.0 / 8000);
}

}  // namespace speech_test
}  // namespace engram::models
