// Seq2Seq around the model: text codecs (word, char, SentencePiece), the training task on files
// and on the dates generator through the shared Trainer (resume is bit-identical), loading the
// run directory for translation, alignment JSON, and bad input (mismatched files, bad keys).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engram/io/config.h"
#include "engram/models/seq2seq/task.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/trainer.h"

namespace engram::models {
namespace seq2seq_train_test {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / fmt::format("engram-s2s-{}-{}", info->name(), ::getpid());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TextCodec, CharactersWordsAndPieces) {
  TempDir dir;
  TokenizerConfig chars{.unit = TokenUnit::kChar, .vocab_size = 0};
  TextCodec c = chars.build(Side::kSource, {"29 November 2026", "2026年11月29日"}, dir / "c");
  EXPECT_EQ(c.tokens("1 月"), (std::vector<std::string>{"1", "\xE2\x96\x81", "月"}));
  EXPECT_EQ(c.decode(c.encode("29  November 2026")), "29 November 2026");  // runs of spaces collapse
  EXPECT_EQ(c.encode("Z")[0], data::kUnkId);
  TextCodec c2 = chars.load(Side::kSource, dir / "c");
  EXPECT_EQ(c2.encode("2026年11月29日"), c.encode("2026年11月29日"));

  TokenizerConfig words{.unit = TokenUnit::kWord, .vocab_size = 0, .lowercase = true};
  TextCodec w = words.build(Side::kTarget, {"Welcome to Beijing", "welcome home"}, dir / "w");
  EXPECT_EQ(w.size(), data::kNumSpecial + 4);
  EXPECT_EQ(w.decode(w.encode("WELCOME to Paris")), "welcome to <unk>");
  EXPECT_EQ(w.tokens("Welcome  home"), (std::vector<std::string>{"welcome", "home"}));
  EXPECT_TRUE(fs::exists(dir / "w/tgt.vocab.txt"));

