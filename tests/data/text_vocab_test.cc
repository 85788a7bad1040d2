// Line reading (UTF-8 validation, CRLF, gzip), tokenising helpers and the word Vocab.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/data/chinese_script.h"
#include "engram/data/text.h"
#include "engram/data/vocab.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::TempDir;

using testing::error_of;

TEST(Text, ReadLinesHandlesCrlfAndMissingFinalNewline) {
  TempDir tmp;
  const auto p = tmp.write("a.txt", "one\r\ntwo\n\nfour");
  EXPECT_EQ(read_lines(p), (std::vector<std::string>{"one", "two", "", "four"}));
  EXPECT_EQ(read_lines(tmp.write("b.txt", "x\n")), (std::vector<std::string>{"x"}));
  EXPECT_TRUE(read_lines(tmp.write("c.txt", "")).empty());
}

TEST(Text, InvalidUtf8NamesFileAndLine) {
  TempDir tmp;
  const auto p = tmp.write("bad.txt", "fine\nalso fine 中文\nbr\xC3(ken\n");
  EXPECT_EQ(error_of([&] { read_lines(p); }), p + ":3: invalid UTF-8 (byte 0xC3 at column 3)");
  EXPECT_EQ(find_invalid_utf8("\xED\xA0\x80"), 0u);  // a UTF-16 surrogate is not valid UTF-8
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);      // overlong '/'
  EXPECT_EQ(find_invalid_utf8("ok \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_NE(error_of([&] { read_lines(tmp.file("missing.txt")); }).find("cannot open"),
            std::string::npos);
}

// "-" reads standard input (here a file put in its place) as read_lines reads a file: lines
// longer than its 64 KiB blocks, CRLF, no final newline; errors name <stdin>:LINE.
TEST(Text, ReadLinesOrStdinReadsStandardInputLikeAFile) {
  TempDir tmp;
  const std::string long_line(200000, 'x');
  const auto read_stdin = [&](const std::string& name, const std::string& bytes) {
    EXPECT_NE(std::freopen(tmp.write(name, bytes).c_str(), "rb", stdin), nullptr);
    return read_lines_or_stdin("-");
  };
  EXPECT_EQ(read_stdin("a.txt", "one\r\n" + long_line + "\n\n中文"),
            (std::vector<std::string>{"one", long_line, "", "中文"}));
  EXPECT_TRUE(read_stdin("b.txt", "").empty());
  EXPECT_EQ(error_of([&] { read_stdin("c.txt", long_line + "\nfine\nbr\xC3(ken\n"); }),
            "<stdin>:3: invalid UTF-8 (byte 0xC3 at column 3)");
}

