// Ensembles and bf16 weights of the pointer, memn2n, ntm and tree families through the hooks of
// every LoadedModel (set_ensemble, set_precision; models/decode_setup.h), on the golden
// checkpoints (tests/golden/models/) and copies of them with perturbed weights:
//   - a model ensembled with itself gives its own outputs;
//   - two different models give the mean of their probabilities, computed here from each model
//     alone (pointer: the mixture's log-probability of the decoded path, step by step), which
//     differs from both;
//   - the loaded model's own paths (run_line, run_requests) decode with the ensemble;
//   - members of another family, vocabulary or task are refused naming both directories;
//   - bf16 outputs are close to fp32, not equal (the weights are not all bf16 numbers).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/data/tasks/pointer_tasks.h"
#include "engram/models/memn2n/task.h"
#include "engram/models/ntm/ensemble.h"
#include "engram/models/ntm/model.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/pointer/rules.h"
#include "engram/models/registry.h"
#include "engram/models/tree/task.h"
#include "models/golden_cases.h"
#include "io/expect_error.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using engram::testing::golden_dir;

template <class T>
std::unique_ptr<T> load(const std::string& family) {
  return load_model_as<T>(golden_dir(family), family);
}

// The golden model with every weight w moved to w (1 + 0.5 u) + 0.05 v, u, v ~ U(-1, 1): a
// different model of the same family, vocabulary and task.
template <class T>
std::unique_ptr<T> perturbed(const std::string& family, uint64_t seed) {
  std::unique_ptr<T> m = load<T>(family);
  core::Rng rng(seed);
  nn::ParamStore& p = m->params();
  for (int64_t i = 0; i < p.numel(); ++i)
    p.values()[i] = p.values()[i] * (1.0f + 0.5f * rng.uniform(-1.0f, 1.0f)) + 0.05f * rng.uniform(-1.0f, 1.0f);
  return m;
}

template <class T>
std::vector<std::unique_ptr<LoadedModel>> members_of(std::unique_ptr<T> m) {
  std::vector<std::unique_ptr<LoadedModel>> v;
  v.push_back(std::move(m));
  return v;
}

using io::testing::error_of;  // the message of f()'s engram::Error

// The largest |a_i - b_i|.
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
  return d;
}

std::vector<float> mean_of(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> m(a.size());
  for (size_t i = 0; i < a.size(); ++i) m[i] = 0.5f * (a[i] + b[i]);
  return m;
}

// ---- generic hooks

TEST(Ensemble, EveryFamilyRefusesAMemberOfAnotherFamily) {
  for (const std::string f : {"seq2seq", "pointer_generator", "pointer", "memn2n", "ntm", "tree"}) {
    auto m = load_model(golden_dir(f));
    m->set_ensemble({});  // none: accepted
    const std::string other = f == "ntm" ? "tree" : "ntm";
    const std::string e = error_of([&] { m->set_ensemble(members_of(load<LoadedModel>(other))); });
    EXPECT_NE(e.find(golden_dir(other).string() + " holds a '" + other + "' model and " + golden_dir(f).string() +
                     " a '" + f + "' model"),
              std::string::npos)
        << f << ": " << e;
  }
}

// ---- tree

std::vector<data::Tree> tree_inputs(const LoadedTreeModel& m) {
  std::vector<data::Tree> trees;
  for (const char* t : {"(3 (2 It) (4 (4 rocks)))", "(1 (2 The) (1 (1 movie) (0 (0 stinks))))",
                        "a gorgeous , witty , seductive movie ."})
    trees.push_back(m.read_input(t));
  return trees;
}

std::vector<float> tree_probs(const LoadedTreeModel& m, const std::vector<data::Tree>& trees) {
  std::vector<float> all;
  for (const TreePrediction& p : predict_trees(m.models(), trees)) all.insert(all.end(), p.probs.begin(), p.probs.end());
  return all;
}