  TokenizerConfig spm{.unit = TokenUnit::kSpm, .joint = true, .vocab_size = 28};
  std::vector<std::string> lines;
  for (int i = 0; i < 50; ++i) lines.push_back(fmt::format("the cat number {} sat on the mat", i));
  TextCodec s = spm.build(Side::kSource, lines, dir / "s");
  TextCodec t = spm.load(Side::kTarget, dir / "s");  // joint: the same model
  EXPECT_EQ(s.size(), 28);
  EXPECT_EQ(t.decode(s.encode("the cat sat on the mat")), "the cat sat on the mat");
  EXPECT_EQ(s.tokens("the cat").size(), s.encode("the cat").size());
  try {
    words.load(Side::kSource, dir / "w");
    FAIL() << "a missing vocabulary file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("src.vocab.txt"), std::string::npos) << e.what();
  }
}

TEST(TextCodec, SourceVocabularySizeOfItsOwn) {
  TempDir dir;
  TokenizerConfig words{.unit = TokenUnit::kWord, .vocab_size = 0, .src_vocab_size = data::kNumSpecial + 2};
  const std::vector<std::string> lines = {"a a a b b c", "d e"};
  EXPECT_EQ(words.build(Side::kSource, lines, dir / "w").size(), data::kNumSpecial + 2);  // a, b
  EXPECT_EQ(words.build(Side::kTarget, lines, dir / "w").size(), data::kNumSpecial + 5);
  TokenizerConfig joint{.unit = TokenUnit::kSpm, .joint = true, .vocab_size = 28, .src_vocab_size = 40};
  try {
    joint.build(Side::kSource, lines, dir / "j");
    FAIL() << "src_vocab_size with a joint model was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "tokenizer: src_vocab_size 40 must be >= 0, and 0 with a joint model");
  }
}

// Tatoeba-like pairs ("English<TAB>Chinese<TAB>attribution") and a CC-CEDICT file beside them.
Seq2SeqTrainConfig with_dictionary(const TempDir& dir, double weight) {
  std::string tsv;
  const std::vector<std::string> en = {"I come.", "You come.", "He comes.", "We come.", "They come."};
  const std::vector<std::string> zh = {"我来。", "你来。", "他来。", "我们来。", "他们来。"};
  for (int r = 0; r < 4; ++r)
    for (size_t i = 0; i < en.size(); ++i) tsv += fmt::format("{}\t{}\tCC-BY 2.0\n", en[i], zh[i]);
  write_file(dir / "pairs.tsv", tsv);
  write_file(dir / "dict.u8",
             "# CC-CEDICT\n"
             "北京 北京 [Bei3 jing1] /Beijing municipality, capital of the PRC/\n"
             "歡迎 欢迎 [huan1 ying2] /to welcome/welcome/\n"
             "來 来 [lai2] /to come/\n"
             "朋友 朋友 [peng2 you5] /friend/\n"
             "故宮博物院 故宫博物院 [Gu4 gong1 Bo2 wu4 yuan4] /Palace Museum, in the Forbidden City, Beijing/\n"
             "參觀 参观 [can1 guan1] /to visit (a place); to tour/\n"
             "上海 上海 [Shang4 hai3] /Shanghai municipality/\n"
             "東京 东京 [Dong1 jing1] /Tokyo, capital of Japan/\n"
             "張 张 [Zhang1] /surname Zhang/\n");
  Seq2SeqTrainConfig c;
  c.data.train_tsv = dir / "pairs.tsv";
  c.data.src_field = 1;
  c.data.tgt_field = 0;
  c.data.valid_size = 4;
  c.data.max_tokens = 16;
  c.data.dictionary = dir / "dict.u8";
  c.data.dictionary_weight = weight;
  c.data.dictionary_name_weight = weight;
  c.seq2seq.tokenizer.unit = TokenUnit::kChar;
  c.seq2seq.tokenizer.vocab_size = 0;
  c.seq2seq.embed_dim = 4;
  c.seq2seq.hidden = 8;
  c.train.run_dir = dir / fmt::format("run-{}", weight);
  return c;
}

// hold_out (models/training.h), the split of seq2seq and pointer_generator runs without
// validation files: the held pairs are the first `held` indices of a core::Rng(12345)
// Fisher-Yates shuffle of 0..n-1 (the split every run has used, so a config splits as before),
// both splits keep file order and each pair's source with its target, and every pair lands once.
TEST(HoldOut, TheSeededPairsGoToValidationInFileOrder) {
  constexpr size_t kPairs = 20;
  constexpr int64_t kHeld = 5;
  TextPairs all, train, valid;
  for (size_t i = 0; i < kPairs; ++i) all.src.push_back(fmt::format("s{:02}", i)), all.tgt.push_back(fmt::format("t{:02}", i));
  hold_out(all, kHeld, train, valid);
  std::vector<size_t> idx(kPairs);
  for (size_t i = 0; i < kPairs; ++i) idx[i] = i;
  core::Rng rng(12345);
  rng.shuffle(idx.begin(), idx.end());
  std::set<size_t> held(idx.begin(), idx.begin() + kHeld);
  TextPairs want_train, want_valid;
  for (size_t i = 0; i < kPairs; ++i) {
    TextPairs& to = held.count(i) ? want_valid : want_train;
    to.src.push_back(fmt::format("s{:02}", i));
    to.tgt.push_back(fmt::format("t{:02}", i));
  }
  EXPECT_EQ(valid.src, want_valid.src);
  EXPECT_EQ(valid.tgt, want_valid.tgt);
  EXPECT_EQ(train.src, want_train.src);
  EXPECT_EQ(train.tgt, want_train.tgt);
  EXPECT_NE(*held.rbegin(), static_cast<size_t>(kHeld - 1)) << "the seed picks pairs, not the file's head";
}

TEST(Seq2SeqTask, DictionaryPairsJoinTrainingOnly) {
  TempDir dir;
  Seq2SeqTrainConfig plain = with_dictionary(dir, 1);
  plain.data.dictionary.clear();
  plain.train.run_dir = dir / "plain";
  Seq2SeqTask without(plain, nullptr);
  Seq2SeqTask task(with_dictionary(dir, 2), nullptr);
  // The same pairs are held out; the dictionary's characters are in the source vocabulary.
  EXPECT_EQ(task.valid_text().src, without.valid_text().src);
  EXPECT_EQ(task.valid_text().tgt, without.valid_text().tgt);
  EXPECT_EQ(task.main_examples(), 16);
  // The held-out pairs are written into the run directory, one a line.
  std::string src, tgt;
  for (size_t i = 0; i < task.valid_text().src.size(); ++i) {
    src += task.valid_text().src[i] + "\n";
    tgt += task.valid_text().tgt[i] + "\n";
  }
  EXPECT_EQ(task.valid_text().src.size(), 4u);
  EXPECT_EQ(read_file(dir / "run-2/valid.src"), src);
  EXPECT_EQ(read_file(dir / "run-2/valid.tgt"), tgt);
  EXPECT_EQ(without.model().cfg().src_vocab + 16, task.model().cfg().src_vocab);  // 北京欢迎朋友故宫博物院参观上海东
  // Weight 2: the 8 glossed entries (张 has only a surname) twice in every epoch.
  task.begin_epoch(3, 1);
  const auto& ex = task.epoch_examples();
  ASSERT_EQ(ex.size(), 16u + 2 * 8);
  std::map<std::vector<int32_t>, int> seen;
  for (size_t i = 16; i < ex.size(); ++i) ++seen[ex[i].src];
  EXPECT_EQ(seen.size(), 8u);
  for (const auto& [src, n] : seen) EXPECT_EQ(n, 2);
}

TEST(Seq2SeqTask, NamesHaveAWeightOfTheirOwn) {
  TempDir dir;
  Seq2SeqTrainConfig c = with_dictionary(dir, 0);
  c.data.dictionary_name_weight = 3;  // 北京 故宫博物院 上海 东京 three times, 欢迎 来 朋友 参观 never
  Seq2SeqTask task(c, nullptr);
  task.begin_epoch(1, 1);
  const auto& ex = task.epoch_examples();
  ASSERT_EQ(ex.size(), 16u + 3 * 4);
  std::map<std::vector<int32_t>, int> seen;
  for (size_t i = 16; i < ex.size(); ++i) ++seen[ex[i].src];
  for (const char* name : {"北京", "故宫博物院", "上海", "东京"}) EXPECT_EQ(seen[task.src_codec().encode(name)], 3) << name;
  EXPECT_EQ(seen.count(task.src_codec().encode("欢迎")), 0u);
}

// with_dictionary's config for names in sentences: the training pairs `tsv`, one of them held out,
// every name once in a sentence per epoch and never alone, no other entries.
Seq2SeqTrainConfig names_in_sentences(const TempDir& dir, const std::string& tsv) {
  Seq2SeqTrainConfig c = with_dictionary(dir, 0);
  write_file(dir / "pairs.tsv", tsv);
  c.data.valid_size = 1;
  c.data.max_tokens = 64;
  c.data.dictionary_context_weight = 1;
  c.data.dictionary_name_weight = 0;
  return c;
}

// The names-in-sentences pairs of an epoch, as "source / target" text.
std::vector<std::string> sentence_pairs(Seq2SeqTask& task, int epoch) {
  task.begin_epoch(epoch, 1);
  const auto& ex = task.epoch_examples();
  std::vector<std::string> out;
  for (size_t i = static_cast<size_t>(task.main_examples()); i < ex.size(); ++i)
    out.push_back(task.src_codec().decode(ex[i].src) + " / " + task.tgt_codec().decode(ex[i].tgt));
  return out;
}

TEST(Seq2SeqTask, NamesPutIntoTrainingSentences) {
  TempDir dir;
  // A training pair with a name on both sides: 东京 / Tokyo is the one slot.
  Seq2SeqTrainConfig c = names_in_sentences(dir, "I come.\t我来。\tx\nYou come.\t你来。\tx\nHe comes.\t他来。\tx\n"
                                                 "We come.\t我们来。\tx\nThey come.\t他们来。\tx\nI live in Tokyo.\t我住在东京。\tx\n"
                                                 "I come.\t我来。\tx\nYou come.\t你来。\tx\n");
  Seq2SeqTask task(c, nullptr);
  const std::vector<std::string> pairs = sentence_pairs(task, 0);
  const std::set<std::string> sentences(pairs.begin(), pairs.end());
  ASSERT_NE(task.valid_text().tgt[0], "I live in Tokyo.");  // the seeded split keeps the slot for training
  // One sentence per name (北京 故宫博物院 上海 东京), each in the slot's place.
  EXPECT_EQ(sentences, (std::set<std::string>{"我住在北京。 / I live in Beijing.", "我住在故宫博物院。 / I live in Palace Museum.",
                                              "我住在上海。 / I live in Shanghai.", "我住在东京。 / I live in Tokyo."}));
}

// dictionary_contexts: each name gets that many sentences, drawn from the slots; the epochs take
// turns with them (weight 1 / 8 each), so an epoch holds about one sentence per name and eight
// epochs show a name in every slot that its draws chose.
TEST(Seq2SeqTask, NamesComeInSeveralSentencesOverTheEpochs) {
  TempDir dir;
  Seq2SeqTrainConfig c = names_in_sentences(dir, "I come.\t我来。\tx\nYou come.\t你来。\tx\nHe comes.\t他来。\tx\n"
                                                 "We come.\t我们来。\tx\nThey come.\t他们来。\tx\nI live in Tokyo.\t我住在东京。\tx\n"
                                                 "I was in Shanghai.\t我在上海。\tx\nI come.\t我来。\tx\nYou come.\t你来。\tx\n");
  c.data.dictionary_contexts = 8;
  Seq2SeqTask task(c, nullptr);
  std::set<std::string> seen;
  for (int epoch = 0; epoch < 8; ++epoch) {
    const std::vector<std::string> s = sentence_pairs(task, epoch);
    EXPECT_GE(s.size(), 4u);  // about one per name (北京 故宫博物院 上海 东京), rounded up per group
    EXPECT_LE(s.size(), 8u);
    seen.insert(s.begin(), s.end());
  }
  for (const char* want : {"我住在北京。 / I live in Beijing.", "我在北京。 / I was in Beijing.", "我住在上海。 / I live in Shanghai.",
                           "我在东京。 / I was in Tokyo."})
    EXPECT_TRUE(seen.count(want)) << want;
  c.data.dictionary_contexts = 0;
  c.train.run_dir = dir / "none";
  EXPECT_THROW(Seq2SeqTask(c, nullptr), Error);
}

// tokenizer.simplified: a corpus written partly in traditional characters (Tatoeba's cmn-eng
// holds "Welcome to your new home. / 歡迎來到你的新家。") is read in simplified ones before the
// names are looked for, and the codecs read traditional input as simplified. The expected
// characters are CC-CEDICT's (traditional -> simplified: 東京 东京, 歡迎 欢迎, 來 来).
TEST(Seq2SeqTask, SimplifiedReadsATraditionalCorpusAndInputAsSimplified) {
  TempDir dir;
  Seq2SeqTrainConfig c = names_in_sentences(dir, "I come.\t我來。\tx\nYou come.\t你來。\tx\nHe comes.\t他来。\tx\n"
                                                 "We come.\t我們來。\tx\nThey come.\t他们来。\tx\nI live in Tokyo.\t我住在東京。\tx\n"
                                                 "I come.\t我来。\tx\nYou come.\t你来。\tx\n");
  try {  // written as it stands, 東京 is not the dictionary's 东京: no pair holds a name
    Seq2SeqTask as_is(c, nullptr);
    FAIL() << "a traditional 東京 matched the simplified headword";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no training pair holds a dictionary name"), std::string::npos) << e.what();
  }
  c.seq2seq.tokenizer.simplified = true;
  c.train.run_dir = dir / "simplified";
  Seq2SeqTask task(c, nullptr);
  const std::vector<std::string> pairs = sentence_pairs(task, 0);
  EXPECT_EQ(std::set<std::string>(pairs.begin(), pairs.end()),
            (std::set<std::string>{"我住在北京。 / I live in Beijing.", "我住在故宫博物院。 / I live in Palace Museum.",
                                   "我住在上海。 / I live in Shanghai.", "我住在东京。 / I live in Tokyo."}));
  const TextCodec& src = task.src_codec();
  EXPECT_EQ(src.encode("來"), src.encode("来"));
  EXPECT_EQ(src.tokens("我們來"), (std::vector<std::string>{"我", "们", "来"}));
  EXPECT_EQ(src.id("來"), data::kUnkId);  // no traditional character in the vocabulary
  const TextCodec again = c.seq2seq.tokenizer.load(Side::kSource, c.train.run_dir);
  EXPECT_EQ(again.encode("歡迎來東京"), src.encode("欢迎来东京"));
  TokenizerConfig as_is = c.seq2seq.tokenizer;
  as_is.simplified = false;
  EXPECT_FALSE(same_vocabulary(as_is.load(Side::kSource, c.train.run_dir), src));
}

// OpenCC writes a few of CC-CEDICT's simplified headwords otherwise (乾安 -> 干安, as it writes
// the sentences): with tokenizer.simplified the names are looked for as converted, so the one
// slot, a sentence with 乾安, is found.
TEST(Seq2SeqTask, SimplifiedLooksForTheNamesAsConverted) {
  TempDir dir;
  Seq2SeqTrainConfig c = names_in_sentences(dir, "I come.\t我来。\tx\nYou come.\t你来。\tx\nHe comes.\t他来。\tx\n"
                                                 "We come.\t我们来。\tx\nI live in Qian'an.\t我住在乾安。\tx\n"
                                                 "I come.\t我来。\tx\nYou come.\t你来。\tx\n");
  write_file(dir / "dict.u8", "北京 北京 [Bei3 jing1] /Beijing municipality/\n乾安 乾安 [Qian2 an1] /Qian'an county/\n");
  c.seq2seq.tokenizer.simplified = true;
  Seq2SeqTask task(c, nullptr);
  ASSERT_NE(task.valid_text().tgt[0], "I live in Qian'an.");  // the seeded split keeps the slot for training
  const std::vector<std::string> pairs = sentence_pairs(task, 0);
  EXPECT_EQ(std::set<std::string>(pairs.begin(), pairs.end()),
            (std::set<std::string>{"我住在北京。 / I live in Beijing.", "我住在干安。 / I live in Qian'an."}));
}

// Guided alignment's keys: a run with the guide (Model 1 with fast_align's diagonal prior) trains
// a batch to a finite loss, and each bad value is refused with its key named.
TEST(Seq2SeqTask, GuidedAlignmentKeysAreCheckedAndTheGuideTrains) {
  TempDir dir;
  Seq2SeqTrainConfig c = with_dictionary(dir, 1);
  c.data.guided_alignment = 1;
  c.data.guided_alignment_diagonal = 4;
  Seq2SeqTask task(c, nullptr);
  task.begin_epoch(1, 1);
  const train::BatchResult r = task.train_batch(0);
  EXPECT_TRUE(std::isfinite(r.loss_sum) && r.units > 0) << r.loss_sum << " over " << r.units;
  const auto refused = [&](auto set, const std::string& want) {
    Seq2SeqTrainConfig bad = c;
    set(bad.data);
    bad.train.run_dir = dir / "bad";
    try {
      Seq2SeqTask t(bad, nullptr);
      ADD_FAILURE() << "accepted: " << want;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), want);
    }
  };
  refused([](Seq2SeqDataConfig& d) { d.guided_alignment_diagonal = 101; },
          "seq2seq data: guided_alignment_diagonal 101 must be in [0, 100]");
  refused([](Seq2SeqDataConfig& d) { d.guided_alignment_diagonal = -1; },
          "seq2seq data: guided_alignment_diagonal -1 must be in [0, 100]");
  refused([](Seq2SeqDataConfig& d) { d.guided_alignment_iterations = 0; },
          "seq2seq data: guided_alignment_iterations 0 must be in [1, 100]");
  refused([](Seq2SeqDataConfig& d) { d.guided_alignment = -0.5; },
          "seq2seq data: guided_alignment -0.5 must be a finite weight >= 0");
}

