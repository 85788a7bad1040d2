// BBC News Summary reader (bbc.h): file pairing, encodings, headline / body / summary parsing
// and the fixed split.
#include "engram/data/bbc.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

namespace fs = std::filesystem;

// Files the original corpus ships in ISO-8859-1 (relative to DIR).
const std::set<std::string> kLatin1Files = {"articles/sport/199.txt"};

std::string read_bytes(const fs::path& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  ENGRAM_CHECK(in.good(), "bbc: {}: cannot open", name);
  std::ostringstream ss;
  ss << in.rdbuf();
  ENGRAM_CHECK(!in.bad(), "bbc: {}: read error", name);
  return ss.str();
}

std::string latin1_to_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// The file's text as UTF-8: converted from ISO-8859-1 for the listed files (when they are not
// already valid UTF-8), else validated.
std::string decode(std::string bytes, const std::string& name) {
  const size_t bad = find_invalid_utf8(bytes);
  if (bad == std::string::npos) return bytes;
  if (kLatin1Files.count(name)) return latin1_to_utf8(bytes);
  const size_t line = 1 + std::count(bytes.begin(), bytes.begin() + bad, '\n');
  const size_t line_start = bytes.rfind('\n', bad == 0 ? 0 : bad - 1);
  const size_t column = bad - (line_start == std::string::npos || line_start >= bad ? 0 : line_start + 1) + 1;
  ENGRAM_CHECK(false, "bbc: {}:{}: invalid UTF-8 (byte 0x{:02X} at column {})", name, line,
               static_cast<unsigned char>(bytes[bad]), column);
  return {};
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

bool is_blank_char(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

bool blank(std::string_view s) { return std::all_of(s.begin(), s.end(), is_blank_char); }

// The summary cut at the article's body sentences where they match (longest first), else by
// split_sentences' rules (a piece without letters or digits joins the previous sentence).
std::vector<std::string> split_summary(std::string_view summary, const std::vector<std::string>& body) {
  std::vector<std::string_view> by_length(body.begin(), body.end());
  std::sort(by_length.begin(), by_length.end(),
            [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
  std::vector<std::string> out;
  for (std::string_view line : lines_of(summary)) {
    size_t p = 0;
    while (p < line.size()) {
      while (p < line.size() && is_blank_char(line[p])) ++p;
      if (p == line.size()) break;
      size_t end = std::string_view::npos;
      for (std::string_view s : by_length) {
        if (line.compare(p, s.size(), s) == 0) {
          end = p + s.size();
          break;
        }
      }
      if (end == std::string_view::npos) end = sentence_end(line, p);
      std::string_view piece = line.substr(p, end - p);
      while (!piece.empty() && is_blank_char(piece.back())) piece.remove_suffix(1);
      const bool word = std::any_of(piece.begin(), piece.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
      });
      if (!word && !out.empty()) {
        out.back() += " ";
        out.back() += piece;
      } else if (!piece.empty()) {
        out.emplace_back(piece);
      }
      p = end;
    }
  }
  return out;
}

int number_of(const fs::path& file, const std::string& name) {
  const std::string stem = file.stem().string();
  const bool ok = file.extension() == ".txt" && !stem.empty() && stem.size() <= 6 &&
                  std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; });
  ENGRAM_CHECK(ok, "bbc: {}: file name is not NNN.txt", name);
  return std::stoi(stem);
}

// {category -> {number -> relative name}} of DIR/<sub>/.
std::map<std::string, std::map<int, std::string>> list_files(const fs::path& dir, const std::string& sub) {
  const fs::path root = dir / sub;
  ENGRAM_CHECK(fs::is_directory(root), "bbc: {}: no {}/ folder (expected {}/<category>/NNN.txt)", dir.string(),
               sub, sub);
  std::map<std::string, std::map<int, std::string>> out;
  for (const auto& cat : fs::directory_iterator(root)) {
    const std::string category = cat.path().filename().string();
    ENGRAM_CHECK(cat.is_directory(), "bbc: {}/{}: expected a category folder", sub, category);
    auto& files = out[category];
    for (const auto& f : fs::directory_iterator(cat.path())) {
      const std::string name = sub + "/" + category + "/" + f.path().filename().string();
      ENGRAM_CHECK(f.is_regular_file(), "bbc: {}: not a regular file", name);
      files[number_of(f.path(), name)] = name;
    }
  }
  return out;
}

}  // namespace

