// `engram translate -m MODEL_DIR [--beam K] [--alpha A] [--n-best K] [--min-length N]
// [--block-ngram-repeat N] [--coverage-penalty B] [--alignments FILE] [--ensemble DIR ...]`:
// reads source lines from stdin and writes one translation per line to stdout, streaming: lines
// are decoded in batches of what is already available, so an interactive session gets each
// answer at once and a pipe gets batched throughput. With --n-best K, K lines per input in
// Moses format "i ||| text ||| score". --alignments writes one JSON line per input (its best
// hypothesis): {"src": [...], "tgt": [...], "score": s, "alignment": [[α per source token] per
// target token]}. A thin adapter over models/seq2seq/stream.h.
//
// `engram seq2seq eval -m DIR [--src FILE --ref FILE] [-o HYP] [the decode flags]`: BLEU and
// chrF2 of the translations of FILE (default: RUN/valid.src and valid.tgt, the pairs the run held
// out) as a Markdown table and sacreBLEU's lines (models/seq2seq/eval.h); -o writes the
// translations.
#include <unistd.h>

#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/data/text.h"
#include "engram/io/files.h"
#include "engram/models/loading.h"
#include "engram/models/seq2seq/eval.h"
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

struct Seq2SeqEvalArgs {
  ModelArgs model;
  std::string src, ref, out;
};

void run_eval(const Seq2SeqEvalArgs& a, const CLI::App* cmd) {
  ENGRAM_CHECK(a.src.empty() == a.ref.empty(), "seq2seq eval: --src and --ref go together");
  decode::DecodeOptions d = *a.model.decode;
  const std::vector<std::string> given = finish_decode_flags(cmd, d, models::translate_option_set());
  std::string names;
  const auto loaded = load_model_flags<models::Translator>(a.model, "seq2seq", d, given, &names);
  std::string src = a.src, ref = a.ref;
  if (src.empty()) {  // the pairs the run held out (seq2seq/task.cc writes them beside best/)
    src = models::model_file(loaded->dir(), "valid.src").string();
    ref = models::model_file(loaded->dir(), "valid.tgt").string();
    ENGRAM_CHECK(std::filesystem::exists(src), "{}: no valid.src in the model's directory or its run's (its "
                 "training read validation files): name them with --src and --ref", a.model.dir);
  }
  const models::TranslationEval e = models::evaluate_translation(
      *loaded, loaded->translate_options(d), data::read_lines(src), data::read_lines(ref), names);
  if (!a.out.empty()) {
    std::string text;
    for (const std::string& h : e.hyps) text += h + "\n";
    io::write_file_atomic(a.out, text);
  }
  std::printf("%s\n%s", e.table.c_str(), e.signatures.c_str());
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

  auto* family = app.add_subcommand("seq2seq", "encoder-decoder translation models: eval (BLEU, chrF2)");
  family->require_subcommand(1);
  auto e = std::make_shared<Seq2SeqEvalArgs>();
  auto* ev = family->add_subcommand("eval", "BLEU and chrF2 of the translations of a source file against its references");
  add_model_flags(ev, e->model, false);
  add_decode_flags(ev, e->model.decode, models::translate_option_set(), {"alignments", "stream"});
  ev->add_option("--src", e->src, "source sentences, one a line (plain or gzip; default: the run's valid.src)");
  ev->add_option("--ref", e->ref, "their references, one a line (default: the run's valid.tgt)");
  add_output_option(ev, e->out, "write the translations to FILE, one a line");
  ev->callback([e, ev] { run_eval(*e, ev); });
}

}  // namespace engram::cli