TEST(Seq2SeqTask, UnpunctuatedShareStripsTrainingPairsOnly) {
  TempDir dir;
  Seq2SeqTrainConfig c = with_dictionary(dir, 0);
  c.data.dictionary.clear();
  c.data.unpunctuated_share = 1;
  Seq2SeqTask all(c, nullptr);
  EXPECT_EQ(all.src_codec().encode("。")[0], data::kUnkId);  // no training source keeps its full stop
  EXPECT_EQ(all.tgt_codec().encode(".")[0], data::kUnkId);
  for (const std::string& s : all.valid_text().src) EXPECT_EQ(s.substr(s.size() - 3), "。") << s;
  c.data.unpunctuated_share = 0;
  c.train.run_dir = dir / "none";
  Seq2SeqTask none(c, nullptr);
  EXPECT_NE(none.src_codec().encode("。")[0], data::kUnkId);
  c.data.unpunctuated_share = 1.5;
  c.train.run_dir = dir / "bad";
  try {
    Seq2SeqTask bad(c, nullptr);
    FAIL() << "unpunctuated_share 1.5 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "seq2seq data: unpunctuated_share 1.5 must be in [0, 1]");
  }
}

// concat_share: that share of the training pairs, each joined to another (Chinese sources without
// a space, English targets with one), made once: every epoch holds the same joined pairs after
// the training pairs, and the run's epochs keep one batch count.
TEST(Seq2SeqTask, ConcatShareJoinsTrainingPairsOnceForEveryEpoch) {
  TempDir dir;
  Seq2SeqTrainConfig c = with_dictionary(dir, 0);
  c.data.dictionary.clear();
  c.data.max_tokens = 64;
  c.data.concat_share = 0.5;
  Seq2SeqTask task(c, nullptr);
  const size_t n = static_cast<size_t>(task.main_examples());
  ASSERT_EQ(n, 16u);
  std::set<std::string> train;
  for (size_t i = 0; i < n; ++i) {
    const auto& e = task.epoch_examples()[i];
    train.insert(task.src_codec().decode(e.src) + "|" + task.tgt_codec().decode(e.tgt));
  }
  std::vector<std::string> first;
  for (int epoch = 0; epoch < 3; ++epoch) {
    task.begin_epoch(epoch, 1);  // throws if an epoch had another number of batches
    const auto& ex = task.epoch_examples();
    ASSERT_EQ(ex.size(), n + 8);
    std::vector<std::string> joined;
    for (size_t i = n; i < ex.size(); ++i) {
      const std::string src = task.src_codec().decode(ex[i].src), tgt = task.tgt_codec().decode(ex[i].tgt);
      // Two training pairs: "我来。你来。" / "I come. You come.", split at the first 。 and ". ".
      const size_t s = src.find("。") + 3, t = tgt.find(". ") + 1;
      ASSERT_LT(s, src.size()) << src;
      ASSERT_NE(t, std::string::npos + 1) << tgt;
      EXPECT_EQ(train.count(src.substr(0, s) + "|" + tgt.substr(0, t)), 1u) << src << " / " << tgt;
      EXPECT_EQ(train.count(src.substr(s) + "|" + tgt.substr(t + 1)), 1u) << src << " / " << tgt;
      joined.push_back(src + "|" + tgt);
    }
    std::sort(joined.begin(), joined.end());
    if (epoch == 0) first = joined;
    EXPECT_EQ(joined, first) << "epoch " << epoch;
  }
  c.data.concat_share = -0.1;
  c.train.run_dir = dir / "bad";
  try {
    Seq2SeqTask bad(c, nullptr);
    FAIL() << "concat_share -0.1 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "seq2seq data: concat_share -0.1 must be in [0, 1]");
  }
}

