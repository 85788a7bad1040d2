// read_summary_tsv: the strict `source<TAB>target` reader.
#include "engram/data/summary_pairs.h"

#include <fmt/format.h>

#include <algorithm>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {

namespace {

std::string_view trim_spaces(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string SummaryPair::target() const {
  std::string out;
  for (const std::string& s : target_sentences) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::vector<std::string> split_summary_sentences(std::string_view target) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= target.size()) {
    size_t end = target.find("\\n", begin);
    if (end == std::string_view::npos) end = target.size();
    const std::string_view piece = trim_spaces(target.substr(begin, end - begin));
    if (!piece.empty()) out.emplace_back(piece);
    begin = end + 2;
  }
  return out;
}

std::vector<SummaryPair> read_summary_tsv(const std::string& path, int64_t max_pairs) {
  const std::vector<std::string> lines = read_lines_or_stdin(path);
  const std::string name = path == "-" ? "<stdin>" : path;
  std::vector<SummaryPair> out;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (max_pairs > 0 && static_cast<int64_t>(out.size()) >= max_pairs) break;
    const std::string& l = lines[k];
    const int64_t line = static_cast<int64_t>(k) + 1;
    const auto tabs = std::count(l.begin(), l.end(), '\t');
    ENGRAM_CHECK(tabs == 1, "{}:{}: expected 'source<TAB>target', found {} tabs", name, line, tabs);
    const size_t tab = l.find('\t');
    SummaryPair p;
    p.source = std::string(trim_spaces(std::string_view(l).substr(0, tab)));
    p.target_sentences = split_summary_sentences(std::string_view(l).substr(tab + 1));
    p.line = line;
    ENGRAM_CHECK(!p.source.empty(), "{}:{}: empty source", name, line);
    ENGRAM_CHECK(!p.target_sentences.empty(), "{}:{}: empty target", name, line);
    out.push_back(std::move(p));
  }
  ENGRAM_CHECK(!out.empty(), "{}: no 'source<TAB>target' pairs", name);
  return out;
}

}  // namespace engram::data
