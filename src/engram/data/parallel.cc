// Parallel corpus readers (see parallel.h).
#include "engram/data/parallel.h"

#include <algorithm>
#include <string_view>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
}

// Adds one pair to the corpus, applying the filters; returns false once max_pairs is reached.
bool add_pair(std::string src, std::string tgt, int64_t line, const ParallelOptions& o,
              ParallelCorpus* out) {
  if (blank(src) || blank(tgt)) {
    ++out->stats.empty_skipped;
    return true;
  }
  const int64_t ls = text_length(src, o.length_unit), lt = text_length(tgt, o.length_unit);
  if (ls < o.min_length || lt < o.min_length ||
      (o.max_length > 0 && (ls > o.max_length || lt > o.max_length))) {
    ++out->stats.length_skipped;
    return true;
  }
  out->src.push_back(std::move(src));
  out->tgt.push_back(std::move(tgt));
  out->line.push_back(line);
  ++out->stats.kept;
  return o.max_pairs == 0 || out->stats.kept < o.max_pairs;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return fields;
}

}  // namespace

bool strip_final_punctuation(std::string* text) {
  static constexpr std::string_view kMarks[] = {".", "!", "?", "\xE3\x80\x82" /* 。 */, "\xEF\xBC\x81" /* ！ */,
                                                "\xEF\xBC\x9F" /* ？ */, "\xE2\x80\xA6" /* … */};
  std::string_view t = *text;
  auto trim_spaces = [&] {
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  };
  trim_spaces();
  bool removed = false;
  for (bool again = true; again;) {
    again = false;
    for (std::string_view m : kMarks) {
      if (t.size() >= m.size() && t.substr(t.size() - m.size()) == m) {
        t.remove_suffix(m.size());
        trim_spaces();
        removed = again = true;
        break;
      }
    }
  }
  if (!removed || t.empty()) return false;
  text->resize(t.size());
  return true;
}

bool ends_in_cjk(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  size_t start = text.size();  // the last code point's lead byte
  while (start > 0 && (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) --start;
  if (start == 0) return false;
  const auto lead = static_cast<unsigned char>(text[--start]);
  const size_t len = text.size() - start;
  if (lead < 0xE0 || (lead < 0xF0 && len != 3) || (lead >= 0xF0 && len != 4)) return false;  // below U+0800, or malformed
  uint32_t cp = lead >= 0xF0 ? lead & 0x07u : lead & 0x0Fu;
  for (size_t i = start + 1; i < text.size(); ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[i]) & 0x3Fu);
  return cp >= 0x2E80;
}

int64_t text_length(const std::string& text, LengthUnit unit) {
  if (unit == LengthUnit::kChars) return utf8_length(text);
  return static_cast<int64_t>(split_whitespace(text).size());
}

ParallelCorpus read_parallel(const std::string& src_path, const std::string& tgt_path,
                             const ParallelOptions& o) {
  auto src = read_lines(src_path);
  auto tgt = read_lines(tgt_path);
  ENGRAM_CHECK(src.size() == tgt.size(),
               "parallel corpus: line counts differ: {} has {} lines, {} has {} lines", src_path,
               src.size(), tgt_path, tgt.size());
  ParallelCorpus out;
  out.stats.lines = static_cast<int64_t>(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (!add_pair(std::move(src[i]), std::move(tgt[i]), static_cast<int64_t>(i + 1), o, &out)) {
      break;
    }
  }
  return out;
}

ParallelCorpus read_tsv_pairs(const std::string& path, const ParallelOptions& o) {
  ENGRAM_CHECK(o.src_field >= 0 && o.tgt_field >= 0 && o.src_field != o.tgt_field,
               "parallel corpus: src_field {} and tgt_field {} must be distinct and >= 0",
               o.src_field, o.tgt_field);
  auto lines = read_lines(path);
  ParallelCorpus out;
  out.stats.lines = static_cast<int64_t>(lines.size());
  const size_t need = static_cast<size_t>(std::max(o.src_field, o.tgt_field)) + 1;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) {  // a blank line is an empty pair, not a malformed one
      ++out.stats.empty_skipped;
      continue;
    }
    auto fields = split_tabs(lines[i]);
    ENGRAM_CHECK(fields.size() >= need, "{}:{}: {} tab-separated field(s), need at least {}", path,
                 i + 1, fields.size(), need);
    if (!add_pair(std::move(fields[o.src_field]), std::move(fields[o.tgt_field]),
                  static_cast<int64_t>(i + 1), o, &out)) {
      break;
    }
  }
  return out;
}

}  // namespace engram::data
