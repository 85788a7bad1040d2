// The source<TAB>target summary reader (strict, PATH:LINE errors, `\n` sentence separators) and
// the generated names task of the pointer-generator.
#include <gtest/gtest.h>

#include <set>

#include "data/test_util.h"
#include "engram/data/summary_pairs.h"
#include "engram/data/tasks/names.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

using testing::error_of;
using testing::TempDir;

TEST(SummaryPairs, ReadsPairsAndSplitsTargetSentences) {
  TempDir dir;
  const std::string p = dir.write("pairs.tsv",
                                  "An article about Kovaletu .\tKovaletu won .\\nIt rained .\n"
                                  "  second article \t one sentence \r\n");
  const std::vector<SummaryPair> pairs = read_summary_tsv(p);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].source, "An article about Kovaletu .");
  EXPECT_EQ(pairs[0].target_sentences, (std::vector<std::string>{"Kovaletu won .", "It rained ."}));
  EXPECT_EQ(pairs[0].target(), "Kovaletu won . It rained .");
  EXPECT_EQ(pairs[0].line, 1);
  EXPECT_EQ(pairs[1].source, "second article");
  EXPECT_EQ(pairs[1].target(), "one sentence");
  EXPECT_EQ(read_summary_tsv(p, 1).size(), 1u);
  EXPECT_EQ(split_summary_sentences("a.\\n\\n b. \\n"), (std::vector<std::string>{"a.", "b."}));
  EXPECT_EQ(split_summary_sentences("no break here"), (std::vector<std::string>{"no break here"}));
}

TEST(SummaryPairs, MalformedLinesAreErrorsWithFileAndLine) {
  TempDir dir;
  const std::string ok = "a\tb\n";
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.write("t1.tsv", ok + "no tab here\n")); }).find("t1.tsv:2: expected 'source<TAB>target', found 0 tabs"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.write("t2.tsv", ok + ok + "a\tb\tc\n")); }).find("t2.tsv:3: expected 'source<TAB>target', found 2 tabs"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.write("t3.tsv", "  \tb\n")); }).find("t3.tsv:1: empty source"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.write("t4.tsv", ok + "a\t \\n \n")); }).find("t4.tsv:2: empty target"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.write("t5.tsv", "")); }).find("t5.tsv: no 'source<TAB>target' pairs"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.write("t6.tsv", ok + "a\t\xff\n")); }).find("t6.tsv:2"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_summary_tsv(dir.file("missing.tsv")); }).find("missing.tsv"), std::string::npos);
}

// Every target is a short summary holding the pair's person and place, both also in the
// source; names are almost all distinct; the generator is a pure function of the seed.
TEST(NamesTask, TargetsReproduceTheSourcesNames) {
  core::Rng a(11), b(11);
  const auto pairs = tasks::make_name_pairs(500, {}, a);
  const auto again = tasks::make_name_pairs(500, {}, b);
  ASSERT_EQ(pairs.size(), 500u);
  std::set<std::string> names;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    EXPECT_EQ(p.source, again[i].source);
    const auto src = split_whitespace(p.source), tgt = split_whitespace(p.target);
    for (const std::string& n : {p.person, p.place}) {
      EXPECT_NE(std::find(src.begin(), src.end(), n), src.end()) << p.source;
      EXPECT_NE(std::find(tgt.begin(), tgt.end(), n), tgt.end()) << p.target;
      EXPECT_TRUE(n[0] >= 'A' && n[0] <= 'Z') << n;
      names.insert(n);
    }
    EXPECT_LE(tgt.size(), 5u) << p.target;
    EXPECT_GT(src.size(), tgt.size()) << p.source;
  }
  EXPECT_GT(names.size(), 950u);  // 1000 names drawn from > 10^6
}

}  // namespace
}  // namespace engram::data