TEST(Ensemble, TreeAveragesEveryNodesClassProbabilities) {
  auto a = load<LoadedTreeModel>("tree");
  const std::vector<data::Tree> trees = tree_inputs(*a);
  const std::vector<float> pa = tree_probs(*a, trees);
  a->set_ensemble(members_of(load<LoadedTreeModel>("tree")));
  EXPECT_LT(max_diff(tree_probs(*a, trees), pa), 1e-6) << "a model with itself";

  auto b = perturbed<LoadedTreeModel>("tree", 3);
  const std::vector<float> pb = tree_probs(*b, trees);
  a->set_ensemble(members_of(std::move(b)));
  const std::vector<float> pe = tree_probs(*a, trees);
  EXPECT_LT(max_diff(pe, mean_of(pa, pb)), 1e-6);
  EXPECT_GT(max_diff(pe, pa), 1e-3);
  EXPECT_GT(max_diff(pe, pb), 1e-3);
  // The server's path reads the ensemble too.
  const std::unique_ptr<Request> r = a->parse_request(json{{"text", "(3 (2 It) (4 (4 rocks)))"}}, ServeLimits{});
  const Request* rs[] = {r.get()};
  const json reply = a->run_requests(rs)[0];
  const std::vector<float> root = reply["nodes"][reply["root"].get<int>()]["probs"].get<std::vector<float>>();
  const int c = 5, root_row = trees[0].root();
  for (int k = 0; k < c; ++k) EXPECT_NEAR(root[k], pe[static_cast<size_t>(root_row * c + k)], 1e-6);
  a->set_ensemble({});
  EXPECT_EQ(tree_probs(*a, trees), pa) << "members removed";
}

TEST(Ensemble, TreeRefusesAnotherVocabulary) {
  auto a = load<LoadedTreeModel>("tree");
  auto b = load<LoadedTreeModel>("tree");
  std::vector<std::string> tokens;
  for (int32_t i = 4; i < b->vocab.size(); ++i) tokens.push_back(b->vocab.token(i));
  tokens.back() += "x";
  b->vocab = data::Vocab::from_tokens(tokens);
  const std::string e = error_of([&] { a->set_ensemble(members_of(std::move(b))); });
  EXPECT_NE(e.find("has another vocabulary than " + golden_dir("tree").string()), std::string::npos) << e;
}

TEST(Ensemble, TreeBf16IsCloseToFp32ButNotEqual) {
  auto a = load<LoadedTreeModel>("tree");
  const std::vector<data::Tree> trees = tree_inputs(*a);
  const std::vector<float> fp32 = tree_probs(*a, trees);
  a->set_precision(decode::Precision::kBf16);
  const std::vector<float> bf16 = tree_probs(*a, trees);
  EXPECT_LT(max_diff(bf16, fp32), 0.02);
  EXPECT_GT(max_diff(bf16, fp32), 0.0) << "the bf16 copy was not read";
  a->set_precision(decode::Precision::kFp32);
  EXPECT_EQ(tree_probs(*a, trees), fp32);
}

// ---- ntm

data::tasks::SeqBatch ntm_batch(const LoadedNtmModel& m) {
  core::Rng rng(11);
  return make_task_batch_at(m.model->model_config().task, 6, 1, 4, rng);
}

std::vector<float> ntm_probs(const LoadedNtmModel& m, const data::tasks::SeqBatch& b) {
  core::Graph g(false, size_t{1} << 24);
  const SeqLoss l = sequence_loss_of(g, m.models(), b);
  EXPECT_FALSE(l.non_finite);
  return l.probs;
}

TEST(Ensemble, NtmAveragesEveryOutputBitsProbability) {
  auto a = load<LoadedNtmModel>("ntm");
  const data::tasks::SeqBatch batch = ntm_batch(*a);
  const std::vector<float> pa = ntm_probs(*a, batch);
  a->set_ensemble(members_of(load<LoadedNtmModel>("ntm")));
  EXPECT_LT(max_diff(ntm_probs(*a, batch), pa), 1e-6) << "a model with itself";

  auto b = perturbed<LoadedNtmModel>("ntm", 5);
  const std::vector<float> pb = ntm_probs(*b, batch);
  a->set_ensemble(members_of(std::move(b)));
  const std::vector<float> pe = ntm_probs(*a, batch);
  EXPECT_LT(max_diff(pe, mean_of(pa, pb)), 1e-5);
  EXPECT_GT(max_diff(pe, pa), 1e-3);
  EXPECT_GT(max_diff(pe, pb), 1e-3);
  // The server's path: its sequence (length 6, seed 11, one row) through the ensemble.
  const std::unique_ptr<Request> r = a->parse_request(json{{"length", 6}, {"seed", 11}}, ServeLimits{});
  const Request* rs[] = {r.get()};
  const json reply = a->run_requests(rs)[0];
  core::Rng rng(11);
  const data::tasks::SeqBatch one = make_task_batch_at(a->model->model_config().task, 6, 1, 1, rng);
  const std::vector<float> want = ntm_probs(*a, one);
  std::vector<float> got;
  for (size_t t = 0; t < one.mask.size(); ++t)
    if (one.mask[t] != 0.0f)
      for (const json& x : reply["output"][t]) got.push_back(x.get<float>());
  EXPECT_LT(max_diff(got, want), 1e-6);
}

