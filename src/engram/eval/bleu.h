// Corpus and sentence BLEU with sacreBLEU 2.x semantics (sacrebleu/metrics/bleu.py): 13a
// tokenization, n-gram order 4, "exp" smoothing, brevity penalty against the closest reference
// length, effective order off for corpus BLEU and on for sentence BLEU, any number of references.
// Scores are on sacreBLEU's 0-100 scale. Pure functions on strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

enum class BleuTokenizer { k13a, kNone };  // kNone: split on whitespace only ("none")
enum class BleuSmooth { kExp, kFloor, kAddK, kNone };

// Defaults are sacreBLEU's BLEU() defaults (corpus BLEU).
struct BleuOptions {
  BleuTokenizer tokenize = BleuTokenizer::k13a;
  BleuSmooth smooth = BleuSmooth::kExp;
  std::optional<double> smooth_value;  // unset: floor 0.1, add-k 1 (sacreBLEU's SMOOTH_DEFAULTS)
  int max_ngram_order = 4;
  bool effective_order = false;
  bool lowercase = false;  // Python str.lower() semantics, see simple_lower() in unicode.h
};

// sacrebleu.sentence_bleu's defaults: exp smoothing, 13a, effective order on.
BleuOptions sentence_bleu_options();

// Sufficient statistics; they add up over segments (corpus BLEU = BLEU of the summed stats).
struct BleuStats {
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  std::vector<int64_t> correct;  // [max_ngram_order] clipped n-gram matches
  std::vector<int64_t> total;    // [max_ngram_order] hypothesis n-grams
  void add(const BleuStats& other);
};

struct BleuScore {
  double score = 0;                // 0-100
  std::vector<int64_t> counts;     // [order] clipped matches (sacreBLEU's .counts)
  std::vector<int64_t> totals;     // [order] hypothesis n-grams (.totals)
  std::vector<double> precisions;  // [order] in percent, after smoothing (.precisions)
  double bp = 0;                   // brevity penalty
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  double ratio = 0;       // sys_len / ref_len (0 when ref_len == 0)
  std::string signature;  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:..."
  // sacreBLEU's verbose line: "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944
  // hyp_len = 17 ref_len = 18)".
  std::string format() const;
};

// The value written in the signature's version field: sacreBLEU 2.0.0 semantics, computed here.
inline constexpr std::string_view kSignatureVersion = "2.0.0+engram";

// refs is sacreBLEU's layout: refs[k][i] is the k-th reference of segment i (one stream per
// reference set, each as long as hyps). Empty reference strings are dropped for that segment
// (variable number of references, signature "nrefs:var"); a segment with no non-empty reference
// and streams of different lengths are errors (engram::Error).
BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs,
                      const BleuOptions& options = {});

// One hypothesis against its references (refs[k] = k-th reference).
BleuScore sentence_bleu(std::string_view hyp, const std::vector<std::string>& refs,
                        const BleuOptions& options = sentence_bleu_options());

// Statistics of one segment (hyp and refs as given; tokenized inside).
BleuStats bleu_segment_stats(std::string_view hyp, const std::vector<std::string>& refs,
                             const BleuOptions& options);

// sacreBLEU's BLEU.compute_bleu: score from summed statistics. nrefs only feeds the signature
// (-1 = variable).
BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options, int nrefs = 1);

// "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0+engram"; short_form gives
// "#:2|c:mixed|e:no|tok:13a|s:exp|v:2.0.0+engram".
std::string bleu_signature(const BleuOptions& options, int nrefs, bool short_form = false);

}  // namespace engram::eval
