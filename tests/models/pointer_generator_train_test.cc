// The pointer_generator family end to end: `engram train` through the registry on the
// generated names task (copy vs the vocabulary-only baseline: the learnability test), the
// no-coverage phase before coverage, a SentencePiece model on a TSV file, the summary picture,
// and config errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "data/test_util.h"
#include "engram/core/kernels/blas.h"
#include "engram/data/tasks/names.h"
#include "engram/models/pointer_generator/eval.h"
#include "engram/models/pointer_generator/show.h"
#include "engram/models/pointer_generator/task.h"
#include "engram/models/registry.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;
using data::testing::error_of;
using data::testing::TempDir;

std::vector<std::string> names_sets(const std::string& run) {
  return {"data.generator=names", "data.generate_train=1000", "data.generate_valid=50", "data.rouge_pairs=50",
          "pointer_generator.min_count=5", "pointer_generator.vocab_size=0", "pointer_generator.embed_dim=16",
          "pointer_generator.hidden=32", "train.max_epochs=3", "train.optimizer.lr=0.01",
          "train.clip.global_norm=5", "train.log_every=1000", "train.run_dir=" + run};
}

// Held-out pairs of the names task (a seed the training data does not use).
std::vector<data::SummaryPair> names_test_set(int n) {
  core::Rng rng(424242);
  std::vector<data::SummaryPair> out;
  for (const auto& p : data::tasks::make_name_pairs(n, {}, rng))
    out.push_back({p.source, {p.target}, static_cast<int64_t>(out.size()) + 1});
  return out;
}

// With a fixed seed, in seconds: the copying model reproduces most held-out names (which are
// outside its vocabulary); the same model without copy cannot write them at all (0 by
// construction: its outputs are vocabulary words).
TEST(PointerGeneratorLearnability, CopiesUnseenNamesTheBaselineCannot) {
  // One thread: these products are small, and helper threads spinning on a busy machine make
  // them many times slower.
  core::kernels::set_blas_threads(1);
  TempDir dir;
  const std::vector<data::SummaryPair> test = names_test_set(300);
  PgScores scores[2];
  for (int copy = 1; copy >= 0; --copy) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string run = dir.file(copy ? "copy" : "nocopy");
    std::vector<std::string> sets = names_sets(run);
    sets.push_back(fmt::format("pointer_generator.copy={}", copy ? "true" : "false"));
    const std::string summary = family("pointer_generator").train(YAML::Load("model: pointer_generator\n"), "<test>", sets);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto m = load_model_as<LoadedPointerGenerator>(run, "pointer_generator");
    EXPECT_EQ(m->model->cfg().copy, copy == 1);
    std::vector<Summary> sums;
    scores[copy] = evaluate_pointer_generator(*m->model, *m->codec, test, {}, &sums);
    const PgScores& s = scores[copy];
    std::printf("names task, copy %s: OOV-copy rate %.1f%% (%lld/%lld), ROUGE-1/2/L %.1f/%.1f/%.1f, copied tokens "
                "%.1f%%, trained in %.1f s (%s)\n",
                copy ? "on " : "off", 100 * s.oov_copy_rate, static_cast<long long>(s.oov_reproduced),
                static_cast<long long>(s.oov_reference), s.rouge1, s.rouge2, s.rouge_l, 100 * s.copy_share, secs,
                summary.c_str());
    std::printf("  e.g. %s -> %s\n", test[0].source.c_str(), sums[0].text.c_str());
    // Nearly every reference name is outside the vocabulary and in its source.
    EXPECT_GT(s.oov_reference, 500);
    if (copy) {
      // Beam search over the extended vocabulary (V + X classes per batch) copies as well.
      SummarizeOptions beam;
      beam.search.beam = 4;
      const PgScores b = evaluate_pointer_generator(*m->model, *m->codec, test, beam);
      std::printf("  beam 4: OOV-copy rate %.1f%%, ROUGE-L %.1f\n", 100 * b.oov_copy_rate, b.rouge_l);
      EXPECT_GT(b.oov_copy_rate, 0.8);
      // The picture marks the copied tokens.
      const SummaryShow show = show_summary(*m->model, *m->codec, test[0].source, {});
      EXPECT_NE(show.svg.find("[copied]"), std::string::npos);
      EXPECT_NE(show.svg.find("p_gen"), std::string::npos);
      EXPECT_NE(show.text.find("copied"), std::string::npos) << show.text;
    }
  }
  EXPECT_GT(scores[1].oov_copy_rate, 0.8);
  EXPECT_GT(scores[1].copy_share, 0.2);  // the names are about half of every summary
  EXPECT_EQ(scores[0].oov_reproduced, 0);
  EXPECT_EQ(scores[0].copy_share, 0.0);
  EXPECT_GT(scores[1].rouge_l, scores[0].rouge_l + 20);
}