TEST(Ensemble, NtmRefusesAnotherTask) {
  auto a = load<LoadedNtmModel>("ntm");
  NtmModelConfig cfg = a->model->model_config();
  cfg.task.bits = 5;  // another output size
  core::Rng rng(1);
  auto b = std::make_unique<LoadedNtmModel>();
  b->model_dir = "runs/other-copy";
  b->model = std::make_unique<NtmTaskModel>(cfg, rng);
  const std::string e = error_of([&] { a->set_ensemble(members_of(std::move(b))); });
  EXPECT_NE(e.find("runs/other-copy is trained on copy (5 bits"), std::string::npos) << e;
  EXPECT_NE(e.find("and " + golden_dir("ntm").string() + " on copy (4 bits"), std::string::npos) << e;
}

TEST(Ensemble, NtmBf16IsCloseToFp32ButNotEqual) {
  auto a = load<LoadedNtmModel>("ntm");
  const data::tasks::SeqBatch batch = ntm_batch(*a);
  const std::vector<float> fp32 = ntm_probs(*a, batch);
  a->set_precision(decode::Precision::kBf16);
  const std::vector<float> bf16 = ntm_probs(*a, batch);
  EXPECT_LT(max_diff(bf16, fp32), 0.05);
  EXPECT_GT(max_diff(bf16, fp32), 0.0) << "the bf16 copy was not read";
}

// ---- memn2n

const char* const kStories[] = {
    "Mary moved to the bathroom. John went to the hallway. Where is Mary?",
    "Mary moved to the bathroom. John went to the hallway. Where is John?",
    "Daniel went back to the kitchen. Sandra journeyed to the garden. Daniel travelled to the office. Where is Daniel?",
};

// The stories as a dataset whose answers are `answer`.
Memn2nDataset babi_set(const LoadedBabiModel& m, const std::string& answer) {
  std::vector<data::BabiSample> samples;
  for (const char* s : kStories) {
    samples.push_back(m.parse(s).sample);
    samples.back().answer = answer;
  }
  Memn2nDataset set;
  encode_babi(samples, 0, m.vocab, &set);
  return set;
}

// Each story's answer distribution [3, V] by the model alone (its own forward and softmax).
std::vector<float> answer_probs(const LoadedBabiModel& m, const Memn2nDataset& set) {
  core::Graph g(false);
  const int32_t idx[] = {0, 1, 2};
  const Memn2nBatch batch = make_memn2n_batch(set, idx, m.model->config().memory_size, 0.0f, nullptr,
                                              m.model->min_slots());
  const Var logits = m.model->forward(g, batch).logits;  // [3, V]
  const int v = logits.shape()[1];
  std::vector<float> p(static_cast<size_t>(logits.numel()));
  for (int b = 0; b < 3; ++b) {
    const float* l = logits.data() + b * v;
    const float hi = *std::max_element(l, l + v);
    double z = 0;
    for (int j = 0; j < v; ++j) z += std::exp(double(l[j] - hi));
    for (int j = 0; j < v; ++j) p[static_cast<size_t>(b * v + j)] = static_cast<float>(std::exp(double(l[j] - hi)) / z);
  }
  return p;
}

