// chrF / chrF++ (see chrf.h). N-grams are counted over Unicode code points of the UTF-8 input;
// chrF++ word tokens come from Python-whitespace splitting plus splitting one ASCII punctuation
// character off the end (else the start) of each multi-character word.
#include "engram/eval/chrf.h"

#include <fmt/format.h>

#include <set>
#include <string_view>
#include <unordered_map>

#include "engram/core/error.h"
#include "engram/eval/bleu.h"
#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

using Counts = std::unordered_map<std::string, int64_t>;

bool is_punct(char32_t c) {  // Python's string.punctuation
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}

// All n-gram counters of one (preprocessed) segment: char orders then word orders.
std::vector<Counts> extract_all(std::string_view sent, const ChrfOptions& o) {
  std::vector<Counts> out;
  const std::string chars = o.whitespace ? std::string(sent) : remove_python_space(sent);
  const auto b = char_boundaries(chars);
  const int n_chars = static_cast<int>(b.size()) - 1;
  for (int n = 1; n <= o.char_order; ++n) {
    Counts c;
    for (int i = 0; i + n <= n_chars; ++i) ++c[chars.substr(b[i], b[i + n] - b[i])];
    out.push_back(std::move(c));
  }
  if (o.word_order > 0) {
    std::vector<std::string> words;
    for (auto w : split_python(sent)) {
      const auto wb = char_boundaries(w);
      const size_t len = wb.size() - 1;
      size_t unused;
      if (len == 1) {
        words.emplace_back(w);
      } else if (is_punct(decode_utf8(w, wb[len - 1], &unused))) {
        words.emplace_back(w.substr(0, wb[len - 1]));
        words.emplace_back(w.substr(wb[len - 1]));
      } else if (is_punct(decode_utf8(w, 0, &unused))) {
        words.emplace_back(w.substr(0, wb[1]));
        words.emplace_back(w.substr(wb[1]));
      } else {
        words.emplace_back(w);
      }
    }
    const int n_words = static_cast<int>(words.size());
    for (int n = 1; n <= o.word_order; ++n) {
      Counts c;
      for (int i = 0; i + n <= n_words; ++i) {
        std::string key = words[i];
        for (int k = 1; k < n; ++k) key += " " + words[i + k];
        ++c[key];
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

void match_stats(const Counts& hyp, const Counts& ref, ChrfStats* stats) {
  int64_t hyp_count = 0, match_count = 0, ref_count = 0;
  for (const auto& [ng, count] : hyp) {
    hyp_count += count;
    auto it = ref.find(ng);
    if (it != ref.end()) match_count += std::min(count, it->second);
  }
  for (const auto& [ng, count] : ref) ref_count += count;
  stats->push_back(ref.empty() ? 0 : hyp_count);  // no hits counted without a reference n-gram
  stats->push_back(ref_count);
  stats->push_back(match_count);
}

std::string preprocess(std::string_view s, const ChrfOptions& o) {
  return o.lowercase ? simple_lower(s) : std::string(s);
}

}  // namespace

ChrfOptions chrf_plus_plus_options() {
  ChrfOptions o;
  o.word_order = 2;
  return o;
}

double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& o) {
  const int order = o.char_order + o.word_order;
  ENGRAM_CHECK(static_cast<int>(stats.size()) == 3 * order,
               "chrF: {} statistics for {} orders (need 3 per order)", stats.size(), order);
  const double eps = 1e-16;
  const double factor = static_cast<double>(o.beta) * o.beta;
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < order; ++i) {
    const auto n_hyp = stats[3 * i], n_ref = stats[3 * i + 1], n_match = stats[3 * i + 2];
    const double prec = n_hyp > 0 ? static_cast<double>(n_match) / n_hyp : eps;
    const double rec = n_ref > 0 ? static_cast<double>(n_match) / n_ref : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (o.eps_smoothing) return 100 * score / order;
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0) return 0.0;
  score = (1 + factor) * avg_prec * avg_rec;
  score /= (factor * avg_prec) + avg_rec;
  return 100 * score;
}

ChrfStats chrf_segment_stats(std::string_view hyp, const std::vector<std::string>& refs,
                             const ChrfOptions& o) {
  ENGRAM_CHECK(o.char_order >= 0 && o.word_order >= 0 && o.char_order + o.word_order > 0,
               "chrF: invalid orders char={} word={}", o.char_order, o.word_order);
  ENGRAM_CHECK(!refs.empty(), "chrF: a segment needs at least one reference");
  const auto hyp_ngrams = extract_all(preprocess(hyp, o), o);
  ChrfStats best;
  double best_f = -1.0;
  for (const auto& ref : refs) {
    const auto ref_ngrams = extract_all(preprocess(ref, o), o);
    ChrfStats stats;
    for (size_t k = 0; k < hyp_ngrams.size(); ++k) {
      match_stats(hyp_ngrams[k], ref_ngrams[k], &stats);
    }
    const double f = chrf_from_stats(stats, o);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, const ChrfOptions& o) {
  ENGRAM_CHECK(!refs.empty(), "chrF: no reference streams given");
  for (size_t k = 0; k < refs.size(); ++k) {
    ENGRAM_CHECK(refs[k].size() == hyps.size(),
                 "chrF: reference stream {} has {} segments but there are {} hypotheses", k + 1,
                 refs[k].size(), hyps.size());
  }
  ChrfStats total(3 * (o.char_order + o.word_order), 0);
  std::set<size_t> ref_counts;
  for (size_t i = 0; i < hyps.size(); ++i) {
    std::vector<std::string> seg_refs;
    for (const auto& stream : refs) {
      if (!stream[i].empty()) seg_refs.push_back(stream[i]);
    }
    ENGRAM_CHECK(!seg_refs.empty(), "chrF: segment {} has no non-empty reference", i + 1);
    ref_counts.insert(seg_refs.size());
    const auto stats = chrf_segment_stats(hyps[i], seg_refs, o);
    for (size_t k = 0; k < total.size(); ++k) total[k] += stats[k];
  }
  int nrefs = static_cast<int>(refs.size());
  if (!ref_counts.empty()) {
    nrefs = ref_counts.size() == 1 ? static_cast<int>(*ref_counts.begin()) : -1;
  }
  ChrfScore out;
  out.score = chrf_from_stats(total, o);
  out.name = fmt::format("chrF{}{}", o.beta, std::string(o.word_order, '+'));
  out.signature = chrf_signature(o, nrefs);
  return out;
}

ChrfScore sentence_chrf(std::string_view hyp, const std::vector<std::string>& refs,
                        const ChrfOptions& options) {
  std::vector<std::vector<std::string>> streams;
  for (const auto& r : refs) streams.push_back({r});
  return corpus_chrf({std::string(hyp)}, streams, options);
}

std::string chrf_signature(const ChrfOptions& o, int nrefs, bool short_form) {
  const std::string n = nrefs < 0 ? "var" : std::to_string(nrefs);
  const char* cs = o.lowercase ? "lc" : "mixed";
  const char* eff = o.eps_smoothing ? "no" : "yes";
  const char* space = o.whitespace ? "yes" : "no";
  if (short_form) {
    return fmt::format("#:{}|c:{}|e:{}|nc:{}|nw:{}|s:{}|v:{}", n, cs, eff, o.char_order,
                       o.word_order, space, kSignatureVersion);
  }
  return fmt::format("nrefs:{}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:{}", n, cs, eff,
                     o.char_order, o.word_order, space, kSignatureVersion);
}

std::string ChrfScore::format() const { return fmt::format("{} = {:.2f}", name, score); }

}  // namespace engram::eval
