// `engram speech transcribe`: the spoken digits of WAV files with a trained speech model;
// training is `engram train configs/fsdd-*.yaml`. A thin adapter over models/speech/.
//   engram speech transcribe -m DIR [--ensemble DIR ...] [--beam K] [FILE.wav ...]
//                                  one line per file: "FILE<TAB>digits"
//                                  (no files: WAV paths are read from stdin, one per line)
//                                  --one-speaker: the files are one speaker's (a model with
//                                  features.cmvn_scope speaker pools their statistics; read all first)
//   engram speech show -m DIR FILE.wav [--beam K] -o out.svg     spectrogram + each digit's attention
//   engram speech eval -m DIR [--ensemble DIR ...] [--split test|valid|train] [--beam K] [--set KEY=VALUE ...]
//                                  digit error rate and sequence accuracy on a set of the run's data
//                                  (--errors FILE: "path<TAB>spoken<TAB>heard" of each utterance heard wrong)
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/). --ensemble
// adds models decoded with -m's as one ensemble (their probabilities averaged; same front end).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/speech/eval.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

// The models of --ensemble, loaded.
struct Members {
  std::vector<std::unique_ptr<models::LoadedSpeechModel>> owned;
  std::vector<const models::LoadedSpeechModel*> list;
  explicit Members(const std::vector<std::string>& dirs)
      : owned(models::load_ensemble_members<models::LoadedSpeechModel>(dirs, "speech")) {
    for (const auto& m : owned) list.push_back(m.get());
  }
};

struct TranscribeArgs {
  std::string dir;
  std::vector<std::string> files, ensemble;
  int beam = 1, threads = 1;
  bool one_speaker = false;
};

void run_transcribe(const TranscribeArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedSpeechModel>(a.dir, "speech");
  const Members members(a.ensemble);
  const std::unique_ptr<decode::StepModel> model = models::speech_ensemble(*loaded, members.list);
  const auto one = [&](const std::string& f) {
    std::printf("%s\t%s\n", f.c_str(), loaded->transcribe_file(f, a.beam, model.get()).c_str());
    std::fflush(stdout);
  };
  std::vector<std::string> files = a.files;
  if (files.empty()) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, stdin)) {
      std::string line(buf);
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty()) continue;
      if (a.one_speaker)
        files.push_back(line);
      else
        one(line);
    }
  }
  if (!a.one_speaker) {
    if (!a.files.empty())
      for (const std::string& f : files) one(f);
    return;
  }
  if (files.empty()) return;
  const std::vector<std::string> texts = loaded->transcribe_speaker(files, a.beam, model.get());
  for (size_t i = 0; i < files.size(); ++i) std::printf("%s\t%s\n", files[i].c_str(), texts[i].c_str());
}

struct EvalArgs {
  std::string dir, set = "test", errors;
  std::vector<std::string> overrides, ensemble;
  int beam = 1, batch = 64, threads = 1;
};

void run_eval(const EvalArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedSpeechModel>(a.dir, "speech");
  const Members members(a.ensemble);
  const models::SpeechEval e = models::evaluate_speech(*loaded, a.set, a.beam, a.batch, a.overrides, members.list);
  std::string who = loaded->dir().string();
  for (const auto* m : members.list) who += " + " + m->dir().string();
  std::printf("%s on the %s set (%s, from %s), beam %d: %lld utterances, %lld digits\n", who.c_str(), e.set.c_str(), e.split.c_str(), e.train_yaml.string().c_str(), a.beam,
              static_cast<long long>(e.score.utterances), static_cast<long long>(e.score.ref_tokens));
  std::printf("digit error rate  %.2f%% (%lld edits)\n", 100 * e.score.ter(), static_cast<long long>(e.score.errors));
  std::printf("sequence accuracy %.2f%% (%lld / %lld)\n", 100 * e.score.seq_acc(),
              static_cast<long long>(e.score.exact), static_cast<long long>(e.score.utterances));
  const double total = e.feature_seconds + e.decode_seconds;
  std::printf("time              %.3f s for %.1f s of audio, %d per batch: %.0fx real time; reading + features %.3f s "
              "(%.0f%%), decoding %.3f s\n",
              total, e.audio_seconds, a.batch, total > 0 ? e.audio_seconds / total : 0.0, e.feature_seconds,
              total > 0 ? 100 * e.feature_seconds / total : 0.0, e.decode_seconds);
  if (!a.errors.empty()) {
    io::write_file_atomic(a.errors, models::speech_errors_tsv(e));
    std::printf("wrote %s: the %lld utterances heard wrong (path, spoken, heard)\n", a.errors.c_str(),
                static_cast<long long>(e.score.utterances - e.score.exact));
  }
}

