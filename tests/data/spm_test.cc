// SentencePiece wrapper: train on a small generated corpus in a temp dir, check the special ids,
// encode/decode round trips and reproducibility; train on real Tatoeba Chinese.
#include "engram/data/spm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/data/parallel.h"
#include "engram/data/text.h"
#include "engram/data/vocab.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::TempDir;

// A few hundred lines of English and Chinese words (no full-width punctuation, which NFKC
// normalisation would change, so decode(encode(x)) == x exactly).
std::vector<std::string> small_corpus() {
  const std::vector<std::string> words = {"the", "cat",  "sat",  "on",        "mat",
                                          "dog", "ran",  "to",   "北京",      "欢迎",
                                          "你",  "我们", "走了", "attention", "memory"};
  core::Rng rng(7);
  std::vector<std::string> lines;
  for (int i = 0; i < 400; ++i) {
    std::string line;
    const int n = 3 + static_cast<int>(rng.below(8));
    for (int k = 0; k < n; ++k) line += (k ? " " : "") + words[rng.below(words.size())];
    lines.push_back(line);
  }
  return lines;
}

std::string file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Spm, TrainEncodeDecodeRoundTrip) {
  TempDir tmp;
  const auto corpus = small_corpus();
  const std::string text = tmp.file("corpus.txt");
  write_lines(text, corpus);
  for (auto type : {SpmModelType::kUnigram, SpmModelType::kBpe}) {
    SpmTrainOptions o;
    o.vocab_size = 40;
    o.model_type = type;
    const std::string model_path = tmp.file(type == SpmModelType::kBpe ? "bpe.spm" : "uni.spm");
    train_spm({text}, model_path, o);
    EXPECT_FALSE(std::filesystem::exists(model_path + ".tmp"));
    const SpmModel m = SpmModel::load(model_path);
    EXPECT_EQ(m.size(), 40);
    EXPECT_EQ(m.piece(kPadId), "<pad>");
    EXPECT_EQ(m.piece(kUnkId), "<unk>");
    EXPECT_EQ(m.piece(kGoId), "<go>");
    EXPECT_EQ(m.piece(kEosId), "<eos>");
    for (const auto& line : corpus) {
      const auto ids = m.encode(line);
      for (int32_t id : ids) {
        EXPECT_GE(id, kNumSpecial) << line;  // no specials inside plain text
        EXPECT_LT(id, m.size());
      }
      EXPECT_EQ(m.decode(ids), line);
      EXPECT_EQ(m.decode_pieces(m.encode_pieces(line)), line);
    }
    const auto wrapped = m.encode("the cat", true, true);
    EXPECT_EQ(wrapped.front(), kGoId);
    EXPECT_EQ(wrapped.back(), kEosId);
    EXPECT_EQ(m.decode(wrapped), "the cat");
    // decode stops at <eos> and skips <pad>.
    auto padded = m.encode("dog");
    padded.insert(padded.begin(), kPadId);
    padded.push_back(kEosId);
    padded.push_back(m.encode("cat").front());
    EXPECT_EQ(m.decode(padded), "dog");
    // Unknown characters map to <unk>.
    EXPECT_EQ(m.encode("ж").back(), kUnkId);
  }
}

TEST(Spm, TrainingIsReproducible) {
  TempDir tmp;
  SpmTrainOptions o;
  o.vocab_size = 36;
  train_spm_from_lines(small_corpus(), tmp.file("a.spm"), o);
  train_spm_from_lines(small_corpus(), tmp.file("b.spm"), o);
  EXPECT_EQ(file_bytes(tmp.file("a.spm")), file_bytes(tmp.file("b.spm")));
}

TEST(Spm, Errors) {
  TempDir tmp;
  SpmTrainOptions o;
  o.vocab_size = 5000;  // far more pieces than 15 words can give
  EXPECT_THROW(train_spm_from_lines(small_corpus(), tmp.file("big.spm"), o), Error);
  EXPECT_THROW(train_spm_from_lines({"", ""}, tmp.file("empty.spm"), SpmTrainOptions{}), Error);
  EXPECT_THROW(SpmModel::load(tmp.file("missing.spm")), Error);
  const auto junk = tmp.write("junk.spm", "not a model");
  EXPECT_THROW(SpmModel::load(junk), Error);
  o.vocab_size = 3;
  EXPECT_THROW(train_spm_from_lines(small_corpus(), tmp.file("tiny.spm"), o), Error);
}

// Real data: the Chinese side of Tatoeba cmn-eng (first 3000 pairs), character coverage 0.9995.
TEST_F(CorpusTest, SpmOnTatoebaChinese) {
  ParallelOptions po;
  po.max_pairs = 3000;
  const auto corpus = read_tsv_pairs(path("tatoeba-zh-en/cmn.txt"), po);
  ASSERT_EQ(corpus.size(), 3000u);
  TempDir tmp;
  SpmTrainOptions o;
  o.vocab_size = 2000;  // > the ~1,470 characters that 99.95% coverage keeps
  o.character_coverage = 0.9995;
  train_spm_from_lines(corpus.tgt, tmp.file("zh.spm"), o);
  const SpmModel m = SpmModel::load(tmp.file("zh.spm"));
  EXPECT_EQ(m.size(), 2000);
  int64_t pieces = 0, chars = 0;
  for (size_t i = 0; i < 200; ++i) {
    const auto ids = m.encode(corpus.tgt[i]);
    pieces += static_cast<int64_t>(ids.size());
    chars += utf8_length(corpus.tgt[i]);
    EXPECT_FALSE(ids.empty());
  }
  EXPECT_LT(pieces, chars);  // subwords merge characters on average
}

}  // namespace
}  // namespace engram::data