TEST(Seq2SeqTask, FractionalDictionaryWeightCyclesWithAFixedBatchCount) {
  TempDir dir;
  Seq2SeqTrainConfig c = with_dictionary(dir, 0.5);
  // Words: 北京 上海 东京 (1 -> 1 word) and 欢迎 来 参观 (1 -> 2 words) are groups of three, each
  // two pairs an epoch; 故宫博物院 and 朋友 are groups of one, every epoch.
  c.seq2seq.tokenizer.unit = TokenUnit::kWord;
  Seq2SeqTask task(c, nullptr);
  const int64_t batches = task.batches_per_epoch();
  std::map<std::vector<int32_t>, int> seen;
  size_t per_epoch = 0;
  for (int epoch = 0; epoch < 8; ++epoch) {
    task.begin_epoch(epoch, 1);  // throws if an epoch had another number of batches
    EXPECT_EQ(task.batches_per_epoch(), batches);
    const auto& ex = task.epoch_examples();
    if (epoch == 0) per_epoch = ex.size() - 16;
    EXPECT_EQ(ex.size() - 16, per_epoch);
    for (size_t i = 16; i < ex.size(); ++i) ++seen[ex[i].src];
    EXPECT_GT(task.train_batch(batches - 1).units, 0);
  }
  EXPECT_EQ(per_epoch, 2u + 2u + 1u + 1u);
  // Over 8 epochs each pair of a group of three comes round 5 or 6 times (2 of 3 per epoch).
  ASSERT_EQ(seen.size(), 8u);
  for (const char* w : {"北京", "上海", "东京", "欢迎", "来", "参观"}) {
    EXPECT_GE(seen[task.src_codec().encode(w)], 5) << w;
    EXPECT_LE(seen[task.src_codec().encode(w)], 6) << w;
  }
  EXPECT_EQ(seen[task.src_codec().encode("朋友")], 8);
  EXPECT_EQ(seen[task.src_codec().encode("故宫博物院")], 8);
}

