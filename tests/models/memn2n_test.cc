// MemN2N model: batches (padding, temporal indices, random noise, memory-window cuts), the whole
// model's gradients against finite differences (adjacent and layer-wise tying, linear start), and
// a fixed-seed learnability test: on a generated single-supporting-fact world the model reaches
// 100% test accuracy in seconds and attends to the supporting fact.
// Dims: B batch, N memory slots, W words per sentence, V vocab, D width, K hops.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <numeric>
#include <set>

#include "engram/core/grad_check.h"
#include "engram/core/ops.h"
#include "engram/data/tasks/toy_babi.h"
#include "engram/models/memn2n/model.h"
#include "engram/models/memn2n/task.h"
#include "data/test_util.h"
#include "engram/optim/clip.h"
#include "engram/optim/optimizers.h"

namespace engram::models {
namespace {

struct Toy {
  data::Vocab vocab;
  Memn2nDataset train, test;
};

Toy make_toy(int n_train, int n_test, uint64_t seed) {
  core::Rng rng(seed);
  const data::tasks::ToyBabiOptions opt;
  const auto train = data::tasks::make_toy_babi(n_train, opt, rng);
  const auto test = data::tasks::make_toy_babi(n_test, opt, rng);
  Toy t;
  t.vocab = build_babi_vocab({&train, &test});
  encode_babi(train, 1, t.vocab, &t.train);
  encode_babi(test, 1, t.vocab, &t.test);
  return t;
}

std::vector<int32_t> range(int32_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Memn2nBatch, PadsAndCountsTimeBackFromTheMostRecentSentence) {
  const Toy toy = make_toy(6, 1, 3);
  const auto idx = range(6);
  const Memn2nBatch b = make_memn2n_batch(toy.train, idx, 50);
  ASSERT_EQ(b.batch, 6);
  for (int i = 0; i < b.batch; ++i) {
    const Memn2nSample& s = toy.train.samples[i];
    const int n = s.end - s.begin;
    EXPECT_EQ(b.offset[i], 0);
    for (int k = 0; k < b.slots; ++k) {
      EXPECT_EQ(b.mask[i * b.slots + k], k < n ? 1.0f : 0.0f);
      EXPECT_EQ(b.time[i * b.slots + k], k < n ? n - 1 - k : -1);
      if (k >= n) {
        for (int w = 0; w < b.words; ++w) EXPECT_EQ(b.memory[(i * b.slots + k) * b.words + w], 0);
      }
    }
    const auto& first = toy.train.stories[s.story][s.begin];
    for (size_t w = 0; w < first.size(); ++w) EXPECT_EQ(b.memory[i * b.slots * b.words + w], first[w]);
    EXPECT_EQ(b.answer[i], s.answer);
  }
}

TEST(Memn2nBatch, RandomNoiseGivesDistinctDescendingTimesWithinMemory) {
  const Toy toy = make_toy(64, 1, 4);
  const auto idx = range(64);
  core::Rng rng(9);
  const Memn2nBatch b = make_memn2n_batch(toy.train, idx, 5, 0.5f, &rng);
  bool shifted = false;
  for (int i = 0; i < b.batch; ++i) {
    const int n = static_cast<int>(std::count(b.mask.begin() + i * b.slots, b.mask.begin() + (i + 1) * b.slots, 1.0f));
    for (int k = 0; k < n; ++k) {
      const int t = b.time[i * b.slots + k];
      EXPECT_GE(t, 0);
      EXPECT_LE(t, 4);
      if (k > 0) {
        EXPECT_LE(t, b.time[i * b.slots + k - 1]);
      }
      shifted = shifted || t != n - 1 - k;
    }
  }
  EXPECT_TRUE(shifted) << "random noise never moved a time index";
}

TEST(Memn2nBatch, LongWindowsKeepTheMostRecentSentences) {
  const Toy toy = make_toy(40, 1, 5);
  int32_t pick = -1;
  for (int32_t i = 0; i < 40 && pick < 0; ++i)
    if (toy.train.samples[i].end - toy.train.samples[i].begin == 6) pick = i;
  ASSERT_GE(pick, 0);
  const int32_t one[1] = {pick};
  const Memn2nBatch b = make_memn2n_batch(toy.train, one, 4);
  EXPECT_EQ(b.slots, 4);
  EXPECT_EQ(b.offset[0], 2);
  const Memn2nSample& s = toy.train.samples[pick];
  EXPECT_EQ(b.memory[0], toy.train.stories[s.story][s.begin + 2][0]);
  EXPECT_EQ(b.time[0], 3);
}

TEST(Memn2nData, SharedStoriesAreEncodedOnce) {
  core::Rng rng(1);
  auto samples = data::tasks::make_toy_babi(2, {}, rng);
  samples.push_back(samples[0]);  // a second question on the first story
  const data::Vocab vocab = build_babi_vocab({&samples});
  Memn2nDataset d;
  encode_babi(samples, 7, vocab, &d);
  EXPECT_EQ(d.stories.size(), 2u);
  EXPECT_EQ(d.samples[2].story, d.samples[0].story);
  EXPECT_EQ(d.samples[2].task, 7);
  EXPECT_EQ(vocab.token(d.samples[0].answer), samples[0].answer);
}

// Whole-model gradient check over every parameter on a toy batch.
double model_grad_error(WeightTying tying, nn::SentenceEncoding enc, bool linear_start) {
  const Toy toy = make_toy(4, 1, 6);
  Memn2nConfig cfg{.vocab = toy.vocab.size(), .dim = 4, .hops = 2, .memory_size = 8, .encoding = enc,
                   .temporal = true, .tying = tying, .init_stddev = 0.3f, .sentence_length = 7};
  core::Rng rng(2);
  Memn2n model(cfg, rng);
  const auto idx = range(4);
  const Memn2nBatch batch = make_memn2n_batch(toy.train, idx, cfg.memory_size);
  nn::ParamStore& p = model.params();
  std::vector<core::GradTarget> targets;
  for (nn::ParamId id = 0; id < p.count(); ++id)
    targets.push_back({p.name(id), p.value(id).data, p.grad(id).data, p.shape(id).numel()});
  auto f = [&](core::Graph& g) {
    const Memn2nOutput out = model.forward(g, batch, linear_start);
    std::vector<Var> parts = {out.logits};
    for (const Var& a : out.attention) parts.push_back(a);
    return core::concat(parts, 1);
  };
  core::GradCheckOptions opt;
  opt.max_elements = 24;
  const core::GradCheckResult r = core::grad_check(f, targets, opt);
  std::printf("memn2n model grad check: worst %.3e over %lld (%s)\n", r.max_error, static_cast<long long>(r.checked),
              r.worst.c_str());
  return r.max_error;
}

TEST(Memn2nModel, GradientsMatchFiniteDifferences) {
  using E = nn::SentenceEncoding;
  EXPECT_LE(model_grad_error(WeightTying::kAdjacent, E::kPosition, false), 1e-2);
  EXPECT_LE(model_grad_error(WeightTying::kLayerWise, E::kPosition, false), 1e-2);
  EXPECT_LE(model_grad_error(WeightTying::kAdjacent, E::kBow, true), 1e-2);
  EXPECT_LE(model_grad_error(WeightTying::kAdjacent, E::kPositionGlobal, false), 1e-2);
}

TEST(Memn2nModel, GlobalPositionEncodingNeedsASentenceLength) {
  core::Rng rng(1);
  EXPECT_THROW(Memn2n(Memn2nConfig{.vocab = 10, .dim = 4, .encoding = nn::SentenceEncoding::kPositionGlobal}, rng),
               Error);
}

TEST(Memn2nModel, AdjacentTyingSharesTables) {
  Memn2nConfig cfg{.vocab = 10, .dim = 4, .hops = 3};
  core::Rng rng(1);
  Memn2n adjacent(cfg, rng);
  // A^1, T_A^1, then C^k, T_C^k per hop: 2 + 2K tables, nothing else.
  EXPECT_EQ(adjacent.params().count(), 2 + 2 * cfg.hops);
  cfg.tying = WeightTying::kLayerWise;
  Memn2n layerwise(cfg, rng);
  EXPECT_EQ(layerwise.params().count(), 4 + 3);  // A, T_A, C, T_C + B, W, H
}

TEST(Memn2nModel, LinearStartRemovesTheMemorySoftmax) {
  const Toy toy = make_toy(8, 1, 7);
  Memn2nConfig cfg{.vocab = toy.vocab.size(), .dim = 6, .hops = 2, .memory_size = 10};
  core::Rng rng(3);
  Memn2n model(cfg, rng);
  const auto idx = range(8);
  const Memn2nBatch batch = make_memn2n_batch(toy.train, idx, cfg.memory_size);
  core::Graph g(false);
  const Memn2nOutput soft = model.forward(g, batch, false);
  const Memn2nOutput lin = model.forward(g, batch, true);
  const int n = batch.slots;
  // Hop 1 reads with the same query u in both runs: the linear-start "attention" is the raw score
  // u . m_i, and the softmax over the sample's real slots of those scores is the normal attention.
  bool raw = false;
  for (int b = 0; b < batch.batch; ++b) {
    const float* p = soft.attention[0].data() + b * n;
    const float* s = lin.attention[0].data() + b * n;
    double row = 0, z = 0, top = -1e30;
    for (int k = 0; k < n; ++k)
      if (batch.mask[b * n + k] > 0) top = std::max(top, static_cast<double>(s[k]));
    for (int k = 0; k < n; ++k)
      if (batch.mask[b * n + k] > 0) z += std::exp(s[k] - top);
    for (int k = 0; k < n; ++k) {
      row += p[k];
      const double want = batch.mask[b * n + k] > 0 ? std::exp(s[k] - top) / z : 0.0;
      EXPECT_NEAR(p[k], want, 1e-6) << "sample " << b << " slot " << k;
      raw = raw || std::fabs(s[k] - p[k]) > 1e-3;
    }
    EXPECT_NEAR(row, 1.0, 1e-5);
  }
  EXPECT_TRUE(raw) << "linear-start scores equal the softmax weights";
}

TEST(Memn2nModel, LearnsTheToySingleSupportingFactWorld) {
  const Toy toy = make_toy(1000, 200, 11);
  Memn2nConfig cfg{.vocab = toy.vocab.size(), .dim = 20, .hops = 2, .memory_size = 10};
  core::Rng rng(5);
  Memn2n model(cfg, rng);
  optim::Sgd sgd(model.params(), {.lr = 0.01f});
  core::Graph g;
  std::vector<int32_t> order = range(static_cast<int32_t>(toy.train.samples.size()));
  core::Rng data_rng(1);
  double acc = 0, support = 0;
  for (int epoch = 0; epoch < 40 && acc < 1.0; ++epoch) {
    data_rng.shuffle(order.begin(), order.end());
    for (size_t s = 0; s < order.size(); s += 32) {
      const size_t count = std::min<size_t>(32, order.size() - s);
      const Memn2nBatch b =
          make_memn2n_batch(toy.train, std::span<const int32_t>(order.data() + s, count), cfg.memory_size, 0.1f, &data_rng);
      g.reset();
      model.params().zero_grad();
      const Memn2nOutput out = model.forward(g, b, epoch < 3);  // a short linear start
      g.backward(model.loss(g, out, b));
      optim::clip_grad_norm(model.params(), 40.0f);
      sgd.step();
    }
    const auto scores = evaluate_memn2n(model, toy.test);
    acc = 1.0 - scores.at(0).error();
    support = scores.at(0).support_rate();
  }
  EXPECT_EQ(acc, 1.0);
  EXPECT_GT(support, 0.9) << "the model answers without looking at the supporting fact";
}

// A checkpoint of the older config layout (the whole run config: the model under `model:`, the
// data keys at the top, a `trainer:`) loads as the one-shape checkpoint it was converted from,
// and answers the same.
TEST(Memn2nLoading, TheOlderConfigLayoutLoadsAsTheCurrentOne) {
  const std::filesystem::path golden = std::filesystem::path(ENGRAM_SOURCE_DIR) / "tests/golden/models/memn2n";
  data::testing::TempDir tmp;
  const std::filesystem::path old = tmp.file("old");
  std::filesystem::create_directories(old);
  for (const char* f : {"model.safetensors", "vocab.txt"}) std::filesystem::copy_file(golden / f, old / f);
  YAML::Node file = YAML::LoadFile((golden / "config.yaml").string());
  const YAML::Node data = YAML::LoadFile((golden / "data.yaml").string());
  YAML::Node run;
  run["model"] = file["config"];
  run["trainer"]["max_epochs"] = 1;
  run["tasks"] = data["tasks"];
  run["random_noise"] = 0.25;
  file["config"] = run;
  std::ofstream((old / "config.yaml").string()) << file;
  const LoadedBabiModel a = load_babi_model(golden), b = load_babi_model(old);
  EXPECT_EQ(b.cfg.memn2n.memory_size, a.cfg.memn2n.memory_size);
  EXPECT_EQ(b.cfg.memn2n.hops, a.cfg.memn2n.hops);
  EXPECT_EQ(b.cfg.data.random_noise, 0.25);  // read from the top of the old layout
  const std::string line = "Mary moved to the bathroom. John went to the hallway. Where is Mary?";
  EXPECT_EQ(b.answer(line).answer, a.answer(line).answer);
  EXPECT_EQ(b.answer(line).explanation.probability, a.answer(line).explanation.probability);
}

}  // namespace
}  // namespace engram::models
