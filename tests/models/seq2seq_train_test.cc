// Seq2Seq around the model: text codecs (word, char, SentencePiece), the training task on files
// and on the dates generator through the shared Trainer (resume is bit-identical), loading the
// run directory for translation, alignment JSON, and bad input (mismatched files, bad keys).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engram/io/config.h"
#include "engram/models/seq2seq/task.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/trainer.h"

namespace engram::models {
namespace {

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
  TextCodec c = TextCodec::build(chars, Side::kSource, {"29 November 2026", "2026年11月29日"}, dir / "c");
  EXPECT_EQ(c.tokens("1 月"), (std::vector<std::string>{"1", "\xE2\x96\x81", "月"}));
  EXPECT_EQ(c.decode(c.encode("29  November 2026")), "29 November 2026");  // runs of spaces collapse
  EXPECT_EQ(c.encode("Z")[0], data::kUnkId);
  TextCodec c2 = TextCodec::load(chars, Side::kSource, dir / "c");
  EXPECT_EQ(c2.encode("2026年11月29日"), c.encode("2026年11月29日"));

  TokenizerConfig words{.unit = TokenUnit::kWord, .vocab_size = 0, .lowercase = true};
  TextCodec w = TextCodec::build(words, Side::kTarget, {"Welcome to Beijing", "welcome home"}, dir / "w");
  EXPECT_EQ(w.size(), data::kNumSpecial + 4);
  EXPECT_EQ(w.decode(w.encode("WELCOME to Paris")), "welcome to <unk>");
  EXPECT_EQ(w.tokens("Welcome  home"), (std::vector<std::string>{"welcome", "home"}));
  EXPECT_TRUE(fs::exists(dir / "w/tgt.vocab.txt"));

  TokenizerConfig spm{.unit = TokenUnit::kSpm, .joint = true, .vocab_size = 28};
  std::vector<std::string> lines;
  for (int i = 0; i < 50; ++i) lines.push_back(fmt::format("the cat number {} sat on the mat", i));
  TextCodec s = TextCodec::build(spm, Side::kSource, lines, dir / "s");
  TextCodec t = TextCodec::load(spm, Side::kTarget, dir / "s");  // joint: the same model
  EXPECT_EQ(s.size(), 28);
  EXPECT_EQ(t.decode(s.encode("the cat sat on the mat")), "the cat sat on the mat");
  EXPECT_EQ(s.tokens("the cat").size(), s.encode("the cat").size());
  try {
    TextCodec::load(words, Side::kSource, dir / "w");
    FAIL() << "a missing vocabulary file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("src.vocab.txt"), std::string::npos) << e.what();
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
  if (!j["alignment"].empty()) EXPECT_EQ(j["alignment"][0].size(), j["src"].size());
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

}  // namespace
}  // namespace engram::models