TEST(Seq2SeqTask, BadDictionaryLineNamesFileAndLine) {
  TempDir dir;
  Seq2SeqTrainConfig c = with_dictionary(dir, 1);
  write_file(dir / "dict.u8", "來 来 [lai2] /to come/\n北京 北京 Bei3 jing1 /Beijing/\n");
  try {
    Seq2SeqTask bad(c, nullptr);
    FAIL() << "a malformed dictionary line was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir / "dict.u8:2: CC-CEDICT entry without '[pinyin]'", 0), 0u) << e.what();
  }
  c = with_dictionary(dir, -1);
  try {
    Seq2SeqTask bad(c, nullptr);
    FAIL() << "a negative weight was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "seq2seq data: dictionary weights must be in [0, 1000], got -1");
  }
}

Seq2SeqTrainConfig tiny_dates(const std::string& run_dir) {
  Seq2SeqTrainConfig c;
  c.data.generator = "dates";
  c.data.generate_train = 600;
  c.data.generate_valid = 40;
  c.data.max_tokens = 1024;
  c.seq2seq.tokenizer.unit = TokenUnit::kChar;
  c.seq2seq.tokenizer.vocab_size = 0;
  c.seq2seq.embed_dim = 8;
  c.seq2seq.hidden = 16;
  c.train.max_steps = 12;
  c.train.valid_every = 6;
  c.train.log_every = 6;
  c.train.run_dir = run_dir;
  c.train.optimizer.lr = 3e-3f;
  return c;
}

