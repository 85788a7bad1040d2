// The family-independent verbs over the registry's loaders (models/registry.h):
//   engram run -m DIR [--ensemble DIR ...] [--precision fp32|bf16] [--threads N] < inputs > outputs
//                                                         any family: one input line -> one output line
//   engram average -o OUT DIR DIR [DIR ...]               the element-wise mean of compatible checkpoints
// A thin adapter over models::load_model / LoadedModel::set_ensemble, set_precision, run_line and
// models::average_checkpoints.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/data/text.h"
#include "engram/models/average.h"
#include "engram/models/registry.h"

namespace engram::cli {

namespace {

// Each line as its family's run_line reads it (LoadedModel::input_help), answered as it arrives.
void run_lines(const ModelArgs& a) {
  decode::DecodeOptions d;  // --precision over the model's decode defaults
  const std::unique_ptr<models::LoadedModel> m = load_model_flags<models::LoadedModel>(a, "any family", d);
  char buf[64 * 1024];
  std::string line;
  while (std::fgets(buf, sizeof buf, stdin)) {
    line += buf;
    if (line.back() != '\n' && !std::feof(stdin)) {
      ENGRAM_CHECK(line.size() <= (1u << 20), "run: an input line longer than 1 MiB");
      continue;
    }
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    const std::string out = m->run_line(line);
    std::printf("%s\n", out.c_str());
    std::fflush(stdout);
    line.clear();
  }
}

struct AverageArgs {
  std::string out;
  std::vector<std::string> dirs;
};

}  // namespace

void register_infer(CLI::App& app) {
  auto ra = std::make_shared<ModelArgs>();
  auto* run = app.add_subcommand("run", "any model: each stdin line through the model, one output line each");
  add_model_flags(run, *ra);
  run->footer("Each family reads its own line format (docs/families.md; GET /v1/models of engram serve says it). "
              "--ensemble and --precision bf16 are refused by families that do not have them.");
  run->callback([ra] { run_lines(*ra); });

  // `engram show -m DIR ...` becomes the show verb of DIR's family before parsing (family_verbs.cc); this
  // command is what is left without -m: its help, and the error of a missing -m.
  auto* show = app.add_subcommand("show", "any model: the SVG of one input, the show verb of its family (-m DIR ...)");
  auto show_dir = std::make_shared<std::string>();
  add_model_option(show, *show_dir);
  show->callback([show_dir] { throw Error(fmt::format("engram show: -m {} was not read as a model", *show_dir)); });
  show->footer("engram show -m DIR [ARGS]: engram attention (seq2seq), babi explain, ntm show, sentiment show, "
               "pointer show, speech show or pointer-generator show, with the same arguments.");

  auto aa = std::make_shared<AverageArgs>();
  auto* avg = app.add_subcommand(
      "average", "write the element-wise mean of several checkpoints of one model (same family and config)");
  avg->add_option("-o,--output", aa->out, "model directory to write (atomically)")->required();
  avg->add_option("dirs", aa->dirs, "model or run directories (a run: its best/, else last/), at least two")
      ->required()
      ->expected(2, 1 << 16);
  avg->callback([aa] {
    const models::AverageResult r =
        models::average_checkpoints(std::vector<std::filesystem::path>(aa->dirs.begin(), aa->dirs.end()), aa->out);
    std::printf("wrote %s: the mean of %d %s checkpoints (%lld values each)\n", aa->out.c_str(), r.checkpoints,
                r.family.c_str(), static_cast<long long>(r.values));
  });
}

}  // namespace engram::cli
