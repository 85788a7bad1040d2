// The family registry: the table, run configs of the one shape (and the message for the old
// shapes), and load_model for each family — a trained MemN2N answering a question typed as text
// exactly as it answers the same question read from the bAbI file, a checkpoint of the shape
// before the registry still loading, and the NTM's generated-sequence line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/io/checkpoint.h"
#include "engram/models/memn2n/task.h"
#include "engram/models/ntm/model.h"
#include "engram/models/registry.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;
using data::testing::CorpusTest;
using data::testing::TempDir;

TEST(Registry, ListsEveryFamilyAndNamesTheKnownOnesForAnUnknownName) {
  std::vector<std::string> names;
  for (const Family* f : families()) names.push_back(f->name);
  EXPECT_EQ(names, (std::vector<std::string>{"seq2seq", "memn2n", "ntm", "tree", "pointer", "speech", "pointer_generator"}));
  EXPECT_STREQ(family("ntm").name, "ntm");
  try {
    family("transformer");
    ADD_FAILURE() << "an unknown family was found";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: seq2seq, memn2n, ntm, tree, pointer, speech, pointer_generator"), std::string::npos) << e.what();
  }
}

// A run's decode: section (RUN/decode.yaml) under the fields of a request, as the server and
// Python parse one (LoadedModel::request): a request without alpha decodes as one with the
// model's alpha, scores included; one with alpha keeps its own.
TEST(Registry, RequestsDecodeWithTheModelsDefaultsUnderTheirOwnFields) {
  TempDir tmp;
  const fs::path golden = fs::path(ENGRAM_SOURCE_DIR) / "tests" / "golden" / "models" / "seq2seq";
  fs::copy(golden, tmp.file("best"), fs::copy_options::recursive);
  tmp.write("train.yaml", "");
  tmp.write(kDecodeDefaultsFile, "beam: 3\nalpha: 0.6\n");
  const std::unique_ptr<LoadedModel> run = load_model(tmp.file(""));
  const std::unique_ptr<LoadedModel> plain = load_model(golden);
  const auto reply = [](const LoadedModel& m, const nlohmann::json& body) {
    const std::unique_ptr<Request> r = m.request(body, ServeLimits{});
    const Request* one[1] = {r.get()};
    return std::pair{r->options, m.run_requests(one)[0]};
  };
  const nlohmann::json src = {{"src", {"29 November 2026"}}};
  const auto [defaults, by_default] = reply(*run, src);
  EXPECT_EQ(defaults.beam, 3);
  EXPECT_FLOAT_EQ(defaults.alpha, 0.6f);
  nlohmann::json asked = src;
  asked["beam"] = 3;
  asked["alpha"] = 0.6;
  EXPECT_EQ(by_default, reply(*plain, asked).second) << "as if the fields were given";
  asked["alpha"] = 0;
  const auto [own, explicit_alpha] = reply(*run, nlohmann::json{{"src", {"29 November 2026"}}, {"alpha", 0}});
  EXPECT_FLOAT_EQ(own.alpha, 0.0f);
  EXPECT_EQ(explicit_alpha, reply(*plain, asked).second) << "the request's alpha, the model's beam";
  EXPECT_NE(by_default, explicit_alpha) << "alpha changes the score: the checks above can fail";
  EXPECT_EQ(run->run_line("29 November 2026"), "2026-11-29");
}

TEST(Registry, RunConfigNeedsAFamilyNameAndRefusesTheOldShapes) {
  TempDir dir;
  // The NTM's shape before the registry: model: {architecture: ...}, trainer: {...}.
  const std::string old_ntm = dir.write("old.yaml", "model:\n  architecture: ntm\ntrainer: {max_steps: 10}\n");
  try {
    read_run_config(old_ntm);
    ADD_FAILURE() << "an old-shape config was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one config shape"), std::string::npos) << e.what();
  }
  const std::string ok = dir.write("ok.yaml", "model: ntm\ndata: {batch_size: 2}\n");
  const RunConfigFile r = read_run_config(ok);
  EXPECT_STREQ(r.family->name, "ntm");
  // The recipe of the task and architecture the file names, then the file, then --set.
  const std::string dumped = r.family->dump_config(r.node, r.source, {"ntm.architecture=lstm"});
  EXPECT_NE(dumped.find("batch_size: 2"), std::string::npos);
  EXPECT_NE(dumped.find("architecture: lstm"), std::string::npos);
  EXPECT_NE(dumped.find("lr: 3e-05"), std::string::npos) << "the LSTM baseline's recipe lr";
  EXPECT_NE(dumped.find("per_value: 10"), std::string::npos) << "the paper's clipping";
  // Unknown keys are errors naming the key.
  const std::string typo = dir.write("typo.yaml", "model: ntm\ndata: {batch_sise: 2}\n");
  const RunConfigFile t = read_run_config(typo);
  EXPECT_THROW(t.family->dump_config(t.node, t.source, {}), Error);
}