// Coverage switched on for the final phase: a `no_coverage` phase first, then the main phase;
// both appear in metrics.jsonl, and the checkpoint (with its vocabulary) loads on its own.
TEST(PointerGeneratorFamily, CoverageAfterANoCoveragePhase) {
  TempDir dir;
  const std::string run = dir.file("run");
  std::vector<std::string> sets = {"data.generator=names", "data.generate_train=64", "data.generate_valid=16",
                                   "data.rouge_pairs=8", "pointer_generator.min_count=3",
                                   "pointer_generator.embed_dim=8", "pointer_generator.hidden=8",
                                   "pointer_generator.coverage=true", "task.pre_coverage_epochs=1",
                                   "task.pre_coverage_lr=0.01", "train.max_epochs=1", "train.log_every=1",
                                   "train.run_dir=" + run};
  family("pointer_generator").train(YAML::Load("model: pointer_generator\n"), "<test>", sets);
  std::ifstream in(fs::path(run) / "metrics.jsonl");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("\"phase\":\"no_coverage\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"coverage_loss\""), std::string::npos) << all;
  ASSERT_TRUE(fs::exists(fs::path(run) / "best" / "vocab.txt"));
  const std::vector<std::string> articles = {"officials said Kovaletu visited Bramido",
                                             "reports say Zisi won the race in Seritof today"};
  std::vector<std::string> in_run;
  {
    auto r = load_model_as<LoadedPointerGenerator>(run, "pointer_generator");
    for (const std::string& a : articles) in_run.push_back(r->run_line(a));
  }
  fs::rename(fs::path(run) / "best", dir.file("model"));
  auto m = load_model_as<LoadedPointerGenerator>(dir.file("model"), "pointer_generator");
  EXPECT_TRUE(m->model->cfg().coverage);
  for (size_t i = 0; i < articles.size(); ++i) {
    // The moved copy summarises as the run directory did, and its words are vocabulary words or
    // copies of the article's own words (every output id < V + X maps to one or the other).
    const std::string out = m->run_line(articles[i]);
    EXPECT_EQ(out, in_run[i]) << articles[i];
    const std::vector<std::string> source = m->codec->tokens(articles[i]);
    for (const std::string& w : m->codec->tokens(out)) {
      const bool in_vocab = m->codec->id(w) != m->codec->id("<unk>");
      EXPECT_TRUE(in_vocab || std::count(source.begin(), source.end(), w) > 0) << "'" << w << "' in '" << out << "'";
    }
  }
  // The effective config lists the phase keys.
  const std::string dumped = family("pointer_generator").dump_config(YAML::Load("model: pointer_generator\n"), "<test>", sets);
  EXPECT_NE(dumped.find("pre_coverage_epochs"), std::string::npos);
}

