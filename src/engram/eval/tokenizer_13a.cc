// mteval-v13a tokenization (see tokenizer_13a.h). The four regular expressions of sacreBLEU's
// TokenizerRegexp are re-expressed as left-to-right scans with the same non-overlapping match
// semantics as Python's re.sub. Working on UTF-8 bytes gives the same result as Python working
// on code points: every pattern character is ASCII, "[^0-9]" also matches any non-ASCII byte, and
// a continuation byte can never be the '.', ',' or '-' that starts or ends a match.
#include "engram/eval/tokenizer_13a.h"

#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

void replace_all(std::string* s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = s->find(from, pos);
    if (hit == std::string::npos) break;
    out.append(*s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  if (pos == 0) return;
  out.append(*s, pos, std::string::npos);
  *s = std::move(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_comma(char c) { return c == '.' || c == ','; }

// r'([\{-\~\[-\` -\&\(-\+\:-\@\/])' -> r' \1 ': ASCII symbols except ' , - . and alphanumerics.
bool is_split_symbol(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// Python re.sub for a two-character pattern (first, second) replaced by pre + \1 + mid + \2 + post.
template <class First, class Second>
std::string sub_pair(const std::string& s, First first, Second second, std::string_view pre,
                     std::string_view mid, std::string_view post) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      out.append(pre);
      out.push_back(s[i]);
      out.append(mid);
      out.push_back(s[i + 1]);
      out.append(post);
      i += 2;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
}

std::string tokenize_joined(std::string_view input) {
  std::string line(input);
  replace_all(&line, "<skipped>", "");
  replace_all(&line, "-\n", "");
  replace_all(&line, "\n", " ");
  replace_all(&line, "&quot;", "\"");
  replace_all(&line, "&amp;", "&");
  replace_all(&line, "&lt;", "<");
  replace_all(&line, "&gt;", ">");

  std::string s;
  s.reserve(line.size() * 2 + 2);
  s.push_back(' ');
  for (char c : line) {
    if (is_split_symbol(c)) {
      s.push_back(' ');
      s.push_back(c);
      s.push_back(' ');
    } else {
      s.push_back(c);
    }
  }
  s.push_back(' ');

  auto not_digit = [](char c) { return !is_digit(c); };
  auto dash = [](char c) { return c == '-'; };
  // period and comma unless preceded by a digit: ([^0-9])([\.,]) -> \1 \2 (space after)
  s = sub_pair(s, not_digit, is_period_comma, "", " ", " ");
  // period and comma unless followed by a digit: ([\.,])([^0-9]) -> ' \1 \2'
  s = sub_pair(s, is_period_comma, not_digit, " ", " ", "");
  // dash preceded by a digit: ([0-9])(-) -> \1 \2 (space after)
  s = sub_pair(s, is_digit, dash, "", " ", " ");
  return s;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  const std::string joined = tokenize_joined(line);
  std::string out;
  for (auto tok : split_python(joined)) {
    if (!out.empty()) out.push_back(' ');
    out.append(tok);
  }
  return out;
}

std::vector<std::string> tokens_13a(std::string_view line) {
  const std::string s = tokenize_joined(line);
  std::vector<std::string> out;
  for (auto tok : split_python(s)) out.emplace_back(tok);
  return out;
}

}  // namespace engram::eval
