// BBC News Summary reader (data/bbc.h) and the sentence splitter (data/sentences.h): small
// corpora written to temporary folders, every malformed-input error, and the real corpus (counts
// from shared/data/summarization/bbc-news-summary/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "data/test_util.h"
#include "engram/data/bbc.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::error_of;
using testing::TempDir;
namespace fs = std::filesystem;

TEST(Sentences, NewsRules) {
  EXPECT_EQ(split_sentences("The cat sat. The dog ran! Did it? Yes."),
            (std::vector<std::string>{"The cat sat.", "The dog ran!", "Did it?", "Yes."}));
  // Closing quotes and brackets stay with their sentence; a lowercase word after '.' continues it.
  EXPECT_EQ(split_sentences("He said: \"No.\" Then (he left.) It was 3.5 p.m. on Monday."),
            (std::vector<std::string>{"He said: \"No.\"", "Then (he left.)", "It was 3.5 p.m. on Monday."}));
  // Initials and decimal points are no boundaries.
  EXPECT_EQ(split_sentences("J. K. Rowling met U.S. troops. Prices rose 2.5%."),
            (std::vector<std::string>{"J. K. Rowling met U.S. troops.", "Prices rose 2.5%."}));
  // Sentences joined with no space (the BBC summaries): "problems.The", "ills.\"Invisible".
  EXPECT_EQ(split_sentences("It cost 5m.The use of ink is no panacea for ills.\"Invisible\" ink, he said.I agree."),
            (std::vector<std::string>{"It cost 5m.", "The use of ink is no panacea for ills.",
                                      "\"Invisible\" ink, he said.", "I agree."}));
  // ... but not inside names, addresses and abbreviations.
  EXPECT_EQ(split_sentences("OutRage!'s Mr Lock visited news.bbc.co.uk and the U.S.A. yesterday."),
            (std::vector<std::string>{"OutRage!'s Mr Lock visited news.bbc.co.uk and the U.S.A. yesterday."}));
  // Newlines end sentences; empty pieces vanish; a stray quote joins the previous sentence.
  EXPECT_EQ(split_sentences("a line\n\n  second line  \nIt ended. \""),
            (std::vector<std::string>{"a line", "second line", "It ended. \""}));
  EXPECT_TRUE(split_sentences(" \n\t").empty());
}

// Writes DIR/articles/<cat>/<num>.txt and DIR/summaries/<cat>/<num>.txt.
void put(const TempDir& dir, const std::string& rel, const std::string& bytes) {
  fs::create_directories(fs::path(dir.file(rel)).parent_path());
  dir.write(rel, bytes);
}

void put_pair(const TempDir& dir, const std::string& cat, const std::string& num, const std::string& article,
              const std::string& summary) {
  put(dir, "articles/" + cat + "/" + num + ".txt", article);
  put(dir, "summaries/" + cat + "/" + num + ".txt", summary);
}

const std::string kArticle =
    "Ink helps drive democracy\n\nThe Kyrgyz Republic is using ink. It wants fair votes.\n\n"
    "The US agreed to pay. \"This is new,\" he said.\n";

TEST(Bbc, ParsesHeadlineBodyAndSummary) {
  TempDir dir;
  // The summary joins two body sentences with no space, the second ending in a quote.
  put_pair(dir, "tech", "002", kArticle, "It wants fair votes.\"This is new,\" he said.");
  put_pair(dir, "tech", "010", "Second\n\nBody one. Body two.", "Body two.");
  put_pair(dir, "business", "001", "Markets\n\nShares fell.\n", "Shares fell.");
  const auto all = load_bbc(dir.file(""));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].category, "business");  // sorted by (category, number)
  EXPECT_EQ(all[1].number, 2);
  EXPECT_EQ(all[2].number, 10);
  const NewsArticle& a = all[1];
  EXPECT_EQ(a.headline, "Ink helps drive democracy");
  EXPECT_EQ(a.body, (std::vector<std::string>{"The Kyrgyz Republic is using ink.", "It wants fair votes.",
                                              "The US agreed to pay.", "\"This is new,\" he said."}));
  EXPECT_EQ(a.summary, (std::vector<std::string>{"It wants fair votes.", "\"This is new,\" he said."}));
  EXPECT_EQ(bbc_split_of(all[2]), BbcSplit::kTest);  // 10 % 10 == 0
  EXPECT_EQ(bbc_split_of(all[1]), BbcSplit::kTrain);
  NewsArticle nine;
  nine.number = 509;
  EXPECT_EQ(bbc_split_of(nine), BbcSplit::kValid);
  EXPECT_EQ(bbc_subset(all, BbcSplit::kTest).size(), 1u);
  EXPECT_EQ(bbc_split_name(BbcSplit::kValid), "valid");
}

// The corpus' one ISO-8859-1 file is converted ("\xA3" -> "£"); the same bytes elsewhere are an
// error naming file, line and column.
TEST(Bbc, Latin1OnlyWhereTheCorpusHasIt) {
  TempDir dir;
  const std::string latin1 = "Mutu sacked\n\nMutu, a \xA3" "15.8m signing, left.\n";
  put_pair(dir, "sport", "199", latin1, "Mutu, a \xC2\xA3" "15.8m signing, left.");
  const auto all = load_bbc(dir.file(""));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].body[0], "Mutu, a \u00A315.8m signing, left.");
  EXPECT_EQ(all[0].summary, all[0].body);
  put_pair(dir, "sport", "198", latin1, "x");
  EXPECT_EQ(error_of([&] { load_bbc(dir.file("")); }),
            "bbc: articles/sport/198.txt:3: invalid UTF-8 (byte 0xA3 at column 9)");
}