TEST(Ensemble, Memn2nAveragesTheAnswerProbabilities) {
  auto a = load<LoadedBabiModel>("memn2n");
  const Memn2nDataset set = babi_set(*a, "office");
  const int v = a->vocab.size(), office = a->vocab.id("office");
  const std::vector<float> pa = answer_probs(*a, set);
  auto b = perturbed<LoadedBabiModel>("memn2n", 7);
  const std::vector<float> pb = answer_probs(*b, set), mean = mean_of(pa, pb);
  auto explain = [&] {
    const int32_t idx[] = {0, 1, 2};
    return explain_memn2n(a->models(), set, idx);
  };
  const std::vector<Memn2nExplanation> alone = explain();
  a->set_ensemble(members_of(load<LoadedBabiModel>("memn2n")));
  const std::vector<Memn2nExplanation> self = explain();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(self[i].predicted, alone[i].predicted);
    EXPECT_NEAR(self[i].probability, alone[i].probability, 1e-6) << "a model with itself";
  }
  a->set_ensemble(members_of(std::move(b)));
  const std::vector<Memn2nExplanation> both = explain();
  double loss = 0;  // the mean answer probability's cross-entropy of "office", summed
  for (int i = 0; i < 3; ++i) {
    const float* row = mean.data() + i * v;
    const int best = static_cast<int>(std::max_element(row, row + v) - row);
    EXPECT_EQ(both[i].predicted, best) << i;
    EXPECT_NEAR(both[i].probability, row[best], 1e-5) << i;
    EXPECT_GT(std::fabs(both[i].probability - pa[static_cast<size_t>(i * v + best)]), 1e-3) << i;
    EXPECT_GT(std::fabs(both[i].probability - pb[static_cast<size_t>(i * v + best)]), 1e-3) << i;
    EXPECT_EQ(both[i].attention, alone[i].attention) << "the attention shown is the first model's";
    loss -= std::log(double(row[office]));
  }
  const Memn2nScore all = evaluate_memn2n(a->models(), set).at(0);
  EXPECT_NEAR(all.loss_sum, loss, 1e-4);
  // run_line's answer (LoadedBabiModel::answer) and the server's are the ensemble's.
  for (int i = 0; i < 3; ++i) {
    const LoadedBabiModel::Answer got = a->answer(kStories[i]);
    EXPECT_EQ(got.answer, a->vocab.token(both[i].predicted));
    EXPECT_NEAR(got.explanation.probability, both[i].probability, 1e-6) << i;
  }
  const std::unique_ptr<Request> r = a->parse_request(
      json{{"story", {"Mary moved to the bathroom.", "John went to the hallway."}}, {"question", "Where is Mary?"}},
      ServeLimits{});
  const Request* rs[] = {r.get()};
  EXPECT_NEAR(a->run_requests(rs)[0]["probability"].get<float>(), both[0].probability, 1e-6);
}

TEST(Ensemble, Memn2nRefusesAnotherVocabulary) {
  auto a = load<LoadedBabiModel>("memn2n");
  auto b = load<LoadedBabiModel>("memn2n");
  std::vector<std::string> tokens;
  for (int32_t i = 4; i < b->vocab.size(); ++i) tokens.push_back(b->vocab.token(i));
  std::swap(tokens[0], tokens[1]);  // the same words, other ids
  b->vocab = data::Vocab::from_tokens(tokens);
  b->model_dir = "runs/other-babi";
  const std::string e = error_of([&] { a->set_ensemble(members_of(std::move(b))); });
  EXPECT_NE(e.find("runs/other-babi has another vocabulary than " + golden_dir("memn2n").string()), std::string::npos)
      << e;
}

TEST(Ensemble, Memn2nBf16IsCloseToFp32ButNotEqual) {
  auto a = load<LoadedBabiModel>("memn2n");
  const Memn2nDataset set = babi_set(*a, "office");
  const Memn2nScore fp32 = evaluate_memn2n(a->models(), set).at(0);
  a->set_precision(decode::Precision::kBf16);
  const Memn2nScore bf16 = evaluate_memn2n(a->models(), set).at(0);
  EXPECT_NEAR(bf16.loss_sum, fp32.loss_sum, 0.05 * std::fabs(fp32.loss_sum) + 1e-3);
  EXPECT_NE(bf16.loss_sum, fp32.loss_sum) << "the bf16 copy was not read";
}

// ---- pointer

std::vector<data::tasks::PointerInstance> sort_instances() {
  return pointer_test_set(PointerTask::kSort, 9, 32, 99, 1);
}

// Each step's log-probability of `classes` (positions + 1, then the end) and attention rows by
// `model` alone, fed the path itself.
struct PathScores {
  std::vector<double> log_probs;  // [R]
  std::vector<float> attention;   // [R, n]
};
PathScores score_path(const PointerNet& model, const data::tasks::PointerInstance& in,
                      const std::vector<int32_t>& classes) {
  core::Graph g(false);
  const decode::SourceBatch src = pointer_source(std::span(&in, 1));
  std::unique_ptr<decode::DecodeState> st = model.encode(g, src);
  PathScores s;
  int32_t prev = model.go_id();
  for (int32_t c : classes) {
    const decode::StepOutput out = model.step(g, *st, std::span(&prev, 1));
    s.log_probs.push_back(out.log_probs.data[c]);
    s.attention.insert(s.attention.end(), out.alignment.data, out.alignment.data + out.alignment.numel());
    prev = c;
  }
  return s;
}

std::vector<int32_t> classes_of(const PointerPrediction& p) {
  std::vector<int32_t> c;
  for (int j : p.output) c.push_back(j + 1);
  c.push_back(kPointerEnd);
  return c;
}