class Memn2nFamily : public CorpusTest {};

// Trains a small MemN2N on bAbI task 1 through the family entry (seconds), checks that it learnt
// (test accuracy against the same model untrained), then loads the run directory with load_model
// and asks the first test questions as text.
TEST_F(Memn2nFamily, TrainsLoadsAndAnswersTypedQuestionsAsFromTheFile) {
  TempDir dir;
  YAML::Node node = YAML::Load("model: memn2n\n");
  const std::vector<std::string> sets = {
      "data.dir=" + path("babi/en"), "data.tasks=1", "task.seeds=[1]", "task.linear_start.max_epochs=2",
      "train.max_epochs=4", "memn2n.dim=20", "train.log_every=1000", "train.run_dir=" + dir.file("run")};
  const std::string summary = family("memn2n").train(node, "<test>", sets);
  EXPECT_NE(summary.find("done"), std::string::npos) << summary;
  EXPECT_TRUE(fs::exists(fs::path(dir.file("run")) / "train.yaml"));

  std::unique_ptr<LoadedModel> m = load_model(dir.file("run"));
  EXPECT_EQ(m->family(), "memn2n");
  EXPECT_EQ(m->dir().filename(), "model");
  LoadedBabiModel& b = model_as<LoadedBabiModel>(*m, "memn2n");
  EXPECT_EQ(b.cfg.data.tasks, "1");

  const BabiData d = load_babi_data(b.cfg, {1}, &b.vocab);
  int checked = 0, same = 0;
  for (int32_t q = 0; q < 20; ++q) {
    const Memn2nSample& s = d.test.samples[q];
    std::string text;
    for (int32_t i = s.begin; i < s.end; ++i) {
      for (int32_t w : d.test.stories[s.story][i]) text += b.vocab.token(w) + " ";
      text += ". ";
    }
    for (int32_t w : s.query) text += b.vocab.token(w) + " ";
    text += "?";
    ++checked;
    same += m->run_line(text) == b.vocab.token(explain_memn2n(*b.model, d.test, q).predicted);
  }
  EXPECT_EQ(same, checked);
  // It learnt: on task 1's 1000 test questions (six places to answer, a sixth by chance) the
  // trained model answers most, the same model untrained few.
  std::vector<int32_t> all(d.test.samples.size());
  for (size_t q = 0; q < all.size(); ++q) all[q] = static_cast<int32_t>(q);
  auto accuracy = [&](const ModelSet<Memn2n>& models) {
    int right = 0;
    const std::vector<Memn2nExplanation> e = explain_memn2n(models, d.test, all);
    for (size_t q = 0; q < all.size(); ++q) right += e[q].predicted == d.test.samples[q].answer;
    return static_cast<double>(right) / static_cast<double>(all.size());
  };
  ASSERT_EQ(all.size(), 1000u);
  core::Rng rng(1);
  const Memn2n untrained(b.model->config(), rng);
  const double trained_acc = accuracy(*b.model), untrained_acc = accuracy(untrained);
  // Seed 1 reaches 0.875 (untrained: 0.000); the margin leaves room for summation order.
  EXPECT_GT(trained_acc, 0.75) << "untrained " << untrained_acc;
  EXPECT_LT(untrained_acc, 0.35) << "trained " << trained_acc;
  EXPECT_THROW(m->run_line("no question here."), Error);
  EXPECT_THROW(model_as<LoadedNtmModel>(*m, "ntm"), Error);

  // The same checkpoint in the shape written before the registry (config.yaml = the whole run
  // config, no data.yaml) still loads and answers alike.
  const fs::path old_dir = dir.file("old");
  fs::copy(b.dir(), old_dir);
  fs::remove(old_dir / "data.yaml");
  YAML::Node old_cfg;
  old_cfg["data"] = path("babi/en");
  old_cfg["tasks"] = "1";
  old_cfg["joint"] = true;
  old_cfg["model"] = io::to_yaml(b.model->config());
  old_cfg["trainer"]["max_epochs"] = 4;
  io::save_checkpoint(old_dir, {.model_name = "memn2n", .config = old_cfg, .params = &b.model->params(),
                                .files = {old_dir / "vocab.txt"}});
  std::unique_ptr<LoadedModel> o = load_model(old_dir);
  const std::string question = "mary moved to the bathroom . john went to the hallway . where is mary ?";
  EXPECT_EQ(o->run_line(question), m->run_line(question));
  EXPECT_EQ(model_as<LoadedBabiModel>(*o, "memn2n").cfg.data.tasks, "1");
}

