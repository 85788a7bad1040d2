// `engram translate -m MODEL_DIR [--beam K] [--alpha A] [--n-best K] [--min-length N]
// [--block-ngram-repeat N] [--coverage-penalty B] [--alignments FILE] [--ensemble DIR ...]`:
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
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/models/seq2seq/stream.h"

namespace engram::cli {

namespace {

struct TranslateArgs {
  ModelArgs model;               // its decode: the family's decode flags
  models::StreamOptions stream;  // --scores, --alignments, --prefix-column (--stream: the options')
};

void run_translate(const TranslateArgs& a, const CLI::App* cmd) {
  decode::DecodeOptions d = *a.model.decode;
  d.alignments = !a.stream.alignments.empty();
  std::vector<std::string> given = finish_decode_flags(cmd, d, models::translate_option_set());
  given.push_back("alignments");  // --alignments FILE decides it
  // fp32: few-row products on the packed copy (the same values)
  const auto loaded = load_model_flags<models::Translator>(a.model, "seq2seq", d, given);
  models::StreamOptions stream = a.stream;
  stream.tokens = d.stream;
  models::translate_stream(*loaded, loaded->translate_options(d), stream, STDIN_FILENO);
}

}  // namespace

void register_translate(CLI::App& app) {
  auto a = std::make_shared<TranslateArgs>();
  auto* cmd = app.add_subcommand("translate", "translate stdin to stdout, one line each (greedy or beam search)");
  add_model_flags(cmd, a->model, false);
  add_decode_flags(cmd, a->model.decode, models::translate_option_set(), {"alignments"});
  cmd->add_flag("--scores", a->stream.scores, "print 'i ||| text ||| score' lines");
  cmd->add_flag("--prefix-column", a->stream.prefix_column,
                "each input line is 'source<TAB>target prefix': the prefix's tokens come first, then free decoding");
  cmd->add_option("--alignments", a->stream.alignments, "write attention alignments as JSON lines to FILE ('-' = stderr)");
  cmd->callback([a, cmd] { run_translate(*a, cmd); });
}

}  // namespace engram::cli
