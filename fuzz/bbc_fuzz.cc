// Fuzz harness: the BBC News Summary reader (data/bbc.h) and the sentence splitter
// (data/sentences.h). The input is split at its first 0xFF byte into an article file and its
// summary file (no 0xFF: the whole input is the article, the summary its first 200 bytes);
// the pair is loaded twice with load_bbc, as tech/001 (strict UTF-8) and as sport/199 (the
// corpus' ISO-8859-1 file). split_sentences runs on the whole input. Checks: every sentence is
// non-empty, has no newline and no surrounding whitespace, and the sentences of a text are the
// text itself (equal once all whitespace is removed): body = the lines after the headline,
// summary = the summary file, split_sentences(x) = x.
#include <filesystem>

#include "engram/data/bbc.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "bbc";
namespace fs = std::filesystem;
using namespace engram::data;

std::string no_space(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') out += c;
  return out;
}

void check_sentences(const std::vector<std::string>& sentences, std::string_view text, const char* what) {
  std::string joined;
  for (const std::string& s : sentences) {
    FUZZ_CHECK(kHarness, !s.empty(), "{}: an empty sentence", what);
    FUZZ_CHECK(kHarness, s.find('\n') == std::string::npos, "{}: a newline inside '{}'", what, s);
    FUZZ_CHECK(kHarness, s.front() != ' ' && s.back() != ' ', "{}: untrimmed '{}'", what, s);
    joined += s;
  }
  FUZZ_CHECK(kHarness, no_space(joined) == no_space(text), "{}: the sentences are not the text", what);
}

void load_as(const std::string& category, const std::string& number, std::string_view article,
             std::string_view summary, bool check) {
  const fs::path root = engram::fuzz::temp_dir() / "bbc";
  fs::remove_all(root);
  fs::create_directories(root / "articles" / category);
  fs::create_directories(root / "summaries" / category);
  engram::fuzz::write_file(root / "articles" / category / (number + ".txt"), article);
  engram::fuzz::write_file(root / "summaries" / category / (number + ".txt"), summary);
  engram::fuzz::guard(kHarness, [&] {
    const std::vector<NewsArticle> all = load_bbc(root);
    FUZZ_CHECK(kHarness, all.size() == 1, "load_bbc returned {} articles for one pair", all.size());
    const NewsArticle& a = all[0];
    FUZZ_CHECK(kHarness, !a.headline.empty() && !a.body.empty() && !a.summary.empty(),
               "an article without headline, body or summary was accepted");
    FUZZ_CHECK(kHarness, a.category == category && a.number == std::stoi(number), "wrong category / number");
    if (!check) return;
    const size_t first_nl = article.find('\n');
    check_sentences(a.body, article.substr(first_nl + 1), "body");
    check_sentences(a.summary, summary, "summary");
  });
}

void run(std::string_view bytes) {
  engram::fuzz::guard(kHarness, [&] { check_sentences(split_sentences(bytes), bytes, "split_sentences"); });
  const size_t cut = bytes.find('\xFF');
  const std::string_view article = cut == std::string_view::npos ? bytes : bytes.substr(0, cut);
  const std::string_view summary = cut == std::string_view::npos ? bytes.substr(0, 200) : bytes.substr(cut + 1);
  load_as("tech", "001", article, summary, true);
  load_as("sport", "199", article, summary, false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
