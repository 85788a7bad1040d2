// `engram eval bleu|chrf|chrf++|rouge|acc HYP REF [REF2 ...]`: scores a hypothesis file against
// one or more reference files (one segment per line) and prints the result the way sacreBLEU's
// `--format text` does ("BLEU|nrefs:1|...|version:2.0.0+engram = 48.5 82.4/50.0/... (BP = ...)"),
// or its default JSON with --json. Score decimals follow sacreBLEU's --width (default 1).
// A thin adapter over eval/report.h.
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/data/text.h"
#include "engram/eval/report.h"

namespace engram::cli {

void register_eval(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "eval", "score a hypothesis file against reference files (sacreBLEU-compatible BLEU, chrF)");
  auto a = std::make_shared<eval::MetricReportOptions>();
  cmd->add_option("metric", a->metric, "bleu | chrf | chrf++ | rouge | acc")
      ->required()
      ->check(CLI::IsMember({"bleu", "chrf", "chrf++", "rouge", "acc"}));
  cmd->add_option("hyp", a->hyp, "hypotheses, one segment per line ('-' = stdin)")->required();
  cmd->add_option("refs", a->refs, "reference file(s), one segment per line, aligned with HYP")
      ->required();
  cmd->footer("engram eval -m DIR [FLAGS]: any model's evaluation on its data, the eval verb of its family "
              "(engram seq2seq eval, babi eval, ntm eval, sentiment eval, pointer eval, speech eval, "
              "pointer-generator eval) with the same flags.");
  cmd->add_flag("--json", a->json, "print sacreBLEU's JSON instead of its text line");
  cmd->add_flag("-b,--score-only", a->score_only, "print only the score");
  cmd->add_option("-w,--width", a->width, "decimals of the printed score")
      ->check(CLI::Range(0, 10))
      ->capture_default_str();
  cmd->add_flag("--short", a->short_signature, "short signature (#:1|c:mixed|...)");
  cmd->add_flag("--lowercase", a->lowercase, "bleu, chrf: case-insensitive");
  cmd->add_option("--tokenize", a->tokenize, "bleu tokenizer")
      ->check(CLI::IsMember({"13a", "none"}))
      ->capture_default_str();
  cmd->add_option("--smooth-method", a->smooth, "bleu smoothing")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
      ->capture_default_str();
  cmd->add_option_function<double>(
         "--smooth-value", [a](double v) { a->smooth_value = v; },
         "bleu smoothing value, finite and >= 0 (floor: 0.1, add-k: 1)")
      ->type_name("FLOAT");
  cmd->add_flag("--stem", a->stem, "rouge: Porter-stem tokens longer than 3 letters (rouge_score's use_stemmer)");
  cmd->add_flag("--normalize", a->normalize, "acc: collapse whitespace and lowercase before comparing");
  cmd->add_option("--by-length", a->by_length,
                  "source file aligned with HYP: also print the score of each source-length bucket (Markdown)");
  cmd->add_option("--buckets", a->buckets, "bucket upper bounds in source words, e.g. 10,20,30 (last bucket open)")
      ->capture_default_str();
  cmd->add_option("--length-unit", a->length_unit,
                  "--by-length counts source words, or chars (characters other than spaces: Chinese, Japanese)")
      ->check(CLI::IsMember({"words", "chars"}))
      ->capture_default_str();
  cmd->callback([a] {
    const std::string out = eval::metric_report(*a, data::read_lines_or_stdin);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  });
}

}  // namespace engram::cli