TEST(Seq2SeqTask, TrainsResumesIdenticallyAndTranslates) {
  TempDir dir;
  std::FILE* quiet = nullptr;
  {  // straight through 12 steps
    Seq2SeqTask task(tiny_dates(dir / "a"), quiet);
    train::Trainer(task, task.config().train).run();
  }
  {  // 6 steps, then a new process-like task resumes to 12
    Seq2SeqTrainConfig c = tiny_dates(dir / "b");
    c.train.max_steps = 6;
    Seq2SeqTask first(c, quiet);
    train::Trainer(first, c.train).run();
    Seq2SeqTask second(tiny_dates(dir / "b"), quiet);
    train::TrainSummary s = train::Trainer(second, second.config().train).run();
    EXPECT_TRUE(s.resumed);
    EXPECT_EQ(s.steps, 12);
  }
  EXPECT_EQ(read_file(dir / "a/last/model.safetensors"), read_file(dir / "b/last/model.safetensors"));
  EXPECT_TRUE(fs::exists(dir / "a/train.yaml"));
  // The metrics file has validation lines with every metric.
  std::ifstream metrics(dir / "a/metrics.jsonl");
  std::string line;
  int valid = 0;
  while (std::getline(metrics, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["event"] == "valid") {
      ++valid;
      for (const char* k : {"bleu", "ppl", "loss", "acc"}) EXPECT_TRUE(j.contains(k)) << k;
    }
  }
  EXPECT_EQ(valid, 2);
  // The run directory loads for translation (best/ checkpoint, vocabularies from the run dir).
  const auto loaded = load_model_as<Translator>(dir / "a", "seq2seq");
  Translator& tr = *loaded;
  EXPECT_EQ(tr.dir().filename(), "best");
  TranslateOptions o;
  o.search.beam = 3;
  o.search.n_best = 2;
  o.search.alignments = true;
  std::vector<Translation> out = tr.translate({"29 November 2026", "", "Sunday, May 3, 1987"}, o);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[1].nbest.empty());
  EXPECT_EQ(out[1].text(), "");
  ASSERT_EQ(out[0].nbest.size(), 2u);
  EXPECT_GE(out[0].nbest[0].score, out[0].nbest[1].score);
  nlohmann::json j = nlohmann::json::parse(alignment_json(out[2]));
  EXPECT_EQ(j["src"].size(), out[2].src_tokens.size());
  EXPECT_EQ(j["alignment"].size(), j["tgt"].size());
  if (!j["alignment"].empty()) { EXPECT_EQ(j["alignment"][0].size(), j["src"].size()); }
  // best/ alone is a model directory: it carries the vocabularies, and a copy elsewhere translates.
  fs::copy(dir / "a/best", dir / "moved", fs::copy_options::recursive);
  for (const char* f : {"src.vocab.txt", "tgt.vocab.txt"}) EXPECT_TRUE(fs::exists(fs::path(dir / "moved") / f)) << f;
  EXPECT_EQ(load_model_as<Translator>(dir / "moved", "seq2seq")->translate({"29 November 2026"}, {})[0].text(),
            tr.translate({"29 November 2026"}, {})[0].text());
}

