// chrF and chrF++ with sacreBLEU 2.x semantics (sacrebleu/metrics/chrf.py): character n-grams
// 1..6 over code points with whitespace removed, optional word n-grams (chrF++: 2) after
// sacreBLEU's one-punctuation-split, beta 2, effective-order averaging by default (or chrF++.py
// style epsilon smoothing), best reference per segment by segment F-score. Scores are 0-100.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

// Defaults are sacreBLEU's CHRF() defaults (chrF2).
struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2 = chrF++
  int beta = 2;
  bool lowercase = false;      // Python str.lower() semantics, see simple_lower()
  bool whitespace = false;     // true: keep whitespace inside character n-grams
  bool eps_smoothing = false;  // true: chrF++.py / Moses / NLTK epsilon smoothing
};

// chrF++: word_order = 2, everything else default.
ChrfOptions chrf_plus_plus_options();

// [3 * (char_order + word_order)] counts: per order {hyp n-grams, ref n-grams, matches}. Sums
// over segments give the corpus statistics.
using ChrfStats = std::vector<int64_t>;

struct ChrfScore {
  double score = 0;            // 0-100
  std::string name;            // "chrF2", "chrF2++"
  std::string signature;       // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:..."
  std::string format() const;  // "chrF2 = 59.73"
};

// refs[k][i] is the k-th reference of segment i (sacreBLEU's layout, see corpus_bleu).
ChrfScore corpus_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs,
                      const ChrfOptions& options = {});
ChrfScore sentence_chrf(std::string_view hyp, const std::vector<std::string>& refs,
                        const ChrfOptions& options = {});

// Statistics of one segment against its best reference.
ChrfStats chrf_segment_stats(std::string_view hyp, const std::vector<std::string>& refs,
                             const ChrfOptions& options);
// The F-score (0-100) of summed statistics.
double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options);
std::string chrf_signature(const ChrfOptions& options, int nrefs, bool short_form = false);

}  // namespace engram::eval
