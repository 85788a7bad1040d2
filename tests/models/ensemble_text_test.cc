// Ensembles and bf16 weights of the text families (seq2seq, pointer_generator) through the hooks
// every LoadedModel has (set_ensemble, set_precision), on the golden checkpoints
// (tests/golden/models/): a model ensembled with itself gives its own outputs on its own paths
// (run_line and run_requests); with a perturbed copy it gives what the verbs' --ensemble gives
// (translate_lines / summarize_lines with the members in the model set); members of another
// family are refused naming both directories; bf16 outputs are close to fp32, not equal.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/registry.h"
#include "engram/models/seq2seq/translate.h"
#include "io/temp_dir.h"
#include "models/golden_cases.h"

namespace engram::models {
namespace ensemble_text_test {

namespace fs = std::filesystem;

using engram::testing::golden_dir;
// The family's golden cases (INPUT, EXPECTED).
std::vector<std::pair<std::string, std::string>> cases(const std::string& family) {
  return engram::testing::golden_cases(family);
}

template <class T>
std::unique_ptr<T> perturbed(const std::string& family, uint64_t seed) {
  std::unique_ptr<T> m = load_model_as<T>(golden_dir(family), family);
  core::Rng rng(seed);
  nn::ParamStore& p = m->params();
  for (int64_t i = 0; i < p.numel(); ++i) p.values()[i] = p.values()[i] * (1.0f + 0.3f * rng.uniform(-1.0f, 1.0f));
  return m;
}

std::vector<std::unique_ptr<LoadedModel>> one(std::unique_ptr<LoadedModel> m) {
  std::vector<std::unique_ptr<LoadedModel>> v;
  v.push_back(std::move(m));
  return v;
}

TEST(TextEnsemble, Seq2seqMembersDecodeOnItsOwnPathsAsTheVerbsEnsemble) {
  auto host = load_model_as<Translator>(golden_dir("seq2seq"), "seq2seq");
  host->set_ensemble(one(load_model(golden_dir("seq2seq"))));
  for (const auto& [src, want] : cases("seq2seq")) EXPECT_EQ(host->run_line(src), want) << src;
  // A perturbed member: run_line equals translate_lines with the member named in the options.
  auto alone = load_model_as<Translator>(golden_dir("seq2seq"), "seq2seq");
  auto other = perturbed<Translator>("seq2seq", 3);
  const Seq2Seq* other_model = &other->seq2seq();
  host->set_ensemble(one(std::move(other)));
  std::vector<std::string> srcs;
  for (const auto& c : cases("seq2seq")) srcs.push_back(c.first);
  const std::vector<Translation> want = translate_lines(ModelSet<Seq2Seq>({&alone->seq2seq(), other_model}, nullptr),
                                                        alone->src, alone->tgt, srcs, TranslateOptions{});
  double diff = 0;
  for (size_t i = 0; i < srcs.size(); ++i) {
    const Translation got = host->translate({srcs[i]}, TranslateOptions{}).at(0);
    EXPECT_EQ(got.text(), want[i].text());
    EXPECT_NEAR(got.nbest[0].score, want[i].nbest[0].score, 1e-4);
    diff += std::fabs(got.nbest[0].score - alone->translate({srcs[i]}, TranslateOptions{}).at(0).nbest[0].score);
  }
  EXPECT_GT(diff, 1e-3) << "the member changes the scores";
  // Another family is refused, naming both directories.
  try {
    host->set_ensemble(one(load_model(golden_dir("tree"))));
    FAIL() << "a tree member was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tree"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("seq2seq"), std::string::npos) << e.what();
  }
}

TEST(TextEnsemble, PointerGeneratorMembersAndBf16) {
  const std::string family = "pointer_generator";
  auto host = load_model_as<LoadedPointerGenerator>(golden_dir(family), family);
  host->set_ensemble(one(load_model(golden_dir(family))));
  for (const auto& [article, want] : cases(family)) EXPECT_EQ(host->run_line(article), want) << article;
  EXPECT_THROW(host->set_ensemble(one(load_model(golden_dir("seq2seq")))), Error);
  // A member whose vocabulary has as many tokens in another order is refused, naming both
  // directories: an ensemble averages the probabilities of the same ids.
  io::testing::TempDir tmp;
  fs::copy(golden_dir(family), tmp / "swapped");
  std::vector<std::string> words;
  {
    std::ifstream in(tmp / "swapped" / "vocab.txt");
    for (std::string w; std::getline(in, w);) words.push_back(w);
  }
  ASSERT_GT(words.size(), 6u);
  std::swap(words[4], words[5]);  // two words after the 4 specials
  {
    std::ofstream out(tmp / "swapped" / "vocab.txt");
    for (const std::string& w : words) out << w << "\n";
  }
  try {
    host->set_ensemble(one(load_model(tmp / "swapped")));
    FAIL() << "a member with another vocabulary was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another vocabulary"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("swapped"), std::string::npos) << e.what();
  }
  // bf16 and int8: the same summaries on the golden cases, p_gen close but not equal.
  auto fp32 = load_model_as<LoadedPointerGenerator>(golden_dir(family), family);
  for (const decode::Precision p : {decode::Precision::kBf16, decode::Precision::kInt8}) {
    auto low = load_model_as<LoadedPointerGenerator>(golden_dir(family), family);
    low->set_precision(p);
    ASSERT_NE(p == decode::Precision::kBf16 ? static_cast<const void*>(low->setup.bf16()) : low->setup.int8(), nullptr);
    double diff = 0;
    for (const auto& [article, want] : cases(family)) {
      const Summary a = summarize_lines(fp32->models(), *fp32->codec, {article}, {}).at(0);
      const Summary b = summarize_lines(low->models(), *low->codec, {article}, {}).at(0);
      EXPECT_EQ(b.text, a.text) << decode::precision_name(p) << ": " << article;
      ASSERT_EQ(a.p_gen.size(), b.p_gen.size());
      for (size_t t = 0; t < a.p_gen.size(); ++t) {
        EXPECT_NEAR(a.p_gen[t], b.p_gen[t], 0.05) << decode::precision_name(p) << ": " << article << " " << t;
        diff += std::fabs(a.p_gen[t] - b.p_gen[t]);
      }
    }
    EXPECT_GT(diff, 0.0) << decode::precision_name(p) << " weights change the numbers";
  }
}

}  // namespace ensemble_text_test
}  // namespace engram::models
