// `engram rouge HYP REF [--stem] [--json]`: ROUGE-1/2/L/Lsum precision, recall and F1 as Google's
// rouge_score computes them (eval/rouge.h), one segment per line. Inside a line the two
// characters `\n` separate sentences (ROUGE-Lsum's boundaries). The same report as
// `engram eval rouge`; a thin adapter over eval/report.h.
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/data/text.h"
#include "engram/eval/report.h"

namespace engram::cli {

void register_rouge(CLI::App& app) {
  auto* cmd = app.add_subcommand("rouge", "ROUGE-1/2/L/Lsum of a hypothesis file against a reference file (rouge_score-compatible)");
  auto a = std::make_shared<eval::MetricReportOptions>();
  a->metric = "rouge";
  cmd->add_option("hyp", a->hyp, "hypotheses, one per line; sentences separated by the two characters \\n ('-' = stdin)")
      ->required();
  auto ref = std::make_shared<std::string>();
  cmd->add_option("ref", *ref, "references, aligned with HYP, same format")->required();
  cmd->add_flag("--stem", a->stem, "Porter-stem tokens longer than 3 letters (rouge_score's use_stemmer=True)");
  cmd->add_flag("--json", a->json, "print JSON instead of one line per ROUGE type");
  cmd->add_option("-w,--width", a->width, "decimals of the printed scores")->check(CLI::Range(0, 10))->capture_default_str();
  cmd->callback([a, ref] {
    a->refs = {*ref};
    const std::string out = eval::metric_report(*a, data::read_lines_or_stdin);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  });
}

}  // namespace engram::cli
