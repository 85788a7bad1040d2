#include "engram/models/seq2seq/eval.h"

#include <fmt/format.h>

#include <chrono>

#include "engram/eval/bleu.h"
#include "engram/eval/chrf.h"
#include "engram/eval/report.h"

namespace engram::models {

TranslationEval evaluate_translation(const Translator& tr, const TranslateOptions& o, const std::vector<std::string>& src,
                                     const std::vector<std::string>& ref, const std::string& models) {
  ENGRAM_CHECK(!src.empty(), "seq2seq eval: the source holds no line");
  ENGRAM_CHECK(src.size() == ref.size(), "seq2seq eval: {} source lines but {} references", src.size(), ref.size());
  TranslationEval e;
  const auto start = std::chrono::steady_clock::now();
  for (const Translation& t : tr.translate(src, o)) e.hyps.push_back(t.text());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<std::vector<std::string>> refs = {ref};
  const eval::BleuScore bleu = eval::corpus_bleu(e.hyps, refs);
  const eval::ChrfScore chrf = eval::corpus_chrf(e.hyps, refs);
  e.table = eval::markdown_head({"models", "sentences", "BLEU", "chrF2", "sentences/s"}, "lrrrr", true) +
            fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.1f} |\n", models, src.size(), bleu.score, chrf.score,
                        seconds > 0 ? static_cast<double>(src.size()) / seconds : 0.0);
  // sacreBLEU's text lines, as `engram eval bleu|chrf HYP REF` prints them.
  eval::MetricReportOptions m;
  m.hyp = "hyp";
  m.refs = {"ref"};
  const eval::SegmentReader read = [&](const std::string& name) { return name == "hyp" ? e.hyps : ref; };
  for (const char* metric : {"bleu", "chrf"}) {
    m.metric = metric;
    e.signatures += eval::metric_report(m, read) + "\n";
  }
  return e;
}

}  // namespace engram::models
