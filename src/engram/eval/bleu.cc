// BLEU as sacreBLEU 2.x computes it (see bleu.h). Per segment: tokenize, count hypothesis
// n-grams, clip by the maximum count over the references, pick the closest reference length
// (ties -> the shorter); the corpus score comes from the summed statistics.
#include "engram/eval/bleu.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "engram/core/error.h"
#include "engram/eval/tokenizer_13a.h"
#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

using NgramCounts = std::unordered_map<std::string, int64_t>;

// U+001F is Python whitespace, so it never occurs inside a token: a safe n-gram joiner.
constexpr char kJoin = '\x1f';

std::vector<std::string> preprocess(std::string_view sent, const BleuOptions& options) {
  std::string lowered;
  if (options.lowercase) {
    lowered = simple_lower(sent);
    sent = lowered;
  }
  sent = rstrip_python(sent);
  if (options.tokenize == BleuTokenizer::k13a) return tokens_13a(sent);
  std::vector<std::string> out;
  for (auto tok : split_python(sent)) out.emplace_back(tok);
  return out;
}

NgramCounts extract_ngrams(const std::vector<std::string>& tokens, int max_order) {
  NgramCounts counts;
  const int len = static_cast<int>(tokens.size());
  for (int n = 1; n <= max_order; ++n) {
    for (int i = 0; i + n <= len; ++i) {
      std::string key = tokens[i];
      for (int k = 1; k < n; ++k) {
        key.push_back(kJoin);
        key.append(tokens[i + k]);
      }
      ++counts[key];
    }
  }
  return counts;
}

int ngram_order(const std::string& key) {
  int n = 1;
  for (char c : key) n += (c == kJoin);
  return n;
}

double my_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest_diff = -1, closest_len = -1;
  for (int64_t ref_len : ref_lens) {
    const int64_t diff = std::llabs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

// Non-empty references of segment i.
std::vector<std::string> segment_refs(const std::vector<std::vector<std::string>>& refs, size_t i) {
  std::vector<std::string> out;
  for (const auto& stream : refs) {
    if (!stream[i].empty()) out.push_back(stream[i]);
  }
  ENGRAM_CHECK(!out.empty(), "BLEU: segment {} has no non-empty reference", i + 1);
  return out;
}

std::string smooth_name(const BleuOptions& o) {
  switch (o.smooth) {
    case BleuSmooth::kExp:
      return "exp";
    case BleuSmooth::kNone:
      return "none";
    case BleuSmooth::kFloor:
      return fmt::format("floor[{:.2f}]", o.smooth_value.value_or(0.1));
    case BleuSmooth::kAddK:
      return fmt::format("add-k[{:.2f}]", o.smooth_value.value_or(1.0));
  }
  return "?";
}

}  // namespace

BleuOptions sentence_bleu_options() {
  BleuOptions o;
  o.effective_order = true;
  return o;
}

