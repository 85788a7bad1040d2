// The lexical shortlist (models/seq2seq/shortlist.h): co-occurrence counts worked by hand, the file
// read back as written and each malformed file refused naming its line, and decoding the golden
// seq2seq model through it: a shortlist of the whole vocabulary changes nothing, one without a
// token never emits it, and one built from the golden pairs gives the recorded outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engram/core/error.h"
#include "engram/models/registry.h"
#include "engram/models/seq2seq/shortlist.h"
#include "engram/models/seq2seq/translate.h"
#include "models/golden_cases.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;
using engram::testing::golden_cases;
using engram::testing::golden_dir;

// Pairs (source ids -> target ids) and what build() must make of them, counted by hand:
// c(t): 7 -> 2 pairs, 8 -> 2, 9 -> 1; frequent = 1 keeps 7 (tied with 8: the lower id).
// c(5, 8) = 1; c(6, 8) = 2, c(6, 9) = 1 (7 is frequent, so never in a source's list).
TEST(Shortlist, BuildRanksByCooccurrenceAfterTheFrequentTokens) {
  const std::vector<std::vector<int32_t>> src = {{5, 6}, {5}, {6, 6}}, tgt = {{7, 8}, {7}, {8, 9, 8}};
  const Shortlist sl = Shortlist::build(src, tgt, 10, 12, {.best = 5, .frequent = 1});
  EXPECT_EQ(sl.frequent(), (std::vector<int32_t>{7}));
  EXPECT_EQ(sl.of(5), (std::vector<int32_t>{8}));
  EXPECT_EQ(sl.of(6), (std::vector<int32_t>{8, 9}));
  EXPECT_TRUE(sl.of(4).empty());
  EXPECT_EQ(sl.batch_ids(std::vector<int32_t>{6}), (std::vector<int32_t>{0, 1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(sl.batch_ids(std::vector<int32_t>{5, 0}), (std::vector<int32_t>{0, 1, 2, 3, 7, 8}));
  const Shortlist one = Shortlist::build(src, tgt, 10, 12, {.best = 1, .frequent = 0});
  EXPECT_EQ(one.of(6), (std::vector<int32_t>{8}));  // c(6, 8) = 2 beats c(6, 9) = 1
  EXPECT_EQ(one.of(5), (std::vector<int32_t>{7}));  // c(5, 7) = 2 beats c(5, 8) = 1
  EXPECT_THROW(Shortlist::build(src, tgt, 6, 12, {}), Error);  // source id 6 outside [0, 6)
}

class ShortlistFile : public ::testing::Test {
 protected:
  void SetUp() override {
    tr_ = load_model_as<Translator>(golden_dir("seq2seq"), "seq2seq");
    dir_ = fs::path(::testing::TempDir()) / ("shortlist_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& text) {
    const fs::path p = dir_ / "s.tsv";
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string load_error(const std::string& text) {
    try {
      Shortlist::load(write(text), tr_->src, tr_->tgt);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::unique_ptr<Translator> tr_;
  fs::path dir_;
};

TEST_F(ShortlistFile, ReadsBackWhatItWrote) {
  std::vector<std::vector<int32_t>> src, tgt;
  for (const auto& [in, out] : golden_cases("seq2seq")) {
    src.push_back(tr_->src.encode(in));
    tgt.push_back(tr_->tgt.encode(out));
  }
  const Shortlist sl = Shortlist::build(src, tgt, tr_->src.size(), tr_->tgt.size(), {.best = 3, .frequent = 4});
  ASSERT_EQ(sl.frequent().size(), 4u);
  sl.save(dir_ / "round.tsv", tr_->src, tr_->tgt);
  const Shortlist back = Shortlist::load(dir_ / "round.tsv", tr_->src, tr_->tgt);
  EXPECT_EQ(back.frequent(), sl.frequent());
  int lists = 0;
  for (int32_t s = 0; s < tr_->src.size(); ++s) {
    EXPECT_EQ(back.of(s), sl.of(s)) << s;
    lists += !sl.of(s).empty();
  }
  EXPECT_GT(lists, 5);
}

TEST_F(ShortlistFile, MalformedFilesAreRefusedNamingTheLine) {
  const std::string t0 = tr_->tgt.token(4), s0 = tr_->src.token(4);
  EXPECT_NE(load_error("not a shortlist\n*\t" + t0 + "\n").find(":1: not a shortlist"), std::string::npos);
  EXPECT_NE(load_error("engram-shortlist 1\n" + s0 + "\t" + t0 + "\n").find("no '*' line"), std::string::npos);
  EXPECT_NE(load_error("engram-shortlist 1\n*\tNO_SUCH_TOKEN\n").find(":2: target token 'NO_SUCH_TOKEN'"),
            std::string::npos);
  EXPECT_NE(load_error("engram-shortlist 1\n*\t" + t0 + "\nNO_SUCH\t" + t0 + "\n").find(":3: source token 'NO_SUCH'"),
            std::string::npos);
  EXPECT_NE(load_error("engram-shortlist 1\n*\t\n" + s0 + "\t" + t0 + "\n" + s0 + "\t" + t0 + "\n").find(
                ":4: source token '" + s0 + "' listed twice"),
            std::string::npos);
  EXPECT_NE(load_error("engram-shortlist 1\n*\t" + t0 + "\tx\n").find(":2: expected"), std::string::npos);
  EXPECT_NE(load_error("engram-shortlist 1\n*\t\n*\t\n").find(":3: a second '*' line"), std::string::npos);
}

// Decoding through a shortlist (TranslateOptions::shortlist -> SourceBatch::output_ids).
TEST_F(ShortlistFile, DecodingScoresOnlyTheShortlistedTokens) {
  std::vector<std::string> srcs;
  std::vector<std::vector<int32_t>> src, tgt;
  for (const auto& [in, out] : golden_cases("seq2seq")) {
    srcs.push_back(in);
    src.push_back(tr_->src.encode(in));
    tgt.push_back(tr_->tgt.encode(out));
  }
  // Every target token frequent: the same outputs, with the same scores up to summation order.
  std::string all = "engram-shortlist 1\n*\t";
  for (int32_t t = 4; t < tr_->tgt.size(); ++t) all += tr_->tgt.token(t) + " ";
  const Shortlist full = Shortlist::load(write(all + "\n"), tr_->src, tr_->tgt);
  // The tokens of the recorded outputs, from the pairs themselves.
  const Shortlist built = Shortlist::build(src, tgt, tr_->src.size(), tr_->tgt.size(), {.best = 1000, .frequent = 0});
  // Every token but the first output's first character.
  const int32_t banned = tgt[0].at(0);
  std::string most = "engram-shortlist 1\n*\t";
  for (int32_t t = 4; t < tr_->tgt.size(); ++t)
    if (t != banned) most += tr_->tgt.token(t) + " ";
  const Shortlist without = Shortlist::load(write(most + "\n"), tr_->src, tr_->tgt);
  // Plain fp32 weights, then their packed copy (set_precision fp32: the few-row products, the
  // shortlisted rows' too, on the packed kernel).
  for (const bool packed : {false, true}) {
    if (packed) tr_->set_precision(decode::Precision::kFp32);
    const std::vector<Translation> want = tr_->translate(srcs, TranslateOptions{});
    for (int beam : {1, 3}) {
      TranslateOptions o;
      o.search.beam = beam;
      o.shortlist = &full;
      const std::vector<Translation> wide = tr_->translate(srcs, o);
      o.shortlist = &built;
      const std::vector<Translation> own = tr_->translate(srcs, o);
      o.shortlist = &without;
      const std::vector<Translation> cut = tr_->translate(srcs, o);
      // The search's masks set entries to -inf and lift them again over the steps of a batch,
      // where the shortlist keeps its -inf entries from step to step (decode/step_model.h).
      o.search.min_length = 2;
      o.search.block_ngram_repeat = 1;
      const std::vector<Translation> cut_masked = tr_->translate(srcs, o);
      o.search.min_length = 0;
      o.search.block_ngram_repeat = 0;
      const std::vector<Translation> plain = beam == 1 ? want : tr_->translate(srcs, [&] {
        TranslateOptions b;
        b.search.beam = beam;
        return b;
      }());
      int changed = 0;
      for (size_t i = 0; i < srcs.size(); ++i) {
        EXPECT_EQ(wide[i].text(), plain[i].text()) << srcs[i];
        EXPECT_NEAR(wide[i].nbest[0].score, plain[i].nbest[0].score, 1e-4) << srcs[i];
        if (beam == 1) {
          EXPECT_EQ(own[i].text(), golden_cases("seq2seq")[i].second) << srcs[i];
        }
        for (int32_t id : cut[i].nbest[0].ids) EXPECT_NE(id, banned) << srcs[i];
        for (int32_t id : cut_masked[i].nbest[0].ids) EXPECT_NE(id, banned) << srcs[i];
        EXPECT_GE(cut_masked[i].nbest[0].ids.size(), 2u) << srcs[i];
        changed += cut[i].text() != plain[i].text();
      }
      EXPECT_GT(changed, 0) << "the banned token was in some output";
    }
  }
}

// With int8 or bf16 decoding weights the shortlisted rows of W_o are quantized or rounded too (as
// the full matrix's are, on the same kernels): a shortlist of every token scores as the same
// precision without one, up to the normalisation over the few special tokens it leaves out; the
// fp32 product of those rows would miss by the rounding error.
TEST_F(ShortlistFile, LowPrecisionDecodingRoundsTheShortlistedRows) {
  std::vector<std::string> srcs;
  for (const auto& [in, out] : golden_cases("seq2seq")) srcs.push_back(in);
  std::string all = "engram-shortlist 1\n*\t";
  for (int32_t t = 4; t < tr_->tgt.size(); ++t) all += tr_->tgt.token(t) + " ";
  const Shortlist full = Shortlist::load(write(all + "\n"), tr_->src, tr_->tgt);
  for (const decode::Precision precision : {decode::Precision::kInt8, decode::Precision::kBf16}) {
    for (const int beam : {1, 3}) {  // up to 8 rows and more: the few-row kernels and oneDNN's
      TranslateOptions o;
      o.search.beam = beam;
      tr_->set_precision(decode::Precision::kFp32);
      const std::vector<Translation> fp32 = tr_->translate(srcs, o);
      tr_->set_precision(precision);
      const std::vector<Translation> plain = tr_->translate(srcs, o);
      o.shortlist = &full;
      const std::vector<Translation> wide = tr_->translate(srcs, o);
      double low_vs_fp32 = 0;
      for (size_t i = 0; i < srcs.size(); ++i) {
        EXPECT_EQ(wide[i].text(), plain[i].text()) << srcs[i];
        EXPECT_NEAR(wide[i].nbest[0].score, plain[i].nbest[0].score, 1e-4) << srcs[i];
        low_vs_fp32 = std::max(low_vs_fp32, std::fabs(plain[i].nbest[0].score - fp32[i].nbest[0].score));
      }
      EXPECT_GT(low_vs_fp32, 1e-3) << "the low precision scores as fp32: the comparison could not tell them apart";
    }
  }
  tr_->set_precision(decode::Precision::kFp32);
}

TEST(ShortlistTranslator, AModelWithoutOneSaysSo) {
  const auto tr = load_model_as<Translator>(golden_dir("seq2seq"), "seq2seq");
  ASSERT_EQ(tr->shortlist, nullptr);
  try {
    tr->shortlist_table();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no shortlist.tsv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace engram::models
