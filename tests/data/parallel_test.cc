// Parallel corpus reader: error messages (line counts, invalid UTF-8, TSV fields), skipped-pair
// counts, length filtering, and the real Tatoeba / Multi30k files.
#include "engram/data/parallel.h"

#include <gtest/gtest.h>

#include <functional>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::TempDir;

using testing::error_of;

TEST(Parallel, MismatchedLineCountsNameBothFilesAndCounts) {
  TempDir tmp;
  const auto src = tmp.write("train.de", "a\nb\nc\n");
  const auto tgt = tmp.write("train.en", "x\ny\n");
  EXPECT_EQ(
      error_of([&] { read_parallel(src, tgt); }),
      "parallel corpus: line counts differ: " + src + " has 3 lines, " + tgt + " has 2 lines");
}

TEST(Parallel, InvalidUtf8GivesFileAndLine) {
  TempDir tmp;
  const auto src = tmp.write("s.txt", "ok\nok\nok\n");
  const auto tgt = tmp.write("t.txt", "ok\nok\nbad \xFF byte\n");
  EXPECT_EQ(error_of([&] { read_parallel(src, tgt); }),
            tgt + ":3: invalid UTF-8 (byte 0xFF at column 5)");
  const auto tsv = tmp.write("p.tsv", "a\tb\n\xE4\xB8\tc\n");
  EXPECT_EQ(error_of([&] { read_tsv_pairs(tsv); }),
            tsv + ":2: invalid UTF-8 (byte 0xE4 at column 1)");
}

TEST(Parallel, EmptyLinesAreSkippedAndCounted) {
  TempDir tmp;
  const auto src = tmp.write("s.txt", "one\n\nthree\n  \nfive\n");
  const auto tgt = tmp.write("t.txt", "eins\nzwei\n\nvier\nfünf\n");
  const auto c = read_parallel(src, tgt);
  EXPECT_EQ(c.stats.lines, 5);
  EXPECT_EQ(c.stats.empty_skipped, 3);  // lines 2 (src), 3 (tgt) and 4 (whitespace-only src)
  EXPECT_EQ(c.stats.kept, 2);
  EXPECT_EQ(c.src, (std::vector<std::string>{"one", "five"}));
  EXPECT_EQ(c.tgt, (std::vector<std::string>{"eins", "fünf"}));
  EXPECT_EQ(c.line, (std::vector<int64_t>{1, 5}));
}

TEST(Parallel, LengthFilteringInWordsAndChars) {
  TempDir tmp;
  const auto src = tmp.write("s.txt", "a b c\na\na b c d e f\n");
  const auto tgt = tmp.write("t.txt", "我们走了\n你\nx\n");
  ParallelOptions o;
  o.max_length = 4;
  auto c = read_parallel(src, tgt, o);  // words: 3/1, 1/1, 6/1 -> third dropped
  EXPECT_EQ(c.stats.kept, 2);
  EXPECT_EQ(c.stats.length_skipped, 1);
  o.length_unit = LengthUnit::kChars;
  o.min_length = 2;
  o.max_length = 5;
  c = read_parallel(src, tgt, o);  // chars: 5/4 kept, 1/1 too short, 11/1 too long and short
  EXPECT_EQ(c.stats.kept, 1);
  EXPECT_EQ(c.stats.length_skipped, 2);
  EXPECT_EQ(text_length("我们 走了", LengthUnit::kChars), 5);
  EXPECT_EQ(text_length("我们 走了", LengthUnit::kWords), 2);
}

TEST(Parallel, TsvFieldsAndErrors) {
  TempDir tmp;
  const auto p = tmp.write("pairs.tsv", "Hi.\t嗨。\tCC-BY 2.0\nRun.\t跑。\tCC-BY 2.0\n\n");
  auto c = read_tsv_pairs(p);
  EXPECT_EQ(c.src, (std::vector<std::string>{"Hi.", "Run."}));
  EXPECT_EQ(c.tgt, (std::vector<std::string>{"嗨。", "跑。"}));
  EXPECT_EQ(c.stats.empty_skipped, 1);
  ParallelOptions swapped;
  swapped.src_field = 1;
  swapped.tgt_field = 0;
  EXPECT_EQ(read_tsv_pairs(p, swapped).src[0], "嗨。");
  const auto short_line = tmp.write("bad.tsv", "a\tb\nonly one field\n");
  EXPECT_EQ(error_of([&] { read_tsv_pairs(short_line); }),
            short_line + ":2: 1 tab-separated field(s), need at least 2");
  swapped.tgt_field = 1;
  EXPECT_THROW(read_tsv_pairs(p, swapped), Error);  // same field twice
}