TEST(NtmFamily, LoadsAndRunsOneGeneratedSequence) {
  TempDir dir;
  NtmModelConfig cfg;
  cfg.task = default_task_config(NtmTaskKind::kCopy);
  cfg.ntm.controller_size = 8, cfg.ntm.memory_slots = 6, cfg.ntm.memory_width = 4;
  core::Rng rng(7);
  NtmTaskModel model(cfg, rng);
  io::save_checkpoint(dir.file("m"), {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  std::unique_ptr<LoadedModel> m = load_model(dir.file("m"));
  EXPECT_EQ(m->family(), "ntm");
  const std::string out = m->run_line("3 1 5");
  // target and output: three 8-bit vectors each.
  EXPECT_EQ(out.rfind("target ", 0), 0u) << out;
  const size_t bar = out.find(" | output ");
  ASSERT_NE(bar, std::string::npos) << out;
  EXPECT_EQ(out.substr(7, bar - 7).size(), 3u * 8 + 2) << out;
  EXPECT_EQ(out, m->run_line("3 1 5")) << "a seeded sequence";
  EXPECT_THROW(m->run_line("0"), Error);
  EXPECT_THROW(m->run_line("3 1 5 extra"), Error);
}

// train.max_steps bounds linear start and the main phase of every seed (5 updates each, not 20
// epochs of linear start), and the run resumed with another learning rate is refused by name.
TEST_F(Memn2nFamily, StepLimitBoundsEveryPhaseOfEverySeedAndAResumeKeepsTheSettings) {
  TempDir dir;
  YAML::Node node = YAML::Load("model: memn2n\n");
  const std::vector<std::string> sets = {
      "data.dir=" + path("babi/en"), "data.tasks=1", "task.seeds=[1,2]", "task.linear_start.max_epochs=20",
      "train.max_steps=5", "memn2n.dim=8", "train.log_every=1", "train.run_dir=" + dir.file("run")};
  const std::string summary = family("memn2n").train(node, "<test>", sets);
  EXPECT_NE(summary.find("done"), std::string::npos) << summary;
  for (const char* seed : {"seed-1", "seed-2"}) {
    std::ifstream in(fs::path(dir.file("run")) / seed / "metrics.jsonl");
    int64_t last = 0, ls_steps = 0;
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.at("event") != "train") continue;
      last = std::max(last, j.at("step").get<int64_t>());
      ls_steps += j.contains("phase");
    }
    EXPECT_EQ(last, 10) << seed;
    EXPECT_EQ(ls_steps, 5) << seed;
  }
  std::vector<std::string> changed = sets;
  changed.push_back("train.optimizer.lr=0.5");
  try {
    family("memn2n").train(node, "<test>", changed);
    ADD_FAILURE() << "a resume with another learning rate was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.optimizer.lr 0.5"), std::string::npos) << e.what();
  }
  std::vector<std::string> longer = sets;
  longer.push_back("train.max_steps=6");  // a limit may change: the main phases train one more step
  EXPECT_NE(family("memn2n").train(node, "<test>", longer).find("done"), std::string::npos);
}

}  // namespace
}  // namespace engram::models
