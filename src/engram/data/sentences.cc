// Rule-based sentence splitting; see sentences.h for the rules.
#include "engram/data/sentences.h"

namespace engram::data {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_terminator(char c) { return c == '.' || c == '!' || c == '?'; }

// Length in bytes of a closing quote / bracket at s[i] (" ' ) ] ” ’), else 0.
size_t closer_at(std::string_view s, size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return 1;
  if (s.substr(i, 3) == "\u201D" || s.substr(i, 3) == "\u2019") return 3;
  return 0;
}

// Length in bytes of an opening quote at s[i] (" ' “ ‘), else 0.
size_t opener_at(std::string_view s, size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'') return 1;
  if (s.substr(i, 3) == "\u201C" || s.substr(i, 3) == "\u2018") return 3;
  return 0;
}

bool closes_before(std::string_view s, size_t i) {  // s[i - 1] ends a closing quote / bracket
  if (i == 0) return false;
  const char c = s[i - 1];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return true;
  return i >= 3 && (s.substr(i - 3, 3) == "\u201D" || s.substr(i - 3, 3) == "\u2019");
}

// Is there a sentence boundary after the terminator run s[run, end) (closers included)?
bool boundary(std::string_view s, size_t run, size_t end) {
  const size_t n = s.size();
  if (end >= n) return false;
  if (is_space(s[end])) {
    size_t k = end;
    while (k < n && is_space(s[k])) ++k;
    if (k == n || is_lower(s[k])) return false;
    // A single '.' right after a lone capital letter: an initial ("J. K.", "U.S. troops").
    const bool lone_capital = run >= 1 && is_upper(s[run - 1]) &&
                              (run == 1 || is_space(s[run - 2]) || s[run - 2] == '.');
    return !(end == run + 1 && s[run] == '.' && lone_capital);
  }
  const bool after_word = run > 0 && (is_lower(s[run - 1]) || is_digit(s[run - 1]) || closes_before(s, run));
  if (!after_word) return false;
  if (is_upper(s[end])) {
    if (end + 1 == n) return false;
    const char next = s[end + 1];
    return is_lower(next) || next == ' ' || next == '\'';
  }
  const size_t q = opener_at(s, end);
  return q > 0 && end + q < n && is_upper(s[end + q]);
}

bool has_alnum(std::string_view s) {
  for (char c : s)
    if (is_lower(c) || is_upper(c) || is_digit(c) || static_cast<unsigned char>(c) >= 0x80) return true;
  return false;
}

std::string_view trim_space(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && (is_space(s[a]) || s[a] == '\n')) ++a;
  while (b > a && (is_space(s[b - 1]) || s[b - 1] == '\n')) --b;
  return s.substr(a, b - a);
}

void emit(std::string_view piece, std::vector<std::string>* out) {
  piece = trim_space(piece);
  if (piece.empty()) return;
  if (!has_alnum(piece) && !out->empty()) {
    out->back() += " ";
    out->back() += piece;
    return;
  }
  out->emplace_back(piece);
}

}  // namespace

size_t sentence_end(std::string_view line, size_t start) {
  const size_t n = line.size();
  size_t i = start;
  while (i < n && is_space(line[i])) ++i;
  while (i < n) {
    if (!is_terminator(line[i])) {
      ++i;
      continue;
    }
    const size_t run = i;
    size_t j = i;
    while (j < n && is_terminator(line[j])) ++j;
    for (size_t len; j < n && (len = closer_at(line, j)) > 0; j += len) {
      // A straight double quote closes this sentence when a space, the end or another closer
      // follows it; glued to the next word it opens the next sentence ("ills.\"Invisible\" ink").
      // (Counting quotes does not work on news text: a quotation of several sentences reopens
      // its quote at each new sentence without closing it.)
      if (line[j] == '"' && j + 1 < n && !is_space(line[j + 1]) && closer_at(line, j + 1) == 0) break;
    }
    if (boundary(line, run, j)) return j;
    i = j;
  }
  return n;
}

std::vector<std::string> split_sentences(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    for (size_t start = 0; start < line.size();) {
      const size_t end = sentence_end(line, start);
      emit(line.substr(start, end - start), &out);
      start = end;
    }
    pos = nl + 1;
  }
  return out;
}

}  // namespace engram::data