void BleuStats::add(const BleuStats& other) {
  if (correct.empty()) {
    correct.assign(other.correct.size(), 0);
    total.assign(other.total.size(), 0);
  }
  ENGRAM_CHECK(correct.size() == other.correct.size(), "BLEU: adding stats of order {} and {}",
               correct.size(), other.correct.size());
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (size_t n = 0; n < correct.size(); ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
}

BleuStats bleu_segment_stats(std::string_view hyp, const std::vector<std::string>& refs,
                             const BleuOptions& options) {
  ENGRAM_CHECK(options.max_ngram_order >= 1, "BLEU: max_ngram_order must be >= 1, got {}",
               options.max_ngram_order);
  ENGRAM_CHECK(!refs.empty(), "BLEU: a segment needs at least one reference");
  const int order = options.max_ngram_order;
  NgramCounts ref_ngrams;
  std::vector<int64_t> ref_lens;
  for (const auto& ref : refs) {
    const auto tokens = preprocess(ref, options);
    ref_lens.push_back(static_cast<int64_t>(tokens.size()));
    for (auto& [ngram, count] : extract_ngrams(tokens, order)) {
      auto& best = ref_ngrams[ngram];
      best = std::max(best, count);
    }
  }
  const auto hyp_tokens = preprocess(hyp, options);
  BleuStats stats;
  stats.sys_len = static_cast<int64_t>(hyp_tokens.size());
  stats.ref_len = closest_ref_len(stats.sys_len, ref_lens);
  stats.correct.assign(order, 0);
  stats.total.assign(order, 0);
  for (const auto& [ngram, count] : extract_ngrams(hyp_tokens, order)) {
    const int n = ngram_order(ngram) - 1;
    stats.total[n] += count;
    auto it = ref_ngrams.find(ngram);
    if (it != ref_ngrams.end()) stats.correct[n] += std::min(count, it->second);
  }
  return stats;
}

BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options, int nrefs) {
  const int order = options.max_ngram_order;
  ENGRAM_CHECK(static_cast<int>(stats.correct.size()) == order &&
                   static_cast<int>(stats.total.size()) == order,
               "BLEU: stats have order {}, options say {}", stats.correct.size(), order);
  BleuScore out;
  out.counts = stats.correct;
  out.totals = stats.total;
  out.sys_len = stats.sys_len;
  out.ref_len = stats.ref_len;
  out.ratio = stats.ref_len ? static_cast<double>(stats.sys_len) / stats.ref_len : 0.0;
  out.signature = bleu_signature(options, nrefs);
  out.precisions.assign(order, 0.0);
  if (stats.sys_len < stats.ref_len) {
    out.bp = stats.sys_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) / stats.sys_len)
                               : 0.0;
  } else {
    out.bp = 1.0;
  }

  ENGRAM_CHECK(!options.smooth_value || (std::isfinite(*options.smooth_value) && *options.smooth_value >= 0),
               "BLEU: smoothing value {} must be a finite number >= 0", options.smooth_value.value_or(0));
  bool any_correct = false;
  for (auto c : stats.correct) any_correct |= (c != 0);
  if (!any_correct) return out;  // sacreBLEU #141: no match at all -> 0

  double smooth_value = 0.0;
  if (options.smooth == BleuSmooth::kFloor) smooth_value = options.smooth_value.value_or(0.1);
  if (options.smooth == BleuSmooth::kAddK) smooth_value = options.smooth_value.value_or(1.0);
  double smooth_mteval = 1.0;
  int eff_order = order;
  for (int n = 1; n <= order; ++n) {
    double correct = static_cast<double>(stats.correct[n - 1]);
    double total = static_cast<double>(stats.total[n - 1]);
    if (options.smooth == BleuSmooth::kAddK && n > 1) {
      correct += smooth_value;
      total += smooth_value;
    }
    if (total == 0) break;
    if (options.effective_order) eff_order = n;
    if (correct == 0) {
      if (options.smooth == BleuSmooth::kExp) {
        smooth_mteval *= 2;
        out.precisions[n - 1] = 100.0 / (smooth_mteval * total);
      } else if (options.smooth == BleuSmooth::kFloor) {
        out.precisions[n - 1] = 100.0 * smooth_value / total;
      }
    } else {
      out.precisions[n - 1] = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += my_log(out.precisions[n]);
  out.score = out.bp * std::exp(log_sum / eff_order);
  return out;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs,
                      const BleuOptions& options) {
  ENGRAM_CHECK(!refs.empty(), "BLEU: no reference streams given");
  for (size_t k = 0; k < refs.size(); ++k) {
    ENGRAM_CHECK(refs[k].size() == hyps.size(),
                 "BLEU: reference stream {} has {} segments but there are {} hypotheses", k + 1,
                 refs[k].size(), hyps.size());
  }
  BleuStats total;
  total.correct.assign(std::max(options.max_ngram_order, 1), 0);
  total.total.assign(std::max(options.max_ngram_order, 1), 0);
  std::set<size_t> ref_counts;
  for (size_t i = 0; i < hyps.size(); ++i) {
    const auto seg_refs = segment_refs(refs, i);
    ref_counts.insert(seg_refs.size());
    total.add(bleu_segment_stats(hyps[i], seg_refs, options));
  }
  const int nrefs = ref_counts.size() == 1 ? static_cast<int>(*ref_counts.begin()) : -1;
  return bleu_from_stats(total, options,
                         ref_counts.empty() ? static_cast<int>(refs.size()) : nrefs);
}

BleuScore sentence_bleu(std::string_view hyp, const std::vector<std::string>& refs,
                        const BleuOptions& options) {
  std::vector<std::vector<std::string>> streams;
  for (const auto& r : refs) streams.push_back({r});
  return corpus_bleu({std::string(hyp)}, streams, options);
}

std::string bleu_signature(const BleuOptions& options, int nrefs, bool short_form) {
  const std::string n = nrefs < 0 ? "var" : std::to_string(nrefs);
  const char* tok = options.tokenize == BleuTokenizer::k13a ? "13a" : "none";
  const char* cs = options.lowercase ? "lc" : "mixed";
  const char* eff = options.effective_order ? "yes" : "no";
  if (short_form) {
    return fmt::format("#:{}|c:{}|e:{}|tok:{}|s:{}|v:{}", n, cs, eff, tok, smooth_name(options),
                       kSignatureVersion);
  }
  return fmt::format("nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:{}", n, cs, eff, tok,
                     smooth_name(options), kSignatureVersion);
}

std::string BleuScore::format() const {
  std::string prec;
  for (size_t i = 0; i < precisions.size(); ++i) {
    if (i) prec.push_back('/');
    prec += fmt::format("{:.1f}", precisions[i]);
  }
  return fmt::format("BLEU = {:.2f} {} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                     score, prec, bp, ratio, sys_len, ref_len);
}

}  // namespace engram::eval