TEST(Text, SplittingHelpers) {
  EXPECT_EQ(split_whitespace("  a\tb \n c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(utf8_chars("2026年"), (std::vector<std::string>{"2", "0", "2", "6", "年"}));
  EXPECT_EQ(utf8_length("héllo 中"), 7);
}

// Multi30k raw/val.en.gz holds 1014 lines (shared/data/multi30k/README.md).
TEST_F(CorpusTest, GzipInput) {
  const auto lines = read_lines(path("multi30k/raw/val.en.gz"));
  EXPECT_EQ(lines.size(), 1014u);
  EXPECT_FALSE(lines[0].empty());
}

// A gzip file cut short is an error, not fewer lines (fuzzing found it read as a clean end of
// file): every prefix of the real val.en.gz, from the header on, is refused.
TEST_F(CorpusTest, TruncatedGzipIsAnError) {
  std::ifstream in(path("multi30k/raw/val.en.gz"), std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  ASSERT_GT(bytes.size(), 1000u);
  testing::TempDir tmp;
  for (size_t keep : {size_t{10}, size_t{11}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    const std::string cut = tmp.write("cut.gz", bytes.substr(0, keep));
    const std::string err = error_of([&] { read_lines(cut); });
    EXPECT_NE(err.find("truncated or damaged gzip data"), std::string::npos) << keep << " bytes: " << err;
  }
  EXPECT_EQ(read_lines(tmp.write("whole.gz", bytes)).size(), 1014u);
}

// Expected characters: CC-CEDICT's traditional -> simplified columns (歡迎 欢迎, 來 来, 們 们,
// 頭髮 头发); the sentence is Tatoeba cmn-eng's "歡迎來到你的新家。" (Welcome to your new home.).
TEST(ChineseScript, TraditionalBecomesSimplifiedAndTheRestStays) {
  EXPECT_EQ(data::to_simplified_chinese("歡迎來到你的新家。"), "欢迎来到你的新家。");
  EXPECT_EQ(data::to_simplified_chinese("他們的頭髮"), "他们的头发");
  EXPECT_EQ(data::to_simplified_chinese("欢迎来北京"), "欢迎来北京");
  EXPECT_EQ(data::to_simplified_chinese("Welcome to Beijing, Tom! 2026"), "Welcome to Beijing, Tom! 2026");
  EXPECT_EQ(data::to_simplified_chinese(""), "");
  EXPECT_EQ(data::to_simplified_chinese(std::string_view("來來", 3)), "来");  // only the view's bytes
  const std::string nul("來\0們\0", 8);  // a NUL byte ends no conversion early
  EXPECT_EQ(data::to_simplified_chinese(nul), std::string("来\0们\0", 8));
}

TEST(Vocab, SpecialTokensAndBuildOrder) {
  Vocab empty;
  EXPECT_EQ(empty.size(), 4);
  EXPECT_EQ(empty.token(kPadId), "<pad>");
  EXPECT_EQ(empty.token(kUnkId), "<unk>");
  EXPECT_EQ(empty.token(kGoId), "<go>");
  EXPECT_EQ(empty.token(kEosId), "<eos>");

  TokenCounts counts;
  count_tokens({"b a c a", "a b d", "<eos> e"}, &counts);
  // a:3, b:2, then c, d, e with 1 each in byte order; the "<eos>" in the text keeps its id 3.
  const Vocab v = Vocab::build(counts);
  EXPECT_EQ(v.size(), 9);
  EXPECT_EQ(v.id("a"), 4);
  EXPECT_EQ(v.id("b"), 5);
  EXPECT_EQ(v.id("c"), 6);
  EXPECT_EQ(v.id("e"), 8);
  EXPECT_EQ(v.id("<eos>"), kEosId);
  EXPECT_EQ(v.id("zzz"), kUnkId);

  VocabOptions o;
  o.min_count = 2;
  EXPECT_EQ(Vocab::build(counts, o).size(), 6);
  o.min_count = 1;
  o.max_size = 5;
  const Vocab small = Vocab::build(counts, o);
  EXPECT_EQ(small.size(), 5);
  EXPECT_TRUE(small.contains("a"));
  EXPECT_FALSE(small.contains("b"));
  o.max_size = 3;
  EXPECT_THROW(Vocab::build(counts, o), Error);
}

TEST(Vocab, EncodeDecode) {
  const Vocab v = Vocab::from_tokens({"hello", "world"});
  EXPECT_EQ(v.encode_text("hello big world", true, true),
            (std::vector<int32_t>{kGoId, 4, kUnkId, 5, kEosId}));
  EXPECT_EQ(v.decode_text({kGoId, 4, 5, kPadId, kEosId, 4}), "hello world");
  EXPECT_EQ(v.decode({5, kUnkId}), (std::vector<std::string>{"world", "<unk>"}));
  EXPECT_THROW(v.token(99), Error);
  EXPECT_THROW(Vocab::from_tokens({"a", "a"}), Error);
  EXPECT_THROW(Vocab::from_tokens({"a b"}), Error);
}

TEST(Vocab, SaveLoadRoundTrip) {
  TempDir tmp;
  TokenCounts counts;
  count_tokens({"欢迎 来 北京", "北京 欢迎 你", "the cat"}, &counts);
  const Vocab v = Vocab::build(counts);
  const std::string p = tmp.file("vocab.txt");
  v.save(p);
  const auto lines = read_lines(p);
  ASSERT_EQ(static_cast<int32_t>(lines.size()), v.size());
  EXPECT_EQ(lines[0], "<pad>");
  EXPECT_EQ(lines[3], "<eos>");
  const Vocab back = Vocab::load(p);
  ASSERT_EQ(back.size(), v.size());
  for (int32_t i = 0; i < v.size(); ++i) EXPECT_EQ(back.token(i), v.token(i));
  EXPECT_EQ(back.encode_text("北京 欢迎 cat"), v.encode_text("北京 欢迎 cat"));
}

TEST(Vocab, LoadErrorsNameFileAndLine) {
  TempDir tmp;
  const auto bad_special = tmp.write("v1.txt", "<pad>\n<go>\n<unk>\n<eos>\nx\n");
  EXPECT_EQ(error_of([&] { Vocab::load(bad_special); }),
            bad_special + ":2: expected special token '<unk>', found '<go>'");
  const auto dup = tmp.write("v2.txt", "<pad>\n<unk>\n<go>\n<eos>\nx\ny\nx\n");
  EXPECT_EQ(error_of([&] { Vocab::load(dup); }), dup + ":7: duplicate token 'x' (first at line 5)");
  const auto blank = tmp.write("v3.txt", "<pad>\n<unk>\n<go>\n<eos>\n\n");
  EXPECT_EQ(error_of([&] { Vocab::load(blank); }),
            blank + ":5: empty token or token with whitespace");
}

}  // namespace
}  // namespace engram::data