NewsArticle parse_bbc_article(std::string_view article_text, std::string_view summary_text,
                              const std::string& article_name, const std::string& summary_name) {
  ENGRAM_CHECK(!blank(article_text), "bbc: {}: empty file", article_name);
  const std::vector<std::string_view> lines = lines_of(article_text);
  NewsArticle a;
  ENGRAM_CHECK(!blank(lines[0]), "bbc: {}:1: missing headline (the first line is empty)", article_name);
  a.headline = std::string(lines[0]);
  while (!a.headline.empty() && a.headline.back() == ' ') a.headline.pop_back();
  ENGRAM_CHECK(lines.size() >= 2 && blank(lines[1]),
               "bbc: {}:2: expected an empty line after the headline", article_name);
  for (size_t i = 2; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    for (std::string& s : split_sentences(lines[i])) a.body.push_back(std::move(s));
  }
  ENGRAM_CHECK(!a.body.empty(), "bbc: {}: no body text after the headline", article_name);
  ENGRAM_CHECK(!blank(summary_text), "bbc: {}: empty summary", summary_name);
  a.summary = split_summary(summary_text, a.body);
  return a;
}

std::vector<NewsArticle> load_bbc(const std::filesystem::path& dir) {
  ENGRAM_CHECK(fs::is_directory(dir), "bbc: {}: not a directory", dir.string());
  const auto articles = list_files(dir, "articles");
  const auto summaries = list_files(dir, "summaries");
  for (const auto& [category, files] : summaries) {
    const auto it = articles.find(category);
    for (const auto& [number, name] : files) {
      ENGRAM_CHECK(it != articles.end() && it->second.count(number),
                   "bbc: {}: summary without matching articles/{}/{:03d}.txt", name, category, number);
    }
  }
  std::vector<NewsArticle> out;
  for (const auto& [category, files] : articles) {
    const auto it = summaries.find(category);
    for (const auto& [number, name] : files) {
      ENGRAM_CHECK(it != summaries.end() && it->second.count(number),
                   "bbc: {}: article without matching summaries/{}/{:03d}.txt", name, category, number);
      const std::string& summary_name = it->second.at(number);
      const std::string text = decode(read_bytes(dir / name, name), name);
      const std::string summary = decode(read_bytes(dir / summary_name, summary_name), summary_name);
      NewsArticle a = parse_bbc_article(text, summary, name, summary_name);
      a.category = category;
      a.number = number;
      out.push_back(std::move(a));
    }
  }
  ENGRAM_CHECK(!out.empty(), "bbc: {}: no articles under articles/<category>/", dir.string());
  return out;  // std::map order: sorted by (category, number)
}

BbcSplit bbc_split_of(const NewsArticle& article) {
  const int r = article.number % 10;
  return r == 0 ? BbcSplit::kTest : r == 9 ? BbcSplit::kValid : BbcSplit::kTrain;
}

std::string_view bbc_split_name(BbcSplit split) {
  switch (split) {
    case BbcSplit::kTrain: return "train";
    case BbcSplit::kValid: return "valid";
    case BbcSplit::kTest: return "test";
  }
  return "?";
}

std::vector<NewsArticle> bbc_subset(const std::vector<NewsArticle>& articles, BbcSplit split) {
  std::vector<NewsArticle> out;
  for (const NewsArticle& a : articles)
    if (bbc_split_of(a) == split) out.push_back(a);
  return out;
}

}  // namespace engram::data