// train.init_from: a fresh run takes the checkpoint's vocabulary (not one built from its own,
// different training data) and its weights; another vocabulary size is a shape error.
TEST(PointerGeneratorFamily, InitFromTakesTheCheckpointsVocabularyAndWeights) {
  TempDir dir;
  const std::string a = dir.file("a"), b = dir.file("b"), c = dir.file("c");
  std::vector<std::string> sets = {"data.generator=names", "data.generate_train=64", "data.generate_valid=16",
                                   "data.rouge_pairs=8", "pointer_generator.min_count=3",
                                   "pointer_generator.embed_dim=8", "pointer_generator.hidden=8",
                                   "train.max_epochs=2", "train.log_every=1000"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = sets;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  const YAML::Node base = YAML::Load("model: pointer_generator\n");
  family("pointer_generator").train(base, "<test>", with({"train.run_dir=" + a}));
  // Other training data (another seed, more pairs): on its own it would build another vocabulary.
  const std::vector<std::string> other = {"data.generate_train=96", "train.seed=5", "train.max_steps=1",
                                          "train.optimizer.lr=0"};
  family("pointer_generator").train(base, "<test>", with({"train.run_dir=" + c, "data.generate_train=96",
                                                          "train.seed=5", "train.max_steps=1"}));
  std::vector<std::string> bsets = with(other);
  bsets.push_back("train.run_dir=" + b);
  bsets.push_back("train.init_from=" + (fs::path(a) / "best").string());
  family("pointer_generator").train(base, "<test>", bsets);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_NE(slurp(fs::path(c) / "vocab.txt"), slurp(fs::path(a) / "vocab.txt"));  // the data differ
  EXPECT_EQ(slurp(fs::path(b) / "vocab.txt"), slurp(fs::path(a) / "vocab.txt"));
  EXPECT_EQ(slurp(fs::path(b) / "last" / "model.safetensors").size(),
            slurp(fs::path(a) / "best" / "model.safetensors").size());
  auto ma = load_model_as<LoadedPointerGenerator>((fs::path(a) / "best").string(), "pointer_generator");
  auto mb = load_model_as<LoadedPointerGenerator>((fs::path(b) / "last").string(), "pointer_generator");
  const nn::ParamStore& pa = ma->model->params();
  const nn::ParamStore& pb = mb->model->params();
  ASSERT_EQ(pa.numel(), pb.numel());
  EXPECT_TRUE(std::equal(pa.values(), pa.values() + pa.numel(), pb.values()));  // lr 0: the loaded weights
  // Other shapes (wider embeddings) are refused, naming a parameter.
  std::vector<std::string> wider = with(other);
  wider.push_back("train.run_dir=" + dir.file("d"));
  wider.push_back("train.init_from=" + (fs::path(a) / "best").string());
  wider.push_back("pointer_generator.embed_dim=12");
  EXPECT_NE(error_of([&] { family("pointer_generator").train(base, "<test>", wider); }).find("has shape"),
            std::string::npos);
}

// A SentencePiece model on a source<TAB>target file (validation pairs held out).
TEST(PointerGeneratorFamily, SentencePieceOnATsvFile) {
  TempDir dir;
  core::Rng rng(3);
  std::string tsv;
  for (const auto& p : data::tasks::make_name_pairs(120, {}, rng)) tsv += p.source + "\t" + p.target + "\\nthe end\n";
  const std::string file = dir.write("pairs.tsv", tsv);
  const std::string run = dir.file("run");
  family("pointer_generator")
      .train(YAML::Load("model: pointer_generator\n"), "<test>",
             {"data.train_tsv=" + file, "data.valid_size=20", "data.rouge_pairs=5", "pointer_generator.unit=spm",
              "pointer_generator.vocab_size=80", "pointer_generator.embed_dim=8", "pointer_generator.hidden=8",
              "train.max_steps=3", "train.run_dir=" + run});
  auto m = load_model_as<LoadedPointerGenerator>(run, "pointer_generator");
  EXPECT_TRUE(m->codec->spm());
  EXPECT_EQ(m->codec->size(), 80);
  EXPECT_TRUE(fs::exists(fs::path(run) / "best" / "vocab.spm"));
  // Pieces back to text: "▁" reads as a space, so an article's pieces join to the article, and a
  // summary is its pieces joined, with no "▁" left in it.
  const std::string article = "officials said Kovaletu visited Bramido";
  const std::vector<std::string> pieces = m->codec->tokens(article);
  EXPECT_GT(pieces.size(), 5u) << "80 pieces split the made-up names";
  EXPECT_EQ(m->codec->join(pieces), article);
  const std::vector<Summary> sums = summarize_lines(*m->model, *m->codec, {article}, {});
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(m->run_line(article), sums[0].text);
  EXPECT_EQ(sums[0].text, m->codec->join(sums[0].tokens));
  EXPECT_EQ(sums[0].text.find("\u2581"), std::string::npos) << sums[0].text;
}

// A BBC-shaped corpus of ten tech articles (001-008 train, 009 valid, 010 test by the fixed
// split of data/bbc.h): headline, an empty line, two body paragraphs; the summary joins two
// body sentences with no space, as the corpus does.
void write_bbc(const TempDir& dir) {
  for (int n = 1; n <= 10; ++n) {
    const std::string num = fmt::format("{:03d}", n), name = fmt::format("Zorvak{}", n);
    for (const char* sub : {"articles/tech", "summaries/tech"}) fs::create_directories(dir.file(sub));
    dir.write("articles/tech/" + num + ".txt",
              name + " wins the vote\n\nThe council met on Monday. " + name + " won the vote.\n\nIt was close.\n");
    dir.write("summaries/tech/" + num + ".txt", name + " won the vote.It was close.");
  }
}

// data.bbc: the fixed split, sources = body sentences joined with spaces, targets = the headline
// or the summary's sentences.
TEST(PointerGeneratorFamily, TrainsOnTheBbcSplit) {
  core::kernels::set_blas_threads(1);
  TempDir dir;
  write_bbc(dir);
  const std::vector<data::NewsArticle> train = load_bbc_split(dir.file(""), "train");
  ASSERT_EQ(train.size(), 8u);
  EXPECT_EQ(load_bbc_split(dir.file(""), "valid").size(), 1u);
  const std::vector<data::NewsArticle> test = load_bbc_split(dir.file(""), "test");
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test[0].number, 10);
  const std::vector<data::SummaryPair> heads = bbc_pairs(test, "headline"), sums = bbc_pairs(test, "summary");
  EXPECT_EQ(heads[0].source, "The council met on Monday. Zorvak10 won the vote. It was close.");
  EXPECT_EQ(heads[0].target_sentences, (std::vector<std::string>{"Zorvak10 wins the vote"}));
  EXPECT_EQ(sums[0].source, heads[0].source);
  EXPECT_EQ(sums[0].target_sentences, (std::vector<std::string>{"Zorvak10 won the vote.", "It was close."}));
  EXPECT_NE(error_of([&] { bbc_pairs(test, "title"); }).find("unknown task 'title'"), std::string::npos);
  EXPECT_NE(error_of([&] { load_bbc_split(dir.file(""), "dev"); }).find("unknown split 'dev'"), std::string::npos);

  const std::string run = dir.file("run");
  const YAML::Node node = YAML::Load("model: pointer_generator\n");
  family("pointer_generator")
      .train(node, "<test>",
             {"data.bbc=summary", "data.bbc_dir=" + dir.file(""), "data.rouge_pairs=1", "pointer_generator.embed_dim=8",
              "pointer_generator.hidden=8", "pointer_generator.vocab_size=0", "train.max_steps=2",
              "train.log_every=1000", "train.run_dir=" + run});
  const YAML::Node saved = YAML::LoadFile(run + "/train.yaml");
  EXPECT_EQ(saved["data"]["bbc"].as<std::string>(), "summary");
  // The vocabulary is built from the 8 train articles: no test-only name in it.
  auto m = load_model_as<LoadedPointerGenerator>(run, "pointer_generator");
  EXPECT_NE(m->codec->id("Zorvak1"), data::kUnkId);
  EXPECT_EQ(m->codec->id("Zorvak9"), data::kUnkId);
  EXPECT_EQ(m->codec->id("Zorvak10"), data::kUnkId);
}

