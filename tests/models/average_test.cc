// Checkpoint averaging (models/average.h) on the golden models: the mean of two checkpoints equals
// the element-wise mean of their values (computed here from the two stores), the result is a model
// directory of the same family that loads and decodes on its own, and mismatched families or
// configs, a single input and an output that is an input are refused before anything is written.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "engram/core/error.h"
#include "io/expect_error.h"
#include "engram/io/checkpoint.h"
#include "engram/models/average.h"
#include "engram/models/registry.h"
#include "engram/models/seq2seq/translate.h"
#include "io/temp_dir.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;

std::string golden(const std::string& family) { return std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/models/" + family; }

using io::testing::error_of;

// A copy of a golden model directory with every parameter value v replaced by f(v, index).
fs::path perturbed_copy(const std::string& family, const fs::path& dir, float scale, float shift) {
  fs::copy(golden(family), dir, fs::copy_options::recursive);
  std::unique_ptr<LoadedModel> m = load_model(dir);
  nn::ParamStore& p = m->params();
  for (int64_t k = 0; k < p.numel(); ++k) p.values()[k] = p.values()[k] * scale + shift;
  const io::CheckpointInfo info = io::read_checkpoint_info(dir);
  std::vector<fs::path> files;  // the vocabularies and data.yaml, kept beside the new values
  for (const fs::directory_entry& e : fs::directory_iterator(golden(family)))
    if (e.path().filename() != "config.yaml" && e.path().filename() != "model.safetensors") files.push_back(e.path());
  io::save_checkpoint(dir, {.model_name = info.model_name, .config = info.config, .params = &p, .files = files});
  return dir;
}

TEST(AverageCheckpoints, IsTheElementWiseMeanAndLoadsAlone) {
  io::testing::TempDir tmp;
  for (const std::string family : {"seq2seq", "memn2n", "tree"}) {
    const fs::path a = perturbed_copy(family, tmp / (family + "-a"), 1.0f, 0.0f);
    const fs::path b = perturbed_copy(family, tmp / (family + "-b"), 0.5f, 0.25f);
    const fs::path out = tmp / (family + "-mean");
    const AverageResult r = average_checkpoints({a, b}, out);
    EXPECT_EQ(r.family, family);
    EXPECT_EQ(r.checkpoints, 2);
    std::unique_ptr<LoadedModel> ma = load_model(a), mb = load_model(b), mean = load_model(out);
    ASSERT_EQ(mean->family(), family);
    ASSERT_EQ(mean->params().numel(), r.values);
    const float *va = ma->params().values(), *vb = mb->params().values(), *vm = mean->params().values();
    for (int64_t k = 0; k < r.values; ++k)
      ASSERT_EQ(vm[k], static_cast<float>((static_cast<double>(va[k]) + vb[k]) / 2)) << family << " value " << k;
    // (v + 0.5 v + 0.25) / 2 = 0.75 v + 0.125: not either input.
    EXPECT_NE(vm[0], va[0]);
    EXPECT_NE(vm[0], vb[0]);
    // The directory stands alone: its vocabularies were copied in, so it answers a line.
    const std::string line = family == "seq2seq" ? "29 November 2026" : family == "memn2n" ? "Mary went home. Where is Mary?" : "good";
    EXPECT_FALSE(mean->run_line(line).empty()) << family;
  }
}

TEST(AverageCheckpoints, RefusesWhatCannotBeAveraged) {
  io::testing::TempDir tmp;
  const fs::path a = perturbed_copy("seq2seq", tmp / "a", 1.0f, 0.0f);
  EXPECT_NE(error_of([&] { average_checkpoints({a}, tmp / "out"); }).find("it takes at least two"), std::string::npos);
  EXPECT_NE(error_of([&] { average_checkpoints({a, golden("memn2n")}, tmp / "out"); })
                .find("holds a 'memn2n' model"),
            std::string::npos);
  // The same family with other sizes: another config.
  const fs::path other = tmp / "other";
  fs::copy(golden("seq2seq"), other, fs::copy_options::recursive);
  {
    const io::CheckpointInfo info = io::read_checkpoint_info(other);
    YAML::Node cfg = YAML::Clone(info.config);
    cfg["seed_of_nothing"] = 1;  // any difference in the saved config
    std::unique_ptr<LoadedModel> m = load_model(other);
    io::save_checkpoint(other, {.model_name = info.model_name, .config = cfg, .params = &m->params(), .files = {}});
  }
  EXPECT_NE(error_of([&] { average_checkpoints({a, other}, tmp / "out"); }).find("has another config than"),
            std::string::npos);
  EXPECT_NE(error_of([&] { average_checkpoints({a, golden("seq2seq")}, a); }).find("is one of the inputs"),
            std::string::npos);
  // The same checkpoint twice, once by its own path and once through its run directory's best/.
  fs::create_directories(tmp / "run");
  fs::create_directory_symlink(a, tmp / "run" / "best");
  EXPECT_NE(error_of([&] { average_checkpoints({a, golden("seq2seq"), tmp / "run"}, tmp / "out"); })
                .find("are the same checkpoint"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

}  // namespace
}  // namespace engram::models

namespace engram::models {
namespace {

// seq2seq ensembles (a ModelSet of several models, translate --ensemble): a model with itself is the
// model (the mean of two equal distributions); with a perturbed copy the scores are the log of the
// two models' mean probability, which differs from either model's.
TEST(Seq2SeqEnsemble, WithItselfIsTheModelAndWithAnotherIsTheMean) {
  io::testing::TempDir tmp;
  const auto first = load_model_as<Translator>(golden("seq2seq"), "seq2seq");
  const auto same = load_model_as<Translator>(golden("seq2seq"), "seq2seq");
  const fs::path other_dir = perturbed_copy("seq2seq", tmp / "other", 0.9f, 0.0f);
  const auto other = load_model_as<Translator>(other_dir, "seq2seq");
  check_same_codecs(*first, *other);
  const std::vector<std::string> lines = {"29 November 2026", "Nov 29, 2026", "29/11/2026", ""};
  TranslateOptions o;
  o.search.beam = 3;
  const std::vector<Translation> alone = first->translate(lines, o);
  const auto with = [&](const Translator& member) {
    return translate_lines(ModelSet<Seq2Seq>({&first->seq2seq(), &member.seq2seq()}, nullptr), first->src, first->tgt,
                           lines, o);
  };
  const std::vector<Translation> twice = with(*same);
  const std::vector<Translation> mixed = with(*other);
  TranslateOptions oo;
  oo.search.beam = 3;
  const std::vector<Translation> other_alone = other->translate(lines, oo);
  ASSERT_EQ(twice.size(), lines.size());
  bool differs = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(twice[i].texts, alone[i].texts) << lines[i];
    for (size_t h = 0; h < alone[i].nbest.size(); ++h)
      EXPECT_NEAR(twice[i].nbest[h].score, alone[i].nbest[h].score, 1e-4) << lines[i];
    if (!alone[i].nbest.empty())
      differs = differs || (std::abs(mixed[i].nbest[0].score - alone[i].nbest[0].score) > 1e-4 &&
                            std::abs(mixed[i].nbest[0].score - other_alone[i].nbest[0].score) > 1e-4);
  }
  EXPECT_TRUE(differs) << "an ensemble with another model scores as neither model alone";
}

}  // namespace
}  // namespace engram::models
