// `engram shortlist -m MODEL --src FILE --tgt FILE [--best K] [--frequent N] [-o FILE]`: builds a
// seq2seq model's lexical shortlist (models/seq2seq/shortlist.h) from a parallel corpus (its
// training data, typically; plain or gzip text, one sentence per line) and writes it beside the
// model as shortlist.tsv, where `engram translate --shortlist`, the server and Python find it.
#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/data/text.h"
#include "engram/models/seq2seq/translate.h"

namespace engram::cli {

namespace {

struct ShortlistArgs {
  std::string model, src, tgt, out;
  models::ShortlistConfig cfg;
};

void run_shortlist(const ShortlistArgs& a) {
  const auto loaded = models::load_model_as<models::Translator>(a.model, "seq2seq");
  const models::Translator& tr = *loaded;
  const std::vector<std::string> src_lines = data::read_lines(a.src), tgt_lines = data::read_lines(a.tgt);
  ENGRAM_CHECK(src_lines.size() == tgt_lines.size(), "shortlist: {} has {} lines, {} has {}", a.src, src_lines.size(),
               a.tgt, tgt_lines.size());
  std::vector<std::vector<int32_t>> src, tgt;
  for (size_t i = 0; i < src_lines.size(); ++i) {
    src.push_back(tr.src.encode(src_lines[i]));
    tgt.push_back(tr.tgt.encode(tgt_lines[i]));
  }
  const models::Shortlist sl = models::Shortlist::build(src, tgt, tr.src.size(), tr.tgt.size(), a.cfg);
  const std::filesystem::path out = a.out.empty() ? tr.dir() / models::kShortlistFile : std::filesystem::path(a.out);
  sl.save(out, tr.src, tr.tgt);
  // The mean size of a batch's shortlist over the corpus, one sentence and 64 at a time.
  auto mean_size = [&](size_t batch) {
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < src.size(); i += batch, ++n) {
      std::vector<int32_t> ids;
      for (size_t j = i; j < std::min(src.size(), i + batch); ++j) ids.insert(ids.end(), src[j].begin(), src[j].end());
      sum += static_cast<double>(sl.batch_ids(ids).size());
    }
    return n ? sum / static_cast<double>(n) : 0.0;
  };
  std::printf("shortlist: %zu pairs, %d frequent + up to %d per source token; a batch decodes over %.0f of %d target "
              "tokens (one sentence), %.0f (64); written to %s\n",
              src.size(), a.cfg.frequent, a.cfg.best, mean_size(1), tr.tgt.size(), mean_size(64), out.c_str());
}

}  // namespace

void register_shortlist(CLI::App& app) {
  auto a = std::make_shared<ShortlistArgs>();
  auto* cmd = app.add_subcommand("shortlist", "build a translation model's vocabulary shortlist from a parallel "
                                              "corpus (used by translate --shortlist)");
  add_model_option(cmd, a->model);
  cmd->add_option("--src", a->src, "source sentences, one per line (plain or gzip)")->required();
  cmd->add_option("--tgt", a->tgt, "their translations, line for line")->required();
  cmd->add_option("--best", a->cfg.best, "target tokens kept per source token")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--frequent", a->cfg.frequent, "most frequent target tokens always in")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  add_output_option(cmd, a->out, "file to write (default: shortlist.tsv in the model directory)");
  cmd->callback([a] { run_shortlist(*a); });
}

}  // namespace engram::cli
