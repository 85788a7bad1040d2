// ROUGE-N (clipped n-gram overlap), ROUGE-L (longest common subsequence) and ROUGE-Lsum
// (summary-level union LCS); see rouge.h. Tokens are interned to integers per call so the LCS
// tables compare ints.
#include "engram/eval/rouge.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "engram/core/error.h"
#include "engram/eval/porter.h"
#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

using Ids = std::vector<int>;

RougeScore make_score(double hits, double hyp_count, double ref_count) {
  RougeScore s;
  s.precision = hyp_count > 0 ? hits / hyp_count : 0.0;
  s.recall = ref_count > 0 ? hits / ref_count : 0.0;
  s.f1 = (s.precision + s.recall) > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  return s;
}

class Interner {
 public:
  Ids ids(const std::vector<std::string>& tokens) {
    Ids out;
    out.reserve(tokens.size());
    for (const auto& t : tokens) out.push_back(map_.try_emplace(t, static_cast<int>(map_.size())).first->second);
    return out;
  }

 private:
  std::unordered_map<std::string, int> map_;
};

RougeScore rouge_n(const Ids& hyp, const Ids& ref, size_t n) {
  auto count = [n](const Ids& t) {
    std::map<Ids, int64_t> c;
    for (size_t i = 0; i + n <= t.size(); ++i) ++c[Ids(t.begin() + i, t.begin() + i + n)];
    return c;
  };
  const auto h = count(hyp), r = count(ref);
  int64_t overlap = 0;
  for (const auto& [gram, c] : r) {
    auto it = h.find(gram);
    if (it != h.end()) overlap += std::min(c, it->second);
  }
  const double hyp_grams = hyp.size() >= n ? static_cast<double>(hyp.size() - n + 1) : 0.0;
  const double ref_grams = ref.size() >= n ? static_cast<double>(ref.size() - n + 1) : 0.0;
  return make_score(static_cast<double>(overlap), hyp_grams, ref_grams);
}

// LCS table of ref (rows) against can (columns): [(|ref| + 1) * (|can| + 1)], row-major.
std::vector<int> lcs_table(const Ids& ref, const Ids& can) {
  const size_t cols = can.size() + 1;
  std::vector<int> t((ref.size() + 1) * cols, 0);
  for (size_t i = 1; i <= ref.size(); ++i) {
    for (size_t j = 1; j <= can.size(); ++j) {
      t[i * cols + j] = ref[i - 1] == can[j - 1] ? t[(i - 1) * cols + j - 1] + 1
                                                 : std::max(t[(i - 1) * cols + j], t[i * cols + j - 1]);
    }
  }
  return t;
}

// The indices into ref of one LCS, chosen as rouge_score's _backtrack_norec chooses it (a tie
// moves up a row): the union in ROUGE-Lsum depends on that choice.
std::vector<size_t> lcs_indices(const Ids& ref, const Ids& can) {
  const std::vector<int> t = lcs_table(ref, can);
  const size_t cols = can.size() + 1;
  std::vector<size_t> out;
  size_t i = ref.size(), j = can.size();
  while (i > 0 && j > 0) {
    if (ref[i - 1] == can[j - 1]) {
      out.push_back(i - 1);
      --i, --j;
    } else if (t[i * cols + j - 1] > t[(i - 1) * cols + j]) {
      --j;
    } else {
      --i;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

RougeScore rouge_l(const Ids& hyp, const Ids& ref) {
  if (hyp.empty() || ref.empty()) return {};
  const double lcs = lcs_table(ref, hyp).back();
  return make_score(lcs, static_cast<double>(hyp.size()), static_cast<double>(ref.size()));
}

RougeScore rouge_lsum(const std::vector<Ids>& hyp_sents, const std::vector<Ids>& ref_sents) {
  size_t m = 0, n = 0;
  std::unordered_map<int, int64_t> ref_left, hyp_left;
  for (const Ids& s : ref_sents) {
    m += s.size();
    for (int t : s) ++ref_left[t];
  }
  for (const Ids& s : hyp_sents) {
    n += s.size();
    for (int t : s) ++hyp_left[t];
  }
  if (m == 0 || n == 0) return {};
  int64_t hits = 0;
  for (const Ids& r : ref_sents) {
    std::vector<char> in_union(r.size(), 0);
    for (const Ids& c : hyp_sents)
      for (size_t i : lcs_indices(r, c)) in_union[i] = 1;
    for (size_t i = 0; i < r.size(); ++i) {
      if (!in_union[i]) continue;
      auto& h = hyp_left[r[i]];
      auto& f = ref_left[r[i]];
      if (h > 0 && f > 0) ++hits, --h, --f;
    }
  }
  return make_score(static_cast<double>(hits), static_cast<double>(n), static_cast<double>(m));
}

// rouge_score's get_sents: split at '\n', drop empty pieces (a piece of spaces stays, with no tokens).
std::vector<std::string_view> lsum_sentences(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> rouge_tokenize(std::string_view text, bool use_stemmer) {
  std::string s = simple_lower(text);
  for (char& c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = ' ';
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) {
      std::string_view tok(s.data() + i, j - i);
      out.push_back(use_stemmer && tok.size() > 3 ? porter_stem(tok) : std::string(tok));
      if (out.back().empty()) out.pop_back();  // rouge_score drops tokens that are not [a-z0-9]+
    }
    i = j;
  }
  return out;
}

std::string lsum_text(const std::vector<std::string>& sentences) {
  std::string out;
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (i) out += '\n';
    out += sentences[i];
  }
  return out;
}

RougeResult sentence_rouge(std::string_view hyp, std::string_view ref, const RougeOptions& options) {
  Interner in;
  const Ids h = in.ids(rouge_tokenize(hyp, options.use_stemmer));
  const Ids r = in.ids(rouge_tokenize(ref, options.use_stemmer));
  RougeResult out;
  out.rouge1 = rouge_n(h, r, 1);
  out.rouge2 = rouge_n(h, r, 2);
  out.rouge_l = rouge_l(h, r);
  std::vector<Ids> hs, rs;
  for (std::string_view s : lsum_sentences(hyp)) hs.push_back(in.ids(rouge_tokenize(s, options.use_stemmer)));
  for (std::string_view s : lsum_sentences(ref)) rs.push_back(in.ids(rouge_tokenize(s, options.use_stemmer)));
  out.rouge_lsum = rouge_lsum(hs, rs);
  return out;
}

RougeResult corpus_rouge(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                         const RougeOptions& options) {
  ENGRAM_CHECK(hyps.size() == refs.size(), "ROUGE: {} hypotheses but {} references", hyps.size(),
               refs.size());
  RougeResult sum;
  if (hyps.empty()) return sum;
  auto acc = [](RougeScore* a, const RougeScore& b) {
    a->precision += b.precision;
    a->recall += b.recall;
    a->f1 += b.f1;
  };
  for (size_t i = 0; i < hyps.size(); ++i) {
    const RougeResult r = sentence_rouge(hyps[i], refs[i], options);
    acc(&sum.rouge1, r.rouge1);
    acc(&sum.rouge2, r.rouge2);
    acc(&sum.rouge_l, r.rouge_l);
    acc(&sum.rouge_lsum, r.rouge_lsum);
  }
  const double n = static_cast<double>(hyps.size());
  for (RougeScore* s : {&sum.rouge1, &sum.rouge2, &sum.rouge_l, &sum.rouge_lsum}) {
    s->precision /= n;
    s->recall /= n;
    s->f1 /= n;
  }
  return sum;
}

}  // namespace engram::eval
