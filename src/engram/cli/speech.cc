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
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/speech/eval.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

struct SpeechArgs {
  ModelArgs model;  // its decode: the family's decode flags
  const CLI::App* cmd = nullptr;
  std::vector<std::string> files, overrides;          // transcribe: WAV files; eval: --set
  std::string set = "test", errors, file, out = "speech.svg";  // eval: --split, --errors; show: FILE, -o
  bool one_speaker = false;
};

// -m, the schema's decode flags but `skip` (decode/options.h: beam, max_length, batch, precision),
// --ensemble where the verb decodes with one, and --threads.
void add_speech_flags(CLI::App* cmd, SpeechArgs& a, const std::vector<std::string>& skip, bool ensemble = true) {
  a.cmd = cmd;
  add_model_option(cmd, a.model.dir);
  add_decode_flags(cmd, a.model.decode, models::speech_option_set(), skip);
  if (ensemble) add_ensemble_dirs_option(cmd, a.model.ensemble);
  add_threads_option(cmd, a.model.threads);
}

// -m's model with --ensemble's members and the precision's weights (`names`: the directories
// read), and the decode options of the flags over the model's decode defaults, checked once as on
// every front end.
std::unique_ptr<models::LoadedSpeechModel> load(const SpeechArgs& a, models::SpeechDecodeOptions& o,
                                                std::string* names = nullptr) {
  decode::DecodeOptions d = *a.model.decode;
  const std::vector<std::string> given = finish_decode_flags(a.cmd, d, models::speech_option_set());
  auto m = load_model_flags<models::LoadedSpeechModel>(a.model, "speech", d, given, names);
  o = models::speech_decode_options(d);
  return m;
}

void run_transcribe(const SpeechArgs& a) {
  models::SpeechDecodeOptions o;
  const auto m = load(a, o);
  models::transcribe_to_stdout(*m, a.files, o, a.one_speaker);
}

void run_eval(const SpeechArgs& a) {
  models::SpeechDecodeOptions o;
  std::string names;
  const auto m = load(a, o, &names);
  models::SpeechEval e = models::evaluate_speech(*m, a.set, o, a.overrides);
  e.models = names;
  std::fputs(models::speech_eval_report(e).c_str(), stdout);
  if (!a.errors.empty()) {
    io::write_output_file(a.errors, models::speech_errors_tsv(e));
    std::printf("wrote %s: the %lld utterances heard wrong (path, spoken, heard)\n", a.errors.c_str(),
                static_cast<long long>(e.score.utterances - e.score.exact));
  }
}

void run_show(const SpeechArgs& a) {
  models::SpeechDecodeOptions o;
  const auto m = load(a, o);
  const models::SpeechShow s = models::show_speech(*m, a.file, o);
  io::write_output_file(a.out, s.svg);
  std::printf("%s\t%s; wrote %s\n", a.file.c_str(), s.text.c_str(), a.out.c_str());
}

}  // namespace

void register_speech(CLI::App& app) {
  auto* sp = app.add_subcommand("speech", "speech recognition of spoken digits (transcribe, eval, show)");
  sp->require_subcommand(1);
  auto ta = std::make_shared<SpeechArgs>();
  auto* tr = sp->add_subcommand("transcribe", "print the digits heard in each WAV file");
  add_speech_flags(tr, *ta, {"batch", "stream"});
  tr->add_option("files", ta->files, "16-bit PCM mono WAV files at the model's sample rate (none: paths on stdin)");
  tr->add_flag("--one-speaker", ta->one_speaker,
               "the files are one speaker's: a model with features.cmvn_scope speaker normalises them by statistics "
               "pooled over all of them (else each by its own)");
  tr->callback([ta] { run_transcribe(*ta); });

  auto ea = std::make_shared<SpeechArgs>();
  auto* ev = sp->add_subcommand("eval", "digit error rate and sequence accuracy on a set of the run's data");
  add_speech_flags(ev, *ea, {"stream"});
  ev->add_option("--split", ea->set, "test | valid | train")->check(CLI::IsMember({"test", "valid", "train"}));
  ev->add_option("--errors", ea->errors, "write the utterances heard wrong to this file (path, spoken, heard; tab-separated)");
  ev->add_option("--set", ea->overrides, "override a key of the run's train.yaml, e.g. --set data.gap_ms=100 (repeatable)");
  ev->callback([ea] { run_eval(*ea); });

  auto sa = std::make_shared<SpeechArgs>();
  auto* show = sp->add_subcommand("show", "SVG: the log-mel spectrogram with each output digit's attention above it");
  add_speech_flags(show, *sa, {"batch", "stream"}, /*ensemble=*/false);  // the picture is -m's model's
  show->add_option("file", sa->file, "a WAV file")->required();
  add_output_option(show, sa->out, "SVG file to write");
  show->callback([sa] { run_show(*sa); });
}

}  // namespace engram::cli
