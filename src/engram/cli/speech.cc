// `engram speech transcribe`: the spoken digits of WAV files with a trained speech model;
// training is `engram train configs/fsdd-*.yaml`. A thin adapter over models/speech/.
//   engram speech transcribe -m DIR [--beam K] [FILE.wav ...]   one line per file: "FILE<TAB>digits"
//                                  (no files: WAV paths are read from stdin, one per line)
//   engram speech show -m DIR FILE.wav [--beam K] -o out.svg     spectrogram + each digit's attention
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/models/speech/eval.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

struct TranscribeArgs {
  std::string dir;
  std::vector<std::string> files;
  int beam = 1, threads = 1;
};

void run_transcribe(const TranscribeArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedSpeechModel>(a.dir, "speech");
  const auto one = [&](const std::string& f) {
    std::printf("%s\t%s\n", f.c_str(), loaded->transcribe_file(f, a.beam).c_str());
    std::fflush(stdout);
  };
  if (!a.files.empty()) {
    for (const std::string& f : a.files) one(f);
    return;
  }
  char buf[4096];
  while (std::fgets(buf, sizeof buf, stdin)) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) one(line);
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

}  // namespace

void register_speech(CLI::App& app) {
  auto* sp = app.add_subcommand("speech", "speech recognition of spoken digits (transcribe, show)");
  sp->require_subcommand(1);
  auto ta = std::make_shared<TranscribeArgs>();
  auto* tr = sp->add_subcommand("transcribe", "print the digits heard in each WAV file");
  add_model_option(tr, ta->dir);
  tr->add_option("files", ta->files, "16-bit PCM mono WAV files at the model's sample rate (none: paths on stdin)");
  tr->add_option("--beam", ta->beam, "beam size (1 = greedy)")->check(CLI::Range(1, 64));
  add_threads_option(tr, ta->threads);
  tr->callback([ta] { run_transcribe(*ta); });

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
