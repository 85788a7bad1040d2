// CC-CEDICT reader and the entry -> (headword, gloss) filter (see cedict.h).
#include "engram/data/cedict.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

constexpr std::string_view kForm = "expected 'Traditional Simplified [pin1 yin1] /sense 1/sense 2/'";

// The code point of the valid UTF-8 sequence starting at s[i]; *len = its bytes.
char32_t code_point(std::string_view s, size_t i, size_t* len) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return *len = 1, c;
  if (c < 0xE0) return *len = 2, ((c & 0x1Fu) << 6) | (b(1) & 0x3Fu);
  if (c < 0xF0) return *len = 3, ((c & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
  return *len = 4, ((c & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
}

// CJK Unified Ideographs (+ Extension A, compatibility ideographs, the supplementary planes'
// extensions B-H): the characters a headword is written in.
bool is_han(char32_t c) {
  return (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0x20000 && c <= 0x3FFFF);
}

bool all_han(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0, n = 0; i < s.size(); i += n)
    if (!is_han(code_point(s, i, &n))) return false;
  return true;
}

bool any_han(std::string_view s) {
  for (size_t i = 0, n = 0; i < s.size(); i += n)
    if (is_han(code_point(s, i, &n))) return true;
  return false;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view strip_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Usage labels whose sense is not the plain modern word a translation should learn.
constexpr std::array<std::string_view, 14> kRegisters = {
    "literary", "archaic", "arch.",       "old",            "obsolete",  "dialect", "Cantonese",
    "Tw",       "HK",      "Tw, HK",      "Internet slang", "slang",     "vulgar",  "bound form"};

SenseReject cross_reference_kind(std::string_view t) {
  // Checked on the text with parentheses removed, before the cut at ';' / ','.
  static constexpr std::array<std::string_view, 9> kXrefStarts = {
      "see ", "used in ", "abbr. for ", "abbr. to ", "also written ", "also pr. ", "also called ", "also known as ",
      "same as "};
  for (std::string_view p : kXrefStarts)
    if (starts_with(t, p)) return SenseReject::kCrossReference;
  if (t.find("variant of") != std::string_view::npos) return SenseReject::kCrossReference;
  if (t.find("radical in Chinese characters") != std::string_view::npos || starts_with(t, "Kangxi radical"))
    return SenseReject::kCrossReference;
  if (starts_with(t, "surname ")) return SenseReject::kSurname;
  if (starts_with(t, "CL:") || starts_with(t, "classifier for") || starts_with(t, "classifier of"))
    return SenseReject::kClassifier;
  if (starts_with(t, "lit. ")) return SenseReject::kLiteral;
  return SenseReject::kNone;
}

// "Beijing municipality" -> "Beijing"; "the Great Wall" -> "the Great Wall"; "Temple of Heaven"
// -> "Temple of Heaven"; "" when the first word (after an optional "the") is not capitalised.
std::string leading_name(const std::vector<std::string>& words) {
  auto capital = [](const std::string& w) {
    const unsigned char c = static_cast<unsigned char>(w[0]);
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;  // non-ASCII: "Ürümqi"
  };
  size_t i = 0;
  std::string out;
  if (!words.empty() && (words[0] == "the" || words[0] == "The")) {
    out = "the";
    i = 1;
  }
  size_t end = i;
  while (end < words.size()) {
    const std::string& w = words[end];
    const bool joiner = w == "of" || w == "and" || w == "the" || w == "de";
    if (capital(w) || (joiner && end > i && end + 1 < words.size() && capital(words[end + 1]))) {
      ++end;
      continue;
    }
    break;
  }
  if (end == i) return "";
  for (size_t k = i; k < end; ++k) out += (out.empty() ? "" : " ") + words[k];
  return out;
}

// The simplified headword that a "see X[...]" / "see T|S[...]" sense points to, or "".
std::string see_target(std::string_view sense) {
  sense = strip_spaces(sense);
  if (!starts_with(sense, "see ")) return "";
  sense.remove_prefix(4);
  if (starts_with(sense, "also ")) sense.remove_prefix(5);
  const size_t bracket = sense.find('[');
  if (bracket == std::string_view::npos) return "";
  std::string_view word = sense.substr(0, bracket);
  if (const size_t bar = word.find('|'); bar != std::string_view::npos) word = word.substr(bar + 1);
  return all_han(word) ? std::string(word) : "";
}

}  // namespace

CedictEntry parse_cedict_line(std::string_view line, std::string_view where) {
  CedictEntry e;
  const size_t sp1 = line.find(' ');
  ENGRAM_CHECK(sp1 != std::string_view::npos && sp1 > 0, "{}: CC-CEDICT entry without a space after the traditional "
               "headword ({})", where, kForm);
  const size_t sp2 = line.find(' ', sp1 + 1);
  ENGRAM_CHECK(sp2 != std::string_view::npos && sp2 > sp1 + 1, "{}: CC-CEDICT entry without a simplified headword "
               "between single spaces ({})", where, kForm);
  ENGRAM_CHECK(sp2 + 1 < line.size() && line[sp2 + 1] == '[', "{}: CC-CEDICT entry without '[pinyin]' after the "
               "headwords ({})", where, kForm);
  const size_t close = line.find(']', sp2 + 1);
  ENGRAM_CHECK(close != std::string_view::npos, "{}: CC-CEDICT entry: the pinyin's '[' is never closed ({})", where,
               kForm);
  std::string_view rest = line.substr(close + 1);
  ENGRAM_CHECK(starts_with(rest, " /"), "{}: CC-CEDICT entry: no ' /' after the pinyin's ']' ({})", where, kForm);
  rest.remove_prefix(2);
  ENGRAM_CHECK(!rest.empty() && rest.back() == '/', "{}: CC-CEDICT entry: the senses do not end with '/' ({})",
               where, kForm);
  rest.remove_suffix(1);
  e.traditional = std::string(line.substr(0, sp1));
  e.simplified = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  e.pinyin = std::string(line.substr(sp2 + 2, close - sp2 - 2));
  ENGRAM_CHECK(utf8_length(e.traditional) == utf8_length(e.simplified),
               "{}: CC-CEDICT entry: the traditional headword has {} characters, the simplified one {} ({})", where,
               utf8_length(e.traditional), utf8_length(e.simplified), kForm);
  if (rest.empty()) return e;  // "//": an entry without senses (the file has a few)
  size_t start = 0;
  while (true) {
    const size_t slash = rest.find('/', start);
    std::string_view sense = rest.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    ENGRAM_CHECK(!strip_spaces(sense).empty(), "{}: CC-CEDICT entry: sense {} is empty ({})", where,
                 e.senses.size() + 1, kForm);
    e.senses.emplace_back(sense);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return e;
}

std::vector<CedictEntry> read_cedict(const std::string& path) {
  std::vector<CedictEntry> out;
  const std::vector<std::string> lines = read_lines(path, kMaxTextFileBytes, "a CC-CEDICT file");
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    out.push_back(parse_cedict_line(line, fmt::format("{}:{}", path, i + 1)));
    out.back().line = static_cast<int64_t>(i + 1);
  }
  return out;
}

SenseGloss cedict_gloss(std::string_view sense, bool proper_noun) {
  sense = strip_spaces(sense);
  if (starts_with(sense, "(")) {
    const size_t close = sense.find(')');
    if (close != std::string_view::npos) {
      const std::string_view tag = sense.substr(1, close - 1);
      if (std::find(kRegisters.begin(), kRegisters.end(), tag) != kRegisters.end())
        return {"", SenseReject::kRegister};
    }
  }
  // Remove parenthesised text: depth counts '(' minus matched ')'.
  std::string flat;
  int depth = 0;
  for (char c : sense) {
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      depth = std::max(depth - 1, 0);
    } else if (depth == 0) {
      flat += c;
    }
  }
  std::vector<std::string> words = split_whitespace(flat);
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
  if (text.empty()) return {"", SenseReject::kEmpty};
  if (const SenseReject r = cross_reference_kind(text); r != SenseReject::kNone) return {"", r};
  if (starts_with(text, "fig. ")) text.erase(0, 5);
  text = std::string(strip_spaces(std::string_view(text).substr(0, text.find_first_of(";,"))));
  if (text.empty()) return {"", SenseReject::kEmpty};
  if (any_han(text) || text.find('[') != std::string::npos || text.find('|') != std::string::npos)
    return {"", SenseReject::kChinese};
  if (proper_noun) {
    text = leading_name(split_whitespace(text));
    if (text.empty()) return {"", SenseReject::kNoName};
  }
  return {text, SenseReject::kNone};
}

DictionaryPairs cedict_pairs(const std::vector<CedictEntry>& entries, const DictionaryOptions& o) {
  ENGRAM_CHECK(o.max_chars >= 1 && o.max_words >= 1, "dictionary: max_chars {} and max_words {} must be >= 1",
               o.max_chars, o.max_words);
  DictionaryPairs out;
  DictionaryStats& st = out.stats;
  st.entries = static_cast<int64_t>(entries.size());
  // Pass 1: each entry's own gloss (its first kept sense of at most max_words words; "" when
  // none), whether it has a kept sense at all, and the first gloss of every headword.
  std::vector<std::string> gloss(entries.size());
  std::vector<bool> han(entries.size()), usable(entries.size()), proper(entries.size()), bare(entries.size());
  std::unordered_map<std::string, std::string> by_headword;
  for (size_t k = 0; k < entries.size(); ++k) {
    const CedictEntry& e = entries[k];
    han[k] = all_han(e.simplified);
    if (!han[k]) continue;
    proper[k] = !e.pinyin.empty() && e.pinyin[0] >= 'A' && e.pinyin[0] <= 'Z';
    for (const std::string& s : e.senses) {
      const SenseGloss g = cedict_gloss(s, proper[k]);
      ++st.senses;
      switch (g.reject) {
        case SenseReject::kNone: break;
        case SenseReject::kRegister: ++st.senses_register; break;
        case SenseReject::kCrossReference: ++st.senses_cross_reference; break;
        case SenseReject::kSurname: ++st.senses_surname; break;
        case SenseReject::kClassifier: ++st.senses_classifier; break;
        case SenseReject::kLiteral: ++st.senses_literal; break;
        case SenseReject::kChinese: ++st.senses_chinese; break;
        case SenseReject::kEmpty: ++st.senses_empty; break;
        case SenseReject::kNoName: ++st.senses_no_name; break;
      }
      if (g.reject != SenseReject::kNone) continue;
      usable[k] = true;
      std::string text = g.text;
      const bool infinitive = !o.infinitive_to && !proper[k] && starts_with(text, "to ");
      if (infinitive) text.erase(0, 3);
      if (gloss[k].empty() && static_cast<int64_t>(split_whitespace(text).size()) <= o.max_words)
        gloss[k] = std::move(text), bare[k] = infinitive;
    }
    if (!gloss[k].empty()) by_headword.emplace(e.simplified, gloss[k]);
  }
  // Pass 2: "see X" for entries without a gloss of their own, then the length and duplicate filters.
  std::unordered_set<std::string> taken;
  for (size_t k = 0; k < entries.size(); ++k) {
    const CedictEntry& e = entries[k];
    if (!han[k]) {
      ++st.not_hanzi;
      continue;
    }
    std::string g = gloss[k];
    bool followed = false;
    if (g.empty() && !usable[k]) {
      for (const std::string& s : e.senses) {
        const std::string target = see_target(s);
        if (target.empty() || target == e.simplified) continue;
        if (auto it = by_headword.find(target); it != by_headword.end()) {
          g = it->second;
          followed = true;
          break;
        }
      }
    }
    if (g.empty() && !usable[k]) {
      ++st.no_gloss;
    } else if (utf8_length(e.simplified) > o.max_chars) {
      ++st.too_long_zh;
    } else if (g.empty()) {
      ++st.too_long_en;
    } else if (!taken.insert(e.simplified).second) {
      ++st.duplicate;
    } else {
      out.zh.push_back(e.simplified);
      out.en.push_back(std::move(g));
      out.line.push_back(e.line);
      out.name.push_back(proper[k]);
      ++st.kept;
      if (followed) ++st.see_followed;
      if (proper[k]) ++st.names;
      if (bare[k]) ++st.infinitives;
    }
  }
  return out;
}

std::string to_string(const DictionaryStats& s) {
  return fmt::format(
      "{} entries: {} pairs kept ({} names, {} through 'see X', {} without an infinitive's 'to'); dropped: {} "
      "headwords not all Han, {} without a usable sense, {} headwords over max_chars, {} glosses over max_words, "
      "{} repeated headwords (senses: {} read, {} register-marked, {} cross-references, {} surnames, {} classifiers, "
      "{} 'lit.', {} with Chinese left, {} empty, {} proper nouns without a name)",
      s.entries, s.kept, s.names, s.see_followed, s.infinitives, s.not_hanzi, s.no_gloss, s.too_long_zh,
      s.too_long_en, s.duplicate, s.senses, s.senses_register, s.senses_cross_reference, s.senses_surname,
      s.senses_classifier, s.senses_literal, s.senses_chinese, s.senses_empty, s.senses_no_name);
}

}  // namespace engram::data
