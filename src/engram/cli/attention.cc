// `engram attention -m MODEL_DIR "欢迎 来 北京" [-o attn.svg]`: translates one sentence and writes
// its attention as an SVG heatmap (target tokens as rows, source tokens as columns, α as shading
// with the values printed), the seeds' "欢迎 来 北京 → Welcome to Beijing" picture.
// A thin adapter over models/seq2seq/translate.h and viz/heatmap.h.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

struct AttentionArgs {
  std::string model;
  std::string sentence;
  std::string out = "attention.svg";
  int threads = 1;
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();
};

// The decode flags of `engram attention`: the search of one sentence's best hypothesis.
const std::vector<std::string> kSearchFlags = {"beam",       "alpha",      "max_length_ratio",   "max_length_offset",
                                               "max_length", "min_length", "block_ngram_repeat", "coverage_penalty"};

void run_attention(const AttentionArgs& a, const CLI::App* cmd) {
  use_threads(a.threads);
  decode::DecodeOptions d = *a.decode;
  const std::vector<std::string> given = finish_decode_flags(cmd, d, models::translate_option_set());
  const auto loaded = models::load_model_as<models::Translator>(a.model, "seq2seq");
  const models::Translator& tr = *loaded;
  ENGRAM_CHECK(tr.seq2seq().has_attention(), "{}: the model has no attention (attention: none)", tr.dir().string());
  models::TranslateOptions o;
  o.search = tr.decode_options(d, given).search();
  o.search.n_best = 1;
  o.search.alignments = true;
  const models::Translation t = tr.translate({a.sentence}, o)[0];
  ENGRAM_CHECK(!t.nbest.empty(), "nothing to translate: the sentence has no tokens");
  const decode::Hypothesis& h = t.nbest[0];
  viz::Heatmap map;
  map.title = a.sentence + "  →  " + t.text();
  map.row_labels = t.tgt_tokens[0];
  map.col_labels = t.src_tokens;
  map.rows = static_cast<int>(map.row_labels.size());
  map.cols = static_cast<int>(map.col_labels.size());
  map.values = h.alignment;
  io::write_output_file(a.out, viz::heatmap_svg(map));
  std::printf("%s\n", t.text().c_str());
  std::printf("attention (%d target x %d source tokens) written to %s\n", map.rows, map.cols, a.out.c_str());
}

}  // namespace

void register_attention(CLI::App& app) {
  auto a = std::make_shared<AttentionArgs>();
  auto* cmd = app.add_subcommand("attention", "translate one sentence and draw its attention as an SVG heatmap");
  add_model_option(cmd, a->model);
  cmd->add_option("sentence", a->sentence, "the source sentence")->required();
  add_output_option(cmd, a->out, "SVG file to write");
  std::vector<std::string> skip;  // every decode option but the search's
  for (const std::string& f : models::translate_option_set().fields)
    if (std::find(kSearchFlags.begin(), kSearchFlags.end(), f) == kSearchFlags.end()) skip.push_back(f);
  add_decode_flags(cmd, a->decode, models::translate_option_set(), skip);
  add_threads_option(cmd, a->threads);
  cmd->callback([a, cmd] { run_attention(*a, cmd); });
}

}  // namespace engram::cli