TEST(Bbc, MalformedInputIsAnErrorNamingTheFile) {
  auto load_one = [](const std::string& article, const std::string& summary) {
    TempDir dir;
    put_pair(dir, "tech", "001", article, summary);
    return error_of([&] { load_bbc(dir.file("")); });
  };
  EXPECT_EQ(load_one("", "s"), "bbc: articles/tech/001.txt: empty file");
  EXPECT_EQ(load_one("\nBody.\n", "s"), "bbc: articles/tech/001.txt:1: missing headline (the first line is empty)");
  EXPECT_EQ(load_one("Headline\nBody.\n", "s"),
            "bbc: articles/tech/001.txt:2: expected an empty line after the headline");
  EXPECT_EQ(load_one("Headline\n\n\n", "s"), "bbc: articles/tech/001.txt: no body text after the headline");
  EXPECT_EQ(load_one("Headline\n\nBody.\n", " \n"), "bbc: summaries/tech/001.txt: empty summary");
  EXPECT_EQ(load_one("Headline\n\nBody.\n", "Bad \xFF"),
            "bbc: summaries/tech/001.txt:1: invalid UTF-8 (byte 0xFF at column 5)");

  TempDir dir;
  put_pair(dir, "tech", "001", kArticle, "It wants fair votes.");
  put(dir, "summaries/tech/002.txt", "orphan");
  EXPECT_EQ(error_of([&] { load_bbc(dir.file("")); }),
            "bbc: summaries/tech/002.txt: summary without matching articles/tech/002.txt");
  fs::remove(dir.file("summaries/tech/002.txt"));
  put(dir, "articles/tech/003.txt", kArticle);
  EXPECT_EQ(error_of([&] { load_bbc(dir.file("")); }),
            "bbc: articles/tech/003.txt: article without matching summaries/tech/003.txt");
  fs::remove(dir.file("articles/tech/003.txt"));
  put(dir, "articles/tech/notes.txt", kArticle);
  EXPECT_EQ(error_of([&] { load_bbc(dir.file("")); }), "bbc: articles/tech/notes.txt: file name is not NNN.txt");
  fs::remove(dir.file("articles/tech/notes.txt"));
  EXPECT_EQ(load_bbc(dir.file("")).size(), 1u);
  fs::remove_all(dir.file("summaries"));
  EXPECT_EQ(error_of([&] { load_bbc(dir.file("")); }),
            "bbc: " + dir.file("") + ": no summaries/ folder (expected summaries/<category>/NNN.txt)");
  EXPECT_EQ(error_of([&] { load_bbc(dir.file("missing")); }), "bbc: " + dir.file("missing") + ": not a directory");
}

class BbcCorpus : public CorpusTest {};

// README: 510 / 386 / 417 / 511 / 401 pairs per category, 2,225 in all. Split by hand from the
// rule (NNN % 10 == 0 test, == 9 valid): test = floor(N / 10), valid = floor((N + 1) / 10) per
// category -> test 51 + 38 + 41 + 51 + 40 = 221, valid 51 + 38 + 41 + 51 + 40 = 221, train 1,783.
TEST_F(BbcCorpus, CountsSplitsAndKnownFiles) {
  const auto all = load_bbc(path("summarization/bbc-news-summary"));
  ASSERT_EQ(all.size(), 2225u);
  std::map<std::string, int> per_category;
  std::map<BbcSplit, int> per_split;
  size_t summary_sentences = 0, in_body = 0;
  for (const NewsArticle& a : all) {
    ++per_category[a.category];
    ++per_split[bbc_split_of(a)];
    EXPECT_FALSE(a.headline.empty());
    EXPECT_FALSE(a.body.empty());
    EXPECT_FALSE(a.summary.empty());
    for (const auto& s : a.summary) {
      ++summary_sentences;
      in_body += std::find(a.body.begin(), a.body.end(), s) != a.body.end();
    }
  }
  EXPECT_EQ(per_category, (std::map<std::string, int>{
                              {"business", 510}, {"entertainment", 386}, {"politics", 417}, {"sport", 511}, {"tech", 401}}));
  EXPECT_EQ(per_split[BbcSplit::kTrain], 1783);
  EXPECT_EQ(per_split[BbcSplit::kValid], 221);
  EXPECT_EQ(per_split[BbcSplit::kTest], 221);
  // The summaries are extracts: nearly every summary sentence is one of the body's sentences
  // (the exceptions are upstream quirks such as a sentence split differently in the summary).
  EXPECT_GT(static_cast<double>(in_body), 0.99 * static_cast<double>(summary_sentences));

  // README example: articles/tech/001.txt and the start of summaries/tech/001.txt.
  const NewsArticle& tech1 = *std::find_if(all.begin(), all.end(),
                                           [](const NewsArticle& a) { return a.category == "tech" && a.number == 1; });
  EXPECT_EQ(tech1.headline, "Ink helps drive democracy in Asia");
  ASSERT_GE(tech1.summary.size(), 2u);
  EXPECT_EQ(tech1.summary[0],
            "The other common type of ink in elections is indelible visible ink - but as the elections in "
            "Afghanistan showed, improper use of this type of ink can cause additional problems.");
  EXPECT_EQ(tech1.summary[1], "The use of ink and readers by itself is not a panacea for election ills.");
  // articles/sport/199.txt (ISO-8859-1): "a \xA315.8m signing" reads as UTF-8 "£15.8m".
  const NewsArticle& s199 = *std::find_if(all.begin(), all.end(),
                                          [](const NewsArticle& a) { return a.category == "sport" && a.number == 199; });
  bool pound = false;
  for (const auto& s : s199.body) pound |= s.find("a \u00A315.8m signing") != std::string::npos;
  EXPECT_TRUE(pound);
}

}  // namespace
}  // namespace engram::data