TEST(PointerGeneratorFamily, ConfigErrorsNameTheKey) {
  TempDir dir;
  const YAML::Node node = YAML::Load("model: pointer_generator\n");
  auto train = [&](std::vector<std::string> sets) {
    sets.push_back("train.run_dir=" + dir.file("run"));
    return error_of([&] { family("pointer_generator").train(node, "<test>", sets); });
  };
  EXPECT_NE(train({}).find("exactly one of data.train_tsv, data.generator and data.bbc"), std::string::npos);
  EXPECT_NE(train({"data.generator=dates"}).find("unknown generator 'dates'"), std::string::npos);
  EXPECT_NE(train({"data.bbc=title"}).find("unknown bbc task 'title'"), std::string::npos);
  EXPECT_NE(train({"data.bbc=headline", "data.generator=names"}).find("exactly one of"), std::string::npos);
  EXPECT_NE(train({"data.bbc=headline", "data.bbc_dir=" + dir.file("nowhere")}).find("nowhere"), std::string::npos);
  EXPECT_NE(train({"data.generator=names", "task.pre_coverage_epochs=2"}).find("needs pointer_generator.coverage"),
            std::string::npos);
  EXPECT_NE(train({"data.generator=names", "pointer_generator.hidden=7"}).find("even"), std::string::npos);
  EXPECT_NE(train({"data.train_tsv=" + dir.file("missing.tsv")}).find("missing.tsv"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("run") + "/train.yaml"));
}

}  // namespace
}  // namespace engram::models
