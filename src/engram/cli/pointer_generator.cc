// The pointer-generator's verbs; training is `engram train configs/pointer-generator-*.yaml`.
// A thin adapter over models/pointer_generator/.
//   engram summarize -m DIR [--beam K] [--min-length N] [--max-length N] [--stream] [--prefix-column]
//                    < articles > summaries
//   engram pointer-generator eval -m DIR --file PAIRS.tsv [--beam K] [--min-length N]   ROUGE, copy share, OOV copies
//   engram pointer-generator eval -m DIR --bbc test|valid [--task headline|summary]    the same on a BBC split
//   engram pointer-generator show -m DIR "article text" -o summary.svg                    attention × p_gen heatmap
// Each takes --ensemble DIR (repeatable): more models of the same vocabulary decoded with -m's
// as one (their probabilities averaged); attention and p_gen are the members' means.
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/data/summary_pairs.h"
#include "engram/data/text.h"
#include "engram/io/files.h"
#include "engram/models/pointer_generator/eval.h"
#include "engram/models/pointer_generator/show.h"
#include "engram/models/pointer_generator/task.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

struct PgArgs {
  ModelArgs model;  // its decode: the family's decode flags
  std::string file, article, out = "summary.svg";
  std::string bbc, task, bbc_dir;  // eval on a BBC split instead of a file
  bool no_stem = false;
  int examples = 5, missed = 0;
  models::SummarizeOptions options;
  const CLI::App* cmd = nullptr;
  bool prefix_column = false;  // summarize: "article<TAB>summary prefix" lines
  bool stream = false;         // summarize: --stream (the decode options')
};

// `skip`: decode options the verb does not take (eval and show: stream).
void add_pg_flags(CLI::App* cmd, const std::shared_ptr<PgArgs>& a, const std::vector<std::string>& skip = {"stream"}) {
  a->cmd = cmd;
  add_model_flags(cmd, a->model, false);
  add_decode_flags(cmd, a->model.decode, models::summarize_option_set(), skip);
  cmd->add_option("--max-source-tokens", a->options.max_source_tokens,
                  "truncate articles to this many tokens (0 = the model's, as in training)")
      ->check(CLI::Range(0, 100000));
  cmd->add_flag("--no-unk", a->options.block_unk, "never output <unk> (copy or generate a word instead)");
  cmd->add_option("--oov-bonus", a->options.oov_bonus,
                  "add this to the log-probability of copying an article word outside the vocabulary (0 = none)")
      ->check(CLI::Range(-100.0, 100.0));
}

// -m's model with --ensemble's members and the precision's weights, and the options with the
// model's decode defaults under the search flags.
std::unique_ptr<models::LoadedPointerGenerator> prepare(PgArgs& a) {
  decode::DecodeOptions d = *a.model.decode;
  const std::vector<std::string> flags = finish_decode_flags(a.cmd, d, models::summarize_option_set());
  auto loaded = load_model_flags<models::LoadedPointerGenerator>(a.model, "pointer_generator", d, flags);
  const models::SummarizeOptions given = models::summarize_options(d);
  a.options.search = given.search;
  a.options.batch_size = given.batch_size;
  a.options.validate();
  a.stream = d.stream;
  return loaded;
}

void run_summarize(PgArgs& a) {
  const auto m = prepare(a);
  models::summarize_stream(m->models(), *m->codec, data::read_lines_or_stdin("-"), a.options,
                           {.prefix_column = a.prefix_column, .tokens = a.stream});
}

void run_eval(PgArgs& a) {
  const std::string report = models::pg_eval_report(
      *prepare(a), a.options,
      {.source = {.file = a.file, .bbc = a.bbc, .task = a.task, .bbc_dir = a.bbc_dir},
       .use_stemmer = !a.no_stem, .examples = a.examples, .missed = a.missed});
  std::fputs(report.c_str(), stdout);
}

void run_show(PgArgs& a) {
  const auto m = prepare(a);
  const models::SummaryShow s = models::show_summary(m->models(), *m->codec, a.article, a.options);
  io::write_output_file(a.out, s.svg);
  std::printf("%swrote %s\n", s.text.c_str(), a.out.c_str());
}

}  // namespace

void register_pointer_generator(CLI::App& app) {
  auto sa = std::make_shared<PgArgs>();
  auto* sum = app.add_subcommand("summarize", "pointer-generator: summarise stdin to stdout, one article per line");
  add_pg_flags(sum, sa, {});
  sum->add_flag("--prefix-column", sa->prefix_column,
                "each input line is 'article<TAB>summary prefix': the prefix's tokens come first, then free decoding");
  sum->callback([sa] { run_summarize(*sa); });

  auto* pg = app.add_subcommand("pointer-generator", "pointer-generator summaries: eval (ROUGE, copies), show (SVG)");
  pg->require_subcommand(1);
  auto ea = std::make_shared<PgArgs>();
  auto* eval = pg->add_subcommand("eval", "ROUGE-1/2/L, copied tokens and OOV-copy rate on source<TAB>target pairs");
  add_pg_flags(eval, ea);
  eval->add_option("--file", ea->file, "pairs: source<TAB>target per line ('\\n' separates target sentences)");
  eval->add_option("--bbc", ea->bbc, "instead of --file: a split of the BBC News Summary corpus")
      ->check(CLI::IsMember({"valid", "test"}));
  eval->add_option("--task", ea->task, "with --bbc: headline | summary (default: the model's data.bbc)")
      ->check(CLI::IsMember({"headline", "summary"}));
  eval->add_option("--bbc-dir", ea->bbc_dir, "with --bbc: the corpus folder (default: the model's data.bbc_dir)");
  eval->add_flag("--no-stem", ea->no_stem, "ROUGE without rouge_score's Porter stemmer first (default: with it; the other follows)");
  eval->add_option("--examples", ea->examples, "show this many outputs that reproduce source-only words")
      ->check(CLI::Range(0, 1000000));
  eval->add_option("--missed", ea->missed, "show this many outputs that leave out source-only reference words")
      ->check(CLI::Range(0, 1000000));
  eval->callback([ea] { run_eval(*ea); });

  auto wa = std::make_shared<PgArgs>();
  auto* show = pg->add_subcommand("show", "SVG: each output token's attention over the article, generated or copied");
  add_pg_flags(show, wa);
  show->add_option("article", wa->article, "the article text")->required();
  add_output_option(show, wa->out, "SVG file to write");
  show->callback([wa] { run_show(*wa); });
}

}  // namespace engram::cli