TEST(Ensemble, PointerDecodesTheMembersMeanProbability) {
  auto a = load<LoadedPointerModel>("pointer");
  const auto instances = sort_instances();
  PointerDecodeOptions o;
  o.attention = true;
  const std::vector<PointerPrediction> alone = predict_pointer(a->models(), instances, o);
  a->set_ensemble(members_of(load<LoadedPointerModel>("pointer")));
  const std::vector<PointerPrediction> self = predict_pointer(a->models(), instances, o);
  for (size_t i = 0; i < instances.size(); ++i) {
    EXPECT_EQ(self[i].output, alone[i].output);
    EXPECT_NEAR(self[i].log_prob, alone[i].log_prob, 1e-5) << "a model with itself";
    EXPECT_LT(max_diff(self[i].attention, alone[i].attention), 1e-6);
  }
  auto b = perturbed<LoadedPointerModel>("pointer", 9);
  const PointerNet& pb = *b->model;  // owned by `a` from here on
  a->set_ensemble(members_of(std::move(b)));
  const std::vector<PointerPrediction> both = predict_pointer(a->models(), instances, o);
  int differs_a = 0, differs_b = 0;
  for (size_t i = 0; i < instances.size(); ++i) {
    ASSERT_TRUE(both[i].finished);
    const std::vector<int32_t> path = classes_of(both[i]);
    const PathScores sa = score_path(*a->model, instances[i], path), sb = score_path(pb, instances[i], path);
    double mixture = 0, la = 0, lb = 0;
    for (size_t t = 0; t < path.size(); ++t) {
      mixture += std::log(0.5 * (std::exp(sa.log_probs[t]) + std::exp(sb.log_probs[t])));
      la += sa.log_probs[t], lb += sb.log_probs[t];
    }
    EXPECT_NEAR(both[i].log_prob, mixture, 1e-4) << i;
    EXPECT_LT(max_diff(both[i].attention, mean_of(sa.attention, sb.attention)), 1e-5) << "attention is the mean";
    differs_a += std::fabs(both[i].log_prob - la) > 1e-3;
    differs_b += std::fabs(both[i].log_prob - lb) > 1e-3;
  }
  EXPECT_GT(differs_a, 0);
  EXPECT_GT(differs_b, 0);
  // The server's path decodes with the ensemble (its log-probability), and so does run_line: an
  // instance whose output the ensemble changes, as a line.
  json points = json::array();
  for (float x : instances[0].points) points.push_back(x);
  const std::unique_ptr<Request> r = a->parse_request(json{{"points", points}}, ServeLimits{});
  const Request* rs[] = {r.get()};
  EXPECT_NEAR(a->run_requests(rs)[0]["log_prob"].get<double>(), both[0].log_prob, 1e-6);
  size_t changed = 0;
  while (changed < instances.size() && both[changed].output == alone[changed].output) ++changed;
  ASSERT_LT(changed, instances.size()) << "no instance whose output the ensemble changes";
  std::string line, want;
  for (float x : instances[changed].points) line += fmt::format("{} ", x);
  for (int j : both[changed].output) want += (want.empty() ? "" : " ") + std::to_string(j + 1);
  EXPECT_EQ(a->run_line(line), want);
}

TEST(Ensemble, PointerRefusesAnotherTask) {
  auto a = load<LoadedPointerModel>("pointer");
  PointerConfig cfg = a->model->cfg();
  cfg.task = PointerTask::kTsp;
  cfg.input_dim = 2;
  core::Rng rng(1);
  auto b = std::make_unique<LoadedPointerModel>();
  b->model_dir = "runs/tsp";
  b->model = std::make_unique<PointerNet>(cfg, rng);
  const std::string e = error_of([&] { a->set_ensemble(members_of(std::move(b))); });
  EXPECT_NE(e.find("runs/tsp is a tsp model of input width 2 and " + golden_dir("pointer").string() +
                   " a sort model of width 1"),
            std::string::npos)
      << e;
}

TEST(Ensemble, PointerBf16IsCloseToFp32ButNotEqual) {
  auto a = load<LoadedPointerModel>("pointer");
  const auto instances = sort_instances();
  const std::vector<PointerPrediction> fp32 = predict_pointer(a->models(), instances);
  a->set_precision(decode::Precision::kBf16);
  const std::vector<PointerPrediction> bf16 = predict_pointer(a->models(), instances);
  bool differs = false;
  for (size_t i = 0; i < instances.size(); ++i) {
    if (bf16[i].output != fp32[i].output) continue;  // a near tie may turn; the scores of one path compare
    EXPECT_NEAR(bf16[i].log_prob, fp32[i].log_prob, 0.05) << i;
    differs = differs || bf16[i].log_prob != fp32[i].log_prob;
  }
  EXPECT_TRUE(differs) << "the bf16 copy was not read";
}

}  // namespace
}  // namespace engram::models
