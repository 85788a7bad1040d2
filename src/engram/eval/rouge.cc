// ROUGE-N (clipped n-gram overlap) and ROUGE-L (longest common subsequence); see rouge.h.
#include "engram/eval/rouge.h"

#include <unordered_map>

#include "engram/core/error.h"
#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

RougeScore make_score(double overlap, double hyp_count, double ref_count) {
  RougeScore s;
  s.precision = hyp_count > 0 ? overlap / hyp_count : 0.0;
  s.recall = ref_count > 0 ? overlap / ref_count : 0.0;
  s.f1 = (s.precision + s.recall) > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  return s;
}

std::unordered_map<std::string, int64_t> ngrams(const std::vector<std::string>& tokens, int n) {
  std::unordered_map<std::string, int64_t> c;
  for (size_t i = 0; i + n <= tokens.size(); ++i) {
    std::string key = tokens[i];
    for (int k = 1; k < n; ++k) key += " " + tokens[i + k];
    ++c[key];
  }
  return c;
}

RougeScore rouge_n(const std::vector<std::string>& hyp, const std::vector<std::string>& ref,
                   int n) {
  const auto h = ngrams(hyp, n), r = ngrams(ref, n);
  int64_t overlap = 0, hyp_count = 0, ref_count = 0;
  for (const auto& [ng, count] : h) {
    hyp_count += count;
    auto it = r.find(ng);
    if (it != r.end()) overlap += std::min(count, it->second);
  }
  for (const auto& [ng, count] : r) ref_count += count;
  return make_score(static_cast<double>(overlap), static_cast<double>(hyp_count),
                    static_cast<double>(ref_count));
}

size_t lcs_length(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

void check_sizes(size_t hyps, size_t refs, const char* what) {
  ENGRAM_CHECK(hyps == refs, "{}: {} hypotheses but {} references", what, hyps, refs);
}

}  // namespace

std::vector<std::string> rouge_tokenize(std::string_view text) {
  std::string s = simple_lower(text);
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= '!' && u <= '/') || (u >= ':' && u <= '@') || (u >= '[' && u <= '`') ||
        (u >= '{' && u <= '~')) {
      c = ' ';
    }
  }
  std::vector<std::string> out;
  for (auto w : split_python(s)) out.emplace_back(w);
  return out;
}

RougeResult sentence_rouge(std::string_view hyp, std::string_view ref) {
  const auto h = rouge_tokenize(hyp), r = rouge_tokenize(ref);
  RougeResult out;
  out.rouge1 = rouge_n(h, r, 1);
  out.rouge2 = rouge_n(h, r, 2);
  const double lcs = static_cast<double>(lcs_length(h, r));
  out.rouge_l = make_score(lcs, static_cast<double>(h.size()), static_cast<double>(r.size()));
  return out;
}

RougeResult corpus_rouge(const std::vector<std::string>& hyps,
                         const std::vector<std::string>& refs) {
  check_sizes(hyps.size(), refs.size(), "ROUGE");
  RougeResult sum;
  if (hyps.empty()) return sum;
  auto acc = [](RougeScore* a, const RougeScore& b) {
    a->precision += b.precision;
    a->recall += b.recall;
    a->f1 += b.f1;
  };
  for (size_t i = 0; i < hyps.size(); ++i) {
    const auto r = sentence_rouge(hyps[i], refs[i]);
    acc(&sum.rouge1, r.rouge1);
    acc(&sum.rouge2, r.rouge2);
    acc(&sum.rouge_l, r.rouge_l);
  }
  const double n = static_cast<double>(hyps.size());
  for (RougeScore* s : {&sum.rouge1, &sum.rouge2, &sum.rouge_l}) {
    s->precision /= n;
    s->recall /= n;
    s->f1 /= n;
  }
  return sum;
}

}  // namespace engram::eval
