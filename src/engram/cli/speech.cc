// `engram speech transcribe`: the spoken digits of WAV files with a trained speech model;
// training is `engram train configs/fsdd-*.yaml`. A thin adapter over models/speech/.
//   engram speech transcribe -m DIR [--ensemble DIR ...] [--beam K] [--max-length N] [FILE.wav ...]
//                                  one line per file: "FILE<TAB>digits"
//                                  (no files: WAV paths are read from stdin, one per line)
//                                  --one-speaker: the files are one speaker's (a model with
//                                  features.cmvn_scope speaker pools their statistics; read all first)
//   engram speech show -m DIR FILE.wav [--beam K] -o out.svg     spectrogram + each digit's attention
//   engram speech eval -m DIR [--ensemble DIR ...] [--split test|valid|train] [--beam K] [--batch N] [--set KEY=VALUE ...]
//                                  digit error rate and sequence accuracy on a set of the run's data
//                                  (--errors FILE: "path<TAB>spoken<TAB>heard" of each utterance heard wrong)
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/). --ensemble
// adds models decoded with -m's as one ensemble (their probabilities averaged; same front end).
// The decoding flags (--beam, --max-length, --batch) are the decode-options schema's
// (decode/options.h, models::speech_option_set).
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

// The speech family's decode options from the schema's flags (decode/options.h: beam, max_length,
// batch, precision), checked once as on every front end; `m` (-m's model) gets the precision's
// weights and the options point to them.
models::SpeechDecodeOptions speech_flags(const CLI::App* cmd, decode::DecodeOptions d, models::LoadedSpeechModel& m) {
  d = m.decode_options(d, finish_decode_flags(cmd, d, models::speech_option_set()));
  m.set_precision(d.precision);
  return m.with_setup(models::speech_decode_options(d));
}

struct TranscribeArgs {
  std::string dir;
  std::vector<std::string> files, ensemble;
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();
  const CLI::App* cmd = nullptr;
  int threads = 1;
  bool one_speaker = false;
};

void run_transcribe(const TranscribeArgs& a) {
  use_threads(a.threads);
  models::LoadedSpeechEnsemble m(a.dir, a.ensemble);
  const models::SpeechDecodeOptions o = speech_flags(a.cmd, *a.decode, *m.first);
  models::transcribe_to_stdout(m, a.files, o, a.one_speaker);
}

struct EvalArgs {
  std::string dir, set = "test", errors;
  std::vector<std::string> overrides, ensemble;
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();
  const CLI::App* cmd = nullptr;
  int threads = 1;
};

void run_eval(const EvalArgs& a) {
  use_threads(a.threads);
  models::LoadedSpeechEnsemble m(a.dir, a.ensemble);
  const models::SpeechDecodeOptions o = speech_flags(a.cmd, *a.decode, *m.first);
  const models::SpeechEval e = models::evaluate_speech(*m.first, a.set, o, a.overrides, m.others);
  std::fputs(models::speech_eval_report(e).c_str(), stdout);
  if (!a.errors.empty()) {
    io::write_output_file(a.errors, models::speech_errors_tsv(e));
    std::printf("wrote %s: the %lld utterances heard wrong (path, spoken, heard)\n", a.errors.c_str(),
                static_cast<long long>(e.score.utterances - e.score.exact));
  }
}

struct ShowArgs {
  std::string dir, file, out = "speech.svg";
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();
  const CLI::App* cmd = nullptr;
  int threads = 1;
};

void run_show(const ShowArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedSpeechModel>(a.dir, "speech");
  const models::SpeechDecodeOptions o = speech_flags(a.cmd, *a.decode, *loaded);
  const models::SpeechShow s = models::show_speech(*loaded, a.file, o);
  io::write_output_file(a.out, s.svg);
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
  ta->cmd = tr;
  add_decode_flags(tr, ta->decode, models::speech_option_set(), {"batch", "stream"});
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
  ea->cmd = ev;
  add_decode_flags(ev, ea->decode, models::speech_option_set(), {"stream"});
  ev->add_option("--errors", ea->errors, "write the utterances heard wrong to this file (path, spoken, heard; tab-separated)");
  add_ensemble_option(ev, ea->ensemble);
  ev->add_option("--set", ea->overrides, "override a key of the run's train.yaml, e.g. --set data.gap_ms=100 (repeatable)");
  add_threads_option(ev, ea->threads);
  ev->callback([ea] { run_eval(*ea); });

  auto sa = std::make_shared<ShowArgs>();
  auto* show = sp->add_subcommand("show", "SVG: the log-mel spectrogram with each output digit's attention above it");
  add_model_option(show, sa->dir);
  show->add_option("file", sa->file, "a WAV file")->required();
  sa->cmd = show;
  add_decode_flags(show, sa->decode, models::speech_option_set(), {"batch", "stream"});
  add_output_option(show, sa->out, "SVG file to write");
  add_threads_option(show, sa->threads);
  show->callback([sa] { run_show(*sa); });
}

}  // namespace engram::cli
