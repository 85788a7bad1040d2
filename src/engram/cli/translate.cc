// `engram translate -m MODEL_DIR [--beam K] [--alpha A] [--n-best K] [--min-length N]
// [--block-ngram-repeat N] [--coverage-penalty B] [--alignments FILE]`:
// reads source lines from stdin and writes one translation per line to stdout, streaming: lines
// are decoded in batches of what is already available, so an interactive session gets each
// answer at once and a pipe gets batched throughput. With --n-best K, K lines per input in
// Moses format "i ||| text ||| score". --alignments writes one JSON line per input (its best
// hypothesis): {"src": [...], "tgt": [...], "score": s, "alignment": [[α per source token] per
// target token]}. A thin adapter over models/seq2seq/stream.h.
#include <unistd.h>

#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/models/seq2seq/stream.h"

namespace engram::cli {

namespace {

struct TranslateArgs {
  std::string model;
  models::TranslateOptions options;
  std::shared_ptr<decode::SearchOptions> search = std::make_shared<decode::SearchOptions>();
  models::StreamOptions stream;  // --scores, --alignments
  int threads = 1;         // threads (the caller and its team's helpers)
  std::string precision = "fp32";
};

void run_translate(const TranslateArgs& a) {
  use_threads(a.threads);
  models::TranslateOptions o = a.options;
  o.search = *a.search;
  if (o.search.beam == 1 && o.search.n_best > 1) o.search.beam = o.search.n_best;  // --n-best K alone: beam K
  o.search.alignments = !a.stream.alignments.empty();
  o.search.validate();
  const auto loaded = models::load_model_as<models::Translator>(a.model, "seq2seq");
  models::Translator& tr = *loaded;
  if (a.precision == "bf16") tr.use_bf16();
  else tr.use_packed();  // fp32: few-row products on the packed copy (same values)
  models::translate_stream(tr, o, a.stream, STDIN_FILENO);
}

}  // namespace

void register_translate(CLI::App& app) {
  auto a = std::make_shared<TranslateArgs>();
  auto* cmd = app.add_subcommand("translate", "translate stdin to stdout, one line each (greedy or beam search)");
  add_model_option(cmd, a->model);
  add_config_flags(cmd, a->search, {"beam", "n_best", "alpha", "max_length_ratio", "max_length_offset", "max_length",
                                    "min_length", "block_ngram_repeat", "coverage_penalty"});
  cmd->add_option("--batch", a->options.batch_size, "sentences decoded together")->check(CLI::Range(1, 4096));
  cmd->add_flag("--scores", a->stream.scores, "print 'i ||| text ||| score' lines");
  cmd->add_option("--alignments", a->stream.alignments, "write attention alignments as JSON lines to FILE ('-' = stderr)");
  add_threads_option(cmd, a->threads);
  cmd->add_option("--precision", a->precision,
                  "decoding weights: fp32, or bf16 (one sentence or its beams at a time, i.e. --batch 1: "
                  "weights and inputs rounded to bf16, sums in fp32; about 2x faster, see docs/models.md)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->callback([a] { run_translate(*a); });
}

}  // namespace engram::cli