TEST(Parallel, StripFinalPunctuation) {
  const std::vector<std::pair<std::string, std::string>> kept = {
      {"欢迎来北京。", "欢迎来北京"}, {"Welcome to Beijing.", "Welcome to Beijing"}, {"你好吗？", "你好吗"},
      {"Really?!", "Really"},       {"Wait ... ", "Wait"},                      {"好！", "好"},
      {"然后呢…", "然后呢"},
  };
  for (const auto& [in, out] : kept) {
    std::string t = in;
    EXPECT_TRUE(strip_final_punctuation(&t)) << in;
    EXPECT_EQ(t, out) << in;
  }
  for (std::string t : {"欢迎来北京", "Mr. Smith", "\"Go.\"", "?!", "", "3.5 km"}) {
    const std::string before = t;
    EXPECT_FALSE(strip_final_punctuation(&t)) << before;
    EXPECT_EQ(t, before);
  }
}

TEST(Parallel, EndsInCjk) {
  for (const char* t : {"我来。", "我来", "你呢？ ", "東京", "\xF0\xA0\x80\x80" /* U+20000, CJK Extension B */})
    EXPECT_TRUE(ends_in_cjk(t)) << t;
  for (const char* t : {"I come.", "", "   ", "café", "\xE2\x80\xA6" /* … U+2026 */, "我来 a", "\xE5\xA5" /* cut */})
    EXPECT_FALSE(ends_in_cjk(t)) << t;
}

// shared/data/tatoeba-zh-en/README.md: 26,388 lines, exactly 3 fields, first two non-empty;
// line 1000 is "We need to go.<TAB>我们必须走了。".
TEST_F(CorpusTest, TatoebaChineseEnglish) {
  const auto c = read_tsv_pairs(path("tatoeba-zh-en/cmn.txt"));
  EXPECT_EQ(c.stats.lines, 26388);
  EXPECT_EQ(c.stats.kept, 26388);
  EXPECT_EQ(c.stats.empty_skipped, 0);
  EXPECT_EQ(c.src[999], "We need to go.");
  EXPECT_EQ(c.tgt[999], "我们必须走了。");
  ParallelOptions o;
  o.length_unit = LengthUnit::kChars;
  o.max_length = 12;
  const auto short_pairs = read_tsv_pairs(path("tatoeba-zh-en/cmn.txt"), o);
  // 541 pairs have both sides of at most 12 code points (counted with Python's len() on the
  // first two tab-separated fields of cmn.txt).
  EXPECT_EQ(short_pairs.stats.kept, 541);
  EXPECT_EQ(short_pairs.stats.length_skipped, 26388 - 541);
  for (size_t i = 0; i < short_pairs.size(); ++i) {
    EXPECT_LE(text_length(short_pairs.src[i], LengthUnit::kChars), 12);
    EXPECT_LE(text_length(short_pairs.tgt[i], LengthUnit::kChars), 12);
  }
}

// shared/data/multi30k/README.md: tok/val.lc.norm.tok.{en,de} have 1014 lines each.
TEST_F(CorpusTest, Multi30kTokenizedValidation) {
  const auto c = read_parallel(path("multi30k/tok/val.lc.norm.tok.de"),
                               path("multi30k/tok/val.lc.norm.tok.en"));
  EXPECT_EQ(c.stats.lines, 1014);
  EXPECT_EQ(c.stats.kept, 1014);  // no line of either file is blank (paste + awk)
  EXPECT_EQ(c.stats.empty_skipped, 0);
  // A train file paired with a val file: the count error names both.
  const std::string err = [&] {
    try {
      read_parallel(path("multi30k/tok/val.lc.norm.tok.de"),
                    path("multi30k/tok/test_2016_flickr.lc.norm.tok.en"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  }();
  EXPECT_NE(err.find("has 1014 lines"), std::string::npos) << err;
  EXPECT_NE(err.find("has 1000 lines"), std::string::npos) << err;
}

// shared/data/tatoeba-fr-en: fra.txt.gz, 142,787 pairs of exactly 2 fields.
TEST_F(CorpusTest, TatoebaFrenchGzip) {
  const auto c = read_tsv_pairs(path("tatoeba-fr-en/fra.txt.gz"));
  EXPECT_EQ(c.stats.kept, 142787);
}

}  // namespace
}  // namespace engram::data