TEST(Seq2SeqTask, ReadsParallelFilesAndReportsBadInput) {
  TempDir dir;
  write_file(dir / "train.src", "a b c\nb c\n\nc a\na a b\nb\n");
  write_file(dir / "train.tgt", "x y z\ny z\nq\nz x\nx x y\ny\n");
  write_file(dir / "valid.src", "a b\nc\n");
  write_file(dir / "valid.tgt", "x y\nz\n");
  Seq2SeqTrainConfig c;
  c.data.train_src = dir / "train.src";
  c.data.train_tgt = dir / "train.tgt";
  c.data.valid_src = dir / "valid.src";
  c.data.valid_tgt = dir / "valid.tgt";
  c.seq2seq.tokenizer.unit = TokenUnit::kWord;
  c.seq2seq.embed_dim = 4;
  c.seq2seq.hidden = 8;
  c.train.run_dir = dir / "run";
  Seq2SeqTask task(c, nullptr);  // the pair with an empty source line is skipped
  EXPECT_EQ(task.model().cfg().src_vocab, data::kNumSpecial + 3);
  EXPECT_EQ(task.model().cfg().tgt_vocab, data::kNumSpecial + 3);  // "q" came only with the empty line
  EXPECT_GT(task.batches_per_epoch(), 0);
  task.begin_epoch(0, 1);
  EXPECT_GT(task.train_batch(0).units, 0);
  train::Metrics m = task.validate();
  EXPECT_TRUE(m.count("bleu") && m.count("ppl"));

  write_file(dir / "short.tgt", "x y z\n");
  c.data.train_tgt = dir / "short.tgt";
  c.train.run_dir = dir / "run2";
  try {
    Seq2SeqTask bad(c, nullptr);
    FAIL() << "mismatched line counts accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("short.tgt"), std::string::npos) << e.what();
  }
  Seq2SeqTrainConfig parsed;
  EXPECT_THROW(io::from_yaml(io::parse_yaml("model: seq2seq\nseq2seq: {hiden: 3}\n", "t.yaml"), parsed, "t.yaml"),
               Error);
}

}  // namespace seq2seq_train_test
}  // namespace engram::models
