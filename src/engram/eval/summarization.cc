// Lead baselines, repeated-trigram rate and OOV-copy rate; see summarization.h.
#include "engram/eval/summarization.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

#include "engram/core/error.h"

namespace engram::eval {

size_t word_count(std::string_view text) {
  size_t n = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    n += !space && !in_word;
    in_word = !space;
  }
  return n;
}

std::vector<std::string> lead_n(const std::vector<std::string>& sentences, size_t n) {
  return {sentences.begin(), sentences.begin() + std::min(n, sentences.size())};
}

std::vector<std::string> lead_words(const std::vector<std::string>& sentences, size_t min_words) {
  std::vector<std::string> out;
  size_t words = 0;
  for (const std::string& s : sentences) {
    if (words >= min_words) break;
    out.push_back(s);
    words += word_count(s);
  }
  return out;
}

RepetitionStats repeated_trigram_rate(const std::vector<std::vector<std::string>>& outputs) {
  RepetitionStats st;
  for (const auto& toks : outputs) {
    std::set<std::tuple<std::string_view, std::string_view, std::string_view>> seen;
    for (size_t t = 0; t + 3 <= toks.size(); ++t) {
      ++st.total;
      if (!seen.emplace(toks[t], toks[t + 1], toks[t + 2]).second) ++st.repeated;
    }
  }
  st.rate = st.total > 0 ? static_cast<double>(st.repeated) / static_cast<double>(st.total) : 0.0;
  return st;
}

CopyStats oov_copy_rate(const std::vector<std::vector<std::string>>& sources,
                        const std::vector<std::vector<std::string>>& outputs,
                        const std::vector<std::vector<std::string>>& references,
                        const std::unordered_set<std::string>& vocab) {
  ENGRAM_CHECK(sources.size() == outputs.size() && outputs.size() == references.size(),
               "oov_copy_rate: {} sources, {} outputs, {} references (one each per example)", sources.size(),
               outputs.size(), references.size());
  CopyStats st;
  for (size_t i = 0; i < references.size(); ++i) {
    const std::unordered_set<std::string_view> source(sources[i].begin(), sources[i].end());
    std::unordered_map<std::string_view, int64_t> ref_count, out_count;
    for (const auto& w : references[i])
      if (!vocab.count(w) && source.count(w)) ++ref_count[w];
    for (const auto& w : outputs[i])
      if (ref_count.count(w)) ++out_count[w];
    for (const auto& [w, c] : ref_count) {
      st.candidates += c;
      const auto it = out_count.find(w);
      if (it != out_count.end()) st.copied += std::min(c, it->second);
    }
  }
  st.rate = st.candidates > 0 ? static_cast<double>(st.copied) / static_cast<double>(st.candidates) : 0.0;
  return st;
}

}  // namespace engram::eval
