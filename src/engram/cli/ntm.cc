// `engram ntm eval|show`: the Neural Turing Machine (and its LSTM baseline) on the paper's
// algorithmic tasks; training is `engram train configs/ntm-*.yaml`, training speed
// build/bench/ntm_speed. A thin adapter over models/ntm/report.h.
//   engram ntm eval -m DIR --lengths 10,20,30,50,80,120 [--repeats 10] [--ensemble DIR ...]
//                   [--precision fp32|bf16]        cost in bits per sequence
//   engram ntm show -m DIR --length 30 -o copy.svg      inputs, outputs, write / read weightings
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/).
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/ntm/report.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

// Limits (docs/limits.md): an evaluated sequence of at most kMaxLength steps (recall: items); a
// drawn one of at most kMaxShowLength (the SVG grows with it).
constexpr int kMaxLength = 1000;
constexpr int kMaxShowLength = 200;

struct NtmEvalArgs {
  ModelArgs model;
  models::NtmEvalOptions options;
  int64_t seed = 1;
};

void run_eval(const NtmEvalArgs& a) {
  decode::DecodeOptions d;
  auto loaded = load_model_flags<models::LoadedNtmModel>(a.model, "ntm", d);
  models::NtmEvalOptions o = a.options;
  o.seed = static_cast<uint64_t>(a.seed);
  models::ntm_eval_report(*loaded, o, [](const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
  });
}

struct NtmShowArgs {
  ModelArgs model;
  std::string out = "ntm.svg";
  int length = 30, repeat = 0;
  int64_t seed = 1;
};

void run_show(const NtmShowArgs& a) {
  decode::DecodeOptions d;
  auto loaded = load_model_flags<models::LoadedNtmModel>(a.model, "ntm", d);
  const models::NtmShow s = models::show_ntm(*loaded, a.length, a.repeat, static_cast<uint64_t>(a.seed));
  io::write_output_file(a.out, s.svg);
  std::printf("%s; wrote %s\n", s.summary.c_str(), a.out.c_str());
}

}  // namespace

void register_ntm(CLI::App& app) {
  auto* ntm = app.add_subcommand("ntm", "Neural Turing Machine on the copy / repeat-copy / associative-recall tasks");
  ntm->require_subcommand(1);

  auto ea = std::make_shared<NtmEvalArgs>();
  auto* eval = ntm->add_subcommand("eval", "cost in bits per sequence at each length");
  add_model_flags(eval, ea->model);
  eval->add_option("--lengths", ea->options.lengths, "sequence lengths (recall: item counts), e.g. 10,20,30,50,80,120")
      ->delimiter(',')->check(CLI::Range(1, kMaxLength));
  eval->add_option("--repeats", ea->options.repeats, "repeat copy: repeat counts (one, or one per length)")
      ->delimiter(',')->check(CLI::Range(1, 100));
  eval->add_option("--sequences", ea->options.sequences, "sequences per length")->check(CLI::Range(1, 100000));
  eval->add_option("--batch", ea->options.batch, "sequences per forward pass")->check(CLI::Range(1, 1024));
  eval->add_option("--seed", ea->seed, "seed of the test sequences")->check(non_negative<int64_t>());
  eval->callback([ea] { run_eval(*ea); });

  auto sa = std::make_shared<NtmShowArgs>();
  auto* show = ntm->add_subcommand("show", "SVG of one run: inputs, outputs, write and read weightings over time");
  add_model_flags(show, sa->model);
  show->add_option("--length", sa->length, "sequence length (recall: items)")->check(CLI::Range(1, kMaxShowLength));
  show->add_option("--repeat", sa->repeat, "repeat copy: repeats (0 = the training maximum)")->check(CLI::Range(0, 100));
  show->add_option("--seed", sa->seed, "seed of the sequence")->check(non_negative<int64_t>());
  add_output_option(show, sa->out, "SVG file to write");
  show->callback([sa] { run_show(*sa); });
}

}  // namespace engram::cli