struct ShowArgs {
  std::string dir, file, out = "speech.svg";
  int beam = 1, threads = 1;
};

void run_show(const ShowArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedSpeechModel>(a.dir, "speech");
  const models::SpeechShow s = models::show_speech(*loaded, a.file, a.beam);
  viz::write_svg(a.out, s.svg);
  std::printf("%s\t%s; wrote %s\n", a.file.c_str(), s.text.c_str(), a.out.c_str());
}

void add_ensemble_option(CLI::App* app, std::vector<std::string>& dirs) {
  app->add_option("--ensemble", dirs,
                  "another model (or run) directory decoded with -m's as one ensemble, probabilities averaged "
                  "(repeatable; same front end)")
      ->expected(1)
      ->take_all();
}

}  // namespace

void register_speech(CLI::App& app) {
  auto* sp = app.add_subcommand("speech", "speech recognition of spoken digits (transcribe, eval, show)");
  sp->require_subcommand(1);
  auto ta = std::make_shared<TranscribeArgs>();
  auto* tr = sp->add_subcommand("transcribe", "print the digits heard in each WAV file");
  add_model_option(tr, ta->dir);
  tr->add_option("files", ta->files, "16-bit PCM mono WAV files at the model's sample rate (none: paths on stdin)");
  tr->add_option("--beam", ta->beam, "beam size (1 = greedy)")->check(CLI::Range(1, 64));
  tr->add_flag("--one-speaker", ta->one_speaker,
               "the files are one speaker's: a model with features.cmvn_scope speaker normalises them by statistics "
               "pooled over all of them (else each by its own)");
  add_ensemble_option(tr, ta->ensemble);
  add_threads_option(tr, ta->threads);
  tr->callback([ta] { run_transcribe(*ta); });

  auto ea = std::make_shared<EvalArgs>();
  auto* ev = sp->add_subcommand("eval", "digit error rate and sequence accuracy on a set of the run's data");
  add_model_option(ev, ea->dir);
  ev->add_option("--split", ea->set, "test | valid | train")->check(CLI::IsMember({"test", "valid", "train"}));
  ev->add_option("--beam", ea->beam, "beam size (1 = greedy)")->check(CLI::Range(1, 64));
  ev->add_option("--batch", ea->batch, "utterances decoded together (1 = one file at a time)")->check(CLI::Range(1, 1024));
  ev->add_option("--errors", ea->errors, "write the utterances heard wrong to this file (path, spoken, heard; tab-separated)");
  add_ensemble_option(ev, ea->ensemble);
  ev->add_option("--set", ea->overrides, "override a key of the run's train.yaml, e.g. --set data.gap_ms=100 (repeatable)");
  add_threads_option(ev, ea->threads);
  ev->callback([ea] { run_eval(*ea); });

  auto sa = std::make_shared<ShowArgs>();
  auto* show = sp->add_subcommand("show", "SVG: the log-mel spectrogram with each output digit's attention above it");
  add_model_option(show, sa->dir);
  show->add_option("file", sa->file, "a WAV file")->required();
  show->add_option("--beam", sa->beam, "beam size (1 = greedy)")->check(CLI::Range(1, 64));
  add_output_option(show, sa->out, "SVG file to write");
  add_threads_option(show, sa->threads);
  show->callback([sa] { run_show(*sa); });
}

}  // namespace engram::cli
