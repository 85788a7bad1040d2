// Porter stemmer, NLTK_EXTENSIONS mode (see porter.h). Each step is a list of (suffix,
// replacement, condition) rules; the first rule whose suffix the word ends with decides: its
// condition holds -> the suffix is replaced, else the word is left as it is (Porter's "longest
// matching suffix" rule, the lists being ordered so that longer suffixes come first).
#include "engram/eval/porter.h"

#include <array>
#include <functional>
#include <utility>
#include <vector>

namespace engram::eval {
namespace {

using Word = std::string;

bool is_vowel_letter(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// Porter's consonant: not a, e, i, o, u, and not a y that follows a consonant.
bool is_consonant(const Word& w, size_t i) {
  if (is_vowel_letter(w[i])) return false;
  if (w[i] == 'y') return i == 0 ? true : !is_consonant(w, i - 1);
  return true;
}

// m in [C](VC)^m[V]: the number of vowel-consonant transitions.
int measure(const Word& stem) {
  int m = 0;
  for (size_t i = 1; i < stem.size(); ++i) {
    if (!is_consonant(stem, i - 1) && is_consonant(stem, i)) ++m;
  }
  return m;
}

bool contains_vowel(const Word& stem) {
  for (size_t i = 0; i < stem.size(); ++i)
    if (!is_consonant(stem, i)) return true;
  return false;
}

bool ends_with(const Word& w, std::string_view s) {
  return w.size() >= s.size() && std::string_view(w).substr(w.size() - s.size()) == s;
}

Word drop(const Word& w, size_t n) { return w.substr(0, w.size() - n); }

bool ends_double_consonant(const Word& w) {
  const size_t n = w.size();
  return n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1);
}

// *o: the stem ends consonant-vowel-consonant, the last not w, x or y; NLTK also accepts a
// two-letter vowel-consonant stem.
bool ends_cvc(const Word& w) {
  const size_t n = w.size();
  if (n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) &&
      w[n - 1] != 'w' && w[n - 1] != 'x' && w[n - 1] != 'y') {
    return true;
  }
  return n == 2 && !is_consonant(w, 0) && is_consonant(w, 1);
}

struct Rule {
  std::string_view suffix;
  std::string_view replacement;
  std::function<bool(const Word& stem)> condition;  // empty = always
};

Word apply_rules(const Word& w, const std::vector<Rule>& rules) {
  for (const Rule& r : rules) {
    if (!ends_with(w, r.suffix)) continue;
    const Word stem = drop(w, r.suffix.size());
    if (!r.condition || r.condition(stem)) return stem + std::string(r.replacement);
    return w;
  }
  return w;
}

bool m_positive(const Word& stem) { return measure(stem) > 0; }
bool m_above_one(const Word& stem) { return measure(stem) > 1; }

Word step1a(const Word& w) {
  if (w.size() == 4 && ends_with(w, "ies")) return drop(w, 3) + "ie";
  return apply_rules(w, {{"sses", "ss", {}}, {"ies", "i", {}}, {"ss", "ss", {}}, {"s", "", {}}});
}

Word step1b(const Word& w) {
  if (ends_with(w, "ied")) return drop(w, 3) + (w.size() == 4 ? "ie" : "i");
  if (ends_with(w, "eed")) {
    const Word stem = drop(w, 3);
    return measure(stem) > 0 ? stem + "ee" : w;
  }
  Word stem;
  bool removed = false;
  for (std::string_view suffix : {std::string_view("ed"), std::string_view("ing")}) {
    if (ends_with(w, suffix) && contains_vowel(drop(w, suffix.size()))) {
      stem = drop(w, suffix.size());
      removed = true;
      break;
    }
  }
  if (!removed) return w;
  if (ends_with(stem, "at")) return stem + "e";
  if (ends_with(stem, "bl")) return stem + "e";
  if (ends_with(stem, "iz")) return stem + "e";
  if (ends_double_consonant(stem)) {
    const char last = stem.back();
    return (last != 'l' && last != 's' && last != 'z') ? drop(stem, 1) : stem;
  }
  if (measure(stem) == 1 && ends_cvc(stem)) return stem + "e";
  return stem;
}

Word step1c(const Word& w) {
  if (!ends_with(w, "y")) return w;
  const Word stem = drop(w, 1);
  return (stem.size() > 1 && is_consonant(stem, stem.size() - 1)) ? stem + "i" : w;
}

Word step2(const Word& w) {
  if (ends_with(w, "alli") && m_positive(drop(w, 4))) return step2(drop(w, 4) + "al");
  // "-logi" -> "-log" measures the stem with its "l" (the word less "ogi"), so that short stems
  // like "geo" and "theo" are treated as "archaeo".
  static const std::vector<Rule> rules = {
      {"ational", "ate", m_positive}, {"tional", "tion", m_positive}, {"enci", "ence", m_positive},
      {"anci", "ance", m_positive},   {"izer", "ize", m_positive},    {"bli", "ble", m_positive},
      {"alli", "al", m_positive},     {"entli", "ent", m_positive},   {"eli", "e", m_positive},
      {"ousli", "ous", m_positive},   {"ization", "ize", m_positive}, {"ation", "ate", m_positive},
      {"ator", "ate", m_positive},    {"alism", "al", m_positive},    {"iveness", "ive", m_positive},
      {"fulness", "ful", m_positive}, {"ousness", "ous", m_positive}, {"aliti", "al", m_positive},
      {"iviti", "ive", m_positive},   {"biliti", "ble", m_positive},  {"fulli", "ful", m_positive},
      {"logi", "log", [](const Word& stem) { return m_positive(stem + "l"); }},
  };
  return apply_rules(w, rules);
}

Word step3(const Word& w) {
  static const std::vector<Rule> rules = {
      {"icate", "ic", m_positive}, {"ative", "", m_positive}, {"alize", "al", m_positive},
      {"iciti", "ic", m_positive}, {"ical", "ic", m_positive}, {"ful", "", m_positive},
      {"ness", "", m_positive},
  };
  return apply_rules(w, rules);
}

Word step4(const Word& w) {
  static const std::vector<Rule> rules = {
      {"al", "", m_above_one},    {"ance", "", m_above_one}, {"ence", "", m_above_one},
      {"er", "", m_above_one},    {"ic", "", m_above_one},   {"able", "", m_above_one},
      {"ible", "", m_above_one},  {"ant", "", m_above_one},  {"ement", "", m_above_one},
      {"ment", "", m_above_one},  {"ent", "", m_above_one},
      {"ion", "", [](const Word& s) { return measure(s) > 1 && (s.back() == 's' || s.back() == 't'); }},
      {"ou", "", m_above_one},    {"ism", "", m_above_one},  {"ate", "", m_above_one},
      {"iti", "", m_above_one},   {"ous", "", m_above_one},  {"ive", "", m_above_one},
      {"ize", "", m_above_one},
  };
  return apply_rules(w, rules);
}

Word step5a(const Word& w) {
  if (!ends_with(w, "e")) return w;
  const Word stem = drop(w, 1);
  const int m = measure(stem);
  if (m > 1 || (m == 1 && !ends_cvc(stem))) return stem;
  return w;
}

Word step5b(const Word& w) {
  // (m > 1 and *d and *L) -> single letter; the measure is of the word less one "l".
  if (ends_with(w, "ll") && measure(drop(w, 1)) > 1) return drop(w, 1);
  return w;
}

}  // namespace

std::string porter_stem(std::string_view word) {
  static const std::array<std::pair<std::string_view, std::string_view>, 16> kIrregular = {{
      {"skies", "sky"}, {"sky", "sky"}, {"dying", "die"}, {"lying", "lie"}, {"tying", "tie"},
      {"news", "news"}, {"innings", "inning"}, {"inning", "inning"}, {"outings", "outing"},
      {"outing", "outing"}, {"cannings", "canning"}, {"canning", "canning"}, {"howe", "howe"},
      {"proceed", "proceed"}, {"exceed", "exceed"}, {"succeed", "succeed"},
  }};
  for (const auto& [form, stem] : kIrregular)
    if (word == form) return std::string(stem);
  Word w(word);
  if (w.size() <= 2) return w;
  w = step1a(w);
  w = step1b(w);
  w = step1c(w);
  w = step2(w);
  w = step3(w);
  w = step4(w);
  w = step5a(w);
  w = step5b(w);
  return w;
}

}  // namespace engram::eval
