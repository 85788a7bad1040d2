// Trainer: learning, validation/best/last checkpoints, early stopping, metrics JSONL, and a
// resume after a simulated kill that ends bit-identical to an uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "data/test_util.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/ops.h"
#include "engram/core/rng.h"
#include "engram/io/checkpoint.h"
#include "engram/train/trainer.h"

namespace engram::train {
namespace {

namespace fs = std::filesystem;
using core::Graph;
using core::Rng;
using core::Tensor;

// Linear regression y = x . w* + noise, minibatches of 8 drawn in a seeded per-epoch order.
class RegressionTask : public TrainTask {
 public:
  explicit RegressionTask(float valid_noise = 0.0f) {
    w_ = store_.add("w", {1, kDim});
    b_ = store_.add("b", {1});
    Rng rng(3);
    for (int i = 0; i < kN; ++i) {
      float y = 0.5f;
      for (int j = 0; j < kDim; ++j) {
        x_[i * kDim + j] = rng.uniform(-1, 1);
        y += x_[i * kDim + j] * (j + 1) * 0.3f;
      }
      y_[i] = y + valid_noise * static_cast<float>(rng.normal());
    }
  }
  nn::ParamStore& params() override { return store_; }
  std::string model_name() const override { return "regression"; }
  YAML::Node model_config() const override {
    YAML::Node n;
    n["dim"] = kDim;
    return n;
  }
  int64_t batches_per_epoch() const override { return kN / kBatch; }
  void begin_epoch(int epoch, uint64_t seed) override {
    for (int i = 0; i < kN; ++i) order_[i] = i;
    Rng rng(seed * 1000 + epoch);
    rng.shuffle(order_, order_ + kN);
  }
  BatchResult train_batch(int64_t index) override {
    Graph g;
    std::vector<float> xb(kBatch * kDim), yb(kBatch);
    for (int k = 0; k < kBatch; ++k) {
      const int i = order_[index * kBatch + k];
      std::memcpy(&xb[k * kDim], &x_[i * kDim], sizeof(float) * kDim);
      yb[k] = y_[i];
    }
    core::Var pred = core::affine(g.input(Tensor{xb.data(), {kBatch, kDim}}), store_.var(g, w_), store_.var(g, b_));
    core::Var loss = core::mse(pred, yb.data());
    g.backward(loss);
    ++batches_seen_;
    return {loss.data()[0] * kBatch, kBatch};
  }
  Metrics validate() override {
    Graph g(false);
    core::Var pred = core::affine(g.input(Tensor{x_, {kN, kDim}}), store_.var(g, w_), store_.var(g, b_));
    ++validations_;
    return {{"mse", core::mse(pred, y_).data()[0]}};
  }
  std::string primary_metric() const override { return "mse"; }
  bool higher_is_better() const override { return false; }
  bool reports_perplexity() const override { return perplexity_; }

  static constexpr int kN = 64, kDim = 4, kBatch = 8;
  nn::ParamStore store_;
  nn::ParamId w_, b_;
  float x_[kN * kDim], y_[kN];
  int order_[kN];
  int batches_seen_ = 0, validations_ = 0;
  bool perplexity_ = true;
};

std::string testing_read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path temp_run(const std::string& name) {
  fs::path p = fs::temp_directory_path() / fmt::format("engram-trainer-{}-{}", name, ::getpid());
  fs::remove_all(p);
  return p;
}

TrainerConfig base_config(const fs::path& dir) {
  TrainerConfig cfg;
  cfg.run_dir = dir.string();
  cfg.max_epochs = 10;
  cfg.log_every = 4;
  cfg.seed = 9;
  cfg.optimizer.name = "sgd";
  cfg.optimizer.lr = 0.1f;
  cfg.optimizer.momentum = 0.5f;
  return cfg;
}

TEST(Trainer, LearnsValidatesAndWritesCheckpointsAndMetrics) {
  const fs::path dir = temp_run("learn");
  RegressionTask task;
  const double before = task.validate().at("mse");
  TrainSummary s = Trainer(task, base_config(dir)).run();
  EXPECT_EQ(s.steps, 10 * 8);
  EXPECT_FALSE(s.resumed);
  EXPECT_LT(s.last_valid.at("mse"), before * 0.01) << "before " << before;
  EXPECT_TRUE(fs::exists(dir / "last" / "model.safetensors"));
  EXPECT_TRUE(fs::exists(dir / "last" / "optimizer.safetensors"));
  EXPECT_TRUE(fs::exists(dir / "best" / "model.safetensors"));
  io::CheckpointInfo info = io::read_checkpoint_info(dir / "last");
  EXPECT_EQ(info.model_name, "regression");
  EXPECT_EQ(info.trainer.at("step").get<int64_t>(), 80);
  std::ifstream in(dir / "metrics.jsonl");
  int train_lines = 0, valid_lines = 0;
  double last_elapsed = -1;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    train_lines += j.at("event") == "train";
    valid_lines += j.at("event") == "valid";
    if (j.at("event") == "valid") {  // the training clock of each validation, never going back
      EXPECT_GE(j.at("elapsed_s").get<double>(), last_elapsed);
      last_elapsed = j.at("elapsed_s").get<double>();
    }
  }
  EXPECT_GE(info.trainer.at("elapsed_s").get<double>(), last_elapsed);
  EXPECT_EQ(train_lines, 80 / 4);
  EXPECT_EQ(valid_lines, 10);
  fs::remove_all(dir);
}

// exp(loss) goes into the train lines only for tasks whose loss is a cross-entropy in nats.
TEST(Trainer, PerplexityOnlyWhereTheTaskReportsIt) {
  for (bool ppl : {true, false}) {
    const fs::path dir = temp_run(ppl ? "ppl" : "noppl");
    RegressionTask task;
    task.perplexity_ = ppl;
    TrainerConfig cfg = base_config(dir);
    cfg.max_epochs = 1;
    Trainer(task, cfg).run();
    std::ifstream in(dir / "metrics.jsonl");
    int train_lines = 0;
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      if (j.at("event") != "train") continue;
      ++train_lines;
      EXPECT_EQ(j.contains("ppl"), ppl) << line;
      EXPECT_TRUE(j.contains("loss") && j.contains("units_per_s") && j.contains("lr")) << line;
    }
    EXPECT_EQ(train_lines, 2);
    fs::remove_all(dir);
  }
}

TEST(Trainer, ResumeAfterKillMatchesUninterruptedRunBitForBit) {
  const fs::path full_dir = temp_run("full"), killed_dir = temp_run("killed");
  RegressionTask full;
  TrainerConfig cfg = base_config(full_dir);
  cfg.checkpoint_every = 5;
  Trainer(full, cfg).run();

  cfg.run_dir = killed_dir.string();
  {
    RegressionTask first;
    Trainer t(first, cfg);
    t.on_step = [](int64_t step) {
      if (step == 23) throw std::runtime_error("killed");  // last checkpoint: step 20
    };
    EXPECT_THROW(t.run(), std::runtime_error);
  }
  RegressionTask resumed;
  TrainSummary s = Trainer(resumed, cfg).run();
  EXPECT_TRUE(s.resumed);
  EXPECT_EQ(s.steps, 80);
  EXPECT_EQ(resumed.batches_seen_, 80 - 20);
  ASSERT_EQ(resumed.store_.numel(), full.store_.numel());
  EXPECT_EQ(std::memcmp(resumed.store_.values(), full.store_.values(), sizeof(float) * full.store_.numel()), 0);
  fs::remove_all(full_dir);
  fs::remove_all(killed_dir);
}

TEST(Trainer, EarlyStoppingAndStepLimit) {
  const fs::path dir = temp_run("early");
  RegressionTask task(/*valid_noise=*/3.0f);  // noisy targets: validation stops improving quickly
  TrainerConfig cfg = base_config(dir);
  cfg.max_epochs = 200;
  cfg.patience = 2;
  cfg.optimizer.lr = 0.3f;
  TrainSummary s = Trainer(task, cfg).run();
  EXPECT_TRUE(s.early_stopped);
  EXPECT_LT(s.steps, 200 * 8);
  fs::remove_all(dir);

  RegressionTask task2;
  TrainerConfig cfg2 = base_config(dir);
  cfg2.max_steps = 13;
  cfg2.valid_every = 5;
  TrainSummary s2 = Trainer(task2, cfg2).run();
  EXPECT_EQ(s2.steps, 13);
  EXPECT_EQ(task2.validations_, 3);  // steps 5, 10 and the final one at 13
  EXPECT_EQ(io::read_checkpoint_info(dir / "last").trainer.at("step").get<int64_t>(), 13);
  fs::remove_all(dir);
}

// train.best_ties: a metric that saturates (here: every validation scores the same) keeps the
// first checkpoint that reached it in best/ by default, the newest with best_ties: latest; ties
// never reset patience.
TEST(Trainer, BestTiesEarliestOrLatest) {
  struct Saturated : RegressionTask {
    Metrics validate() override {
      ++validations_;
      return {{"mse", 0.5}};
    }
  };
  const fs::path dir = temp_run("ties");
  for (const std::string ties : {"earliest", "latest"}) {
    Saturated task;
    TrainerConfig cfg = base_config(dir);
    cfg.max_epochs = 3;  // 8 updates an epoch, a validation at the end of each
    cfg.best_ties = ties;
    Trainer(task, cfg).run();
    EXPECT_EQ(io::read_checkpoint_info(dir / "best").trainer.at("step").get<int64_t>(), ties == "latest" ? 24 : 8)
        << ties;
    fs::remove_all(dir);
  }
  Saturated task;
  TrainerConfig cfg = base_config(dir);
  cfg.max_epochs = 50;
  cfg.patience = 2;
  cfg.best_ties = "latest";
  EXPECT_TRUE(Trainer(task, cfg).run().early_stopped);
  EXPECT_EQ(task.validations_, 3);
  fs::remove_all(dir);
  cfg.best_ties = "last";
  EXPECT_EQ(data::testing::error_of([&] { Trainer(task, cfg).run(); }), "train: best_ties 'last' is not earliest or latest");
}

// train.keep_checkpoints: the model of each of the last N validations stays as RUN/step-S, the
// older ones are removed; a resumed run goes on pruning and first removes what killed saves of
// step-S left (step-S.tmp-PID); other directories are left alone.
TEST(Trainer, KeepCheckpointsKeepsTheLastNValidationsModels) {
  const fs::path dir = temp_run("keep");
  RegressionTask task;
  TrainerConfig cfg = base_config(dir);
  cfg.max_epochs = 5;  // 8 updates an epoch, a validation at the end of each
  cfg.keep_checkpoints = 3;
  fs::create_directories(dir / "step-x");
  Trainer(task, cfg).run();
  auto kept = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("step-", 0) == 0)
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(kept(), (std::vector<std::string>{"step-24", "step-32", "step-40", "step-x"}));
  const io::CheckpointInfo info = io::read_checkpoint_info(dir / "step-40");
  EXPECT_EQ(info.model_name, "regression");
  EXPECT_EQ(info.trainer.at("step").get<int64_t>(), 40);
  EXPECT_FALSE(fs::exists(dir / "step-40" / "optimizer.safetensors"));
  RegressionTask other;  // step-40 holds the weights the run ended with
  io::load_checkpoint(dir / "step-40", other.params(), nullptr);
  const std::vector<float> a(task.params().values(), task.params().values() + task.params().numel());
  const std::vector<float> b(other.params().values(), other.params().values() + other.params().numel());
  EXPECT_EQ(a, b);

  for (const char* left : {"step-40.tmp-12345", "step-16.tmp-7", "step-x.tmp-7"}) fs::create_directories(dir / left);
  cfg.max_epochs = 7;  // resumed: two more validations, the oldest two removed
  RegressionTask resumed;
  EXPECT_TRUE(Trainer(resumed, cfg).run().resumed);
  EXPECT_EQ(kept(), (std::vector<std::string>{"step-40", "step-48", "step-56", "step-x", "step-x.tmp-7"}));
  fs::remove_all(dir);
  cfg.keep_checkpoints = -1;
  EXPECT_EQ(data::testing::error_of([&] { Trainer(task, cfg).run(); }),
            "train.keep_checkpoints -1 must be in [0, 1000]");
}

TEST(Trainer, RefusesARunDirOfAnotherModel) {
  const fs::path dir = temp_run("other");
  RegressionTask task;
  TrainerConfig cfg = base_config(dir);
  cfg.max_epochs = 1;
  Trainer(task, cfg).run();
  struct Other : RegressionTask {
    std::string model_name() const override { return "other"; }
  } other;
  EXPECT_THROW(Trainer(other, cfg).run(), engram::Error);
  fs::remove_all(dir);
}


std::vector<float> values_of(const nn::ParamStore& store) {
  return std::vector<float>(store.values(), store.values() + store.numel());
}

// train.init_from: a fresh run starts from another run's weights; the model name, every name and
// shape, and the task's checkpoint files must match; a resumed run ignores it.
TEST(Trainer, InitFromStartsAFreshRunFromACheckpointsWeights) {
  using data::testing::error_of;
  const fs::path a = temp_run("init-a"), b = temp_run("init-b");
  RegressionTask trained;
  {
    TrainerConfig ca = base_config(a);
    ca.max_epochs = 3;
    Trainer(trained, ca).run();
  }
  const std::vector<float> want = values_of(trained.store_);

  // lr 0: the one update leaves the weights as loaded, so they must be the checkpoint's.
  RegressionTask fresh;
  EXPECT_NE(values_of(fresh.store_), want);
  TrainerConfig cb = base_config(b);
  cb.init_from = (a / "last").string();
  cb.max_steps = 1;
  cb.optimizer.lr = 0.0f;
  cb.optimizer.momentum = 0.0f;
  Trainer(fresh, cb).run();
  EXPECT_EQ(values_of(fresh.store_), want);

  // A resumed run does not read init_from again (here it no longer exists).
  RegressionTask resumed;
  cb.max_steps = 2;
  cb.init_from = (a / "gone").string();
  EXPECT_NO_THROW(check_trainer_config(cb));
  EXPECT_NO_THROW(Trainer(resumed, cb).run());
  fs::remove_all(b);

  // A fresh run with a path that is not a checkpoint is refused before anything is written.
  TrainerConfig bad = base_config(b);
  bad.init_from = (a / "gone").string();
  EXPECT_NE(error_of([&] { check_trainer_config(bad); }).find("not a checkpoint directory"), std::string::npos);
  EXPECT_FALSE(fs::exists(b));

  // Another model, another shape, a checkpoint file that differs: each refused, naming it.
  struct Other : RegressionTask {
    std::string model_name() const override { return "other"; }
  } other;
  TrainerConfig c = base_config(b);
  c.init_from = (a / "last").string();
  EXPECT_NE(error_of([&] { Trainer(other, c).run(); }).find("holds a 'regression' model, not 'other'"),
            std::string::npos);
  fs::remove_all(b);
  struct Reshaped : RegressionTask {
    Reshaped() {
      wider_.add("w", {1, kDim + 1});
      wider_.add("b", {1});
    }
    nn::ParamStore& params() override { return wider_; }
    nn::ParamStore wider_;
  } reshaped;
  EXPECT_NE(error_of([&] { Trainer(reshaped, c).run(); }).find("tensor 'w' has shape [1, 4]"), std::string::npos);
  fs::remove_all(b);
  struct WithVocab : RegressionTask {
    explicit WithVocab(fs::path file) : file_(std::move(file)) {}
    std::vector<fs::path> checkpoint_files() const override { return {file_}; }
    fs::path file_;
  };
  fs::create_directories(b);
  std::ofstream(b / "vocab.txt") << "a\nb\n";
  WithVocab with_vocab(b / "vocab.txt");
  EXPECT_NE(error_of([&] { Trainer(with_vocab, c).run(); }).find("lacks vocab.txt"), std::string::npos);
  std::ofstream(a / "last" / "vocab.txt") << "a\nc\n";
  EXPECT_NE(error_of([&] { Trainer(with_vocab, c).run(); }).find("would meet other ids"), std::string::npos);
  std::ofstream(a / "last" / "vocab.txt") << "a\nb\n";
  EXPECT_EQ(error_of([&] { Trainer(with_vocab, c).run(); }), "<no error>");
  fs::remove_all(a);
  fs::remove_all(b);
}

// A task whose gradient the test sets directly: one parameter pair, gradient `grad` each batch,
// or NaN in parameter "b" on the batches listed in `nan_batches`.
class FixedGradTask : public TrainTask {
 public:
  FixedGradTask() {
    a_ = store_.add("a", {3});
    b_ = store_.add("b", {2});
  }
  nn::ParamStore& params() override { return store_; }
  std::string model_name() const override { return "fixed"; }
  YAML::Node model_config() const override { return YAML::Node(YAML::NodeType::Map); }
  int64_t batches_per_epoch() const override { return 4; }
  void begin_epoch(int, uint64_t) override {}
  BatchResult train_batch(int64_t index) override {
    float* ga = store_.grad(a_).data;
    float* gb = store_.grad(b_).data;
    const float g[5] = {30.0f, -4.0f, 0.5f, 3.0f, 4.0f};
    for (int i = 0; i < 3; ++i) ga[i] = g[i];
    for (int i = 0; i < 2; ++i) gb[i] = g[3 + i];
    ++batches_;
    if (nan_all || (batches_ - 1) % 4 == 1) gb[1] = std::nanf("");
    return {1.0, 1};
  }
  Metrics validate() override { return {{"loss", 1.0}}; }
  std::string primary_metric() const override { return "loss"; }
  bool higher_is_better() const override { return false; }
  nn::ParamStore store_;
  nn::ParamId a_, b_;
  int batches_ = 0;
  bool nan_all = false;
};

// train.clip: per value, then per parameter, then the global norm, applied by the Trainer before
// the update (SGD lr 1: the update is minus the clipped gradient).
TEST(Trainer, ClipsPerValueThenPerParameterThenGlobally) {
  const fs::path dir = temp_run("clip");
  FixedGradTask task;
  task.nan_all = false;
  TrainerConfig cfg = base_config(dir);
  cfg.max_epochs = 0;
  cfg.max_steps = 1;
  cfg.optimizer.momentum = 0.0f;
  cfg.optimizer.lr = 1.0f;
  cfg.clip.per_value = 10.0f;   // a: (10, -4, 0.5); b: (3, 4)
  cfg.clip.per_param = 5.0f;    // a: norm sqrt(116.25) -> 5; b: norm 5 stays
  cfg.clip.global_norm = 1.0f;  // total norm sqrt(50) -> 1
  // The batch-1 NaN of FixedGradTask comes after the one step.
  Trainer(task, cfg).run();
  const float* a = task.store_.value(task.a_).data;
  const float* b = task.store_.value(task.b_).data;
  const double na = 5.0 / std::sqrt(116.25), scale = 1.0 / (std::sqrt(50.0) + 1e-6);
  EXPECT_NEAR(a[0], -10 * na * scale, 1e-5);
  EXPECT_NEAR(a[1], 4 * na * scale, 1e-5);
  EXPECT_NEAR(a[2], -0.5 * na * scale, 1e-5);
  EXPECT_NEAR(b[0], -3 * scale, 1e-5);
  EXPECT_NEAR(b[1], -4 * scale, 1e-5);
  cfg.clip.per_param = -1.0f;
  EXPECT_THROW(Trainer(task, cfg), Error);
  fs::remove_all(dir);
}

// The NaN guard: a non-finite batch is logged with the first bad parameter and skipped; the run
// stops with an error after train.max_bad_steps of them in a row.
TEST(Trainer, NanGuardSkipsNamesTheParameterAndStopsAfterTooManyInARow) {
  const fs::path dir = temp_run("nan");
  FixedGradTask task;
  TrainerConfig cfg = base_config(dir);
  cfg.max_epochs = 2;
  cfg.optimizer.momentum = 0.0f;
  cfg.optimizer.lr = 0.0f;  // values stay 0 unless a NaN gets through
  Trainer(task, cfg).run();  // batch 1 of each epoch is NaN: 2 skipped, never 3 in a row
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::isfinite(task.store_.value(task.b_).data[i]));
  std::ifstream in(dir / "metrics.jsonl");
  int nans = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.at("event") == "nan") {
      ++nans;
      EXPECT_EQ(j.at("param"), "b");
    }
  }
  EXPECT_EQ(nans, 2);
  fs::remove_all(dir);

  FixedGradTask bad;
  bad.nan_all = true;
  cfg.max_bad_steps = 3;
  try {
    Trainer(bad, cfg).run();
    ADD_FAILURE() << "a run of non-finite batches did not stop";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 batches in a row"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("parameter b"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bad.batches_, 3);
  fs::remove_all(dir);
}


// The run directory after a kill: the metrics file holds each step once after the resume, what an
// interrupted checkpoint save left (last.tmp-PID, last.old-PID) is removed, and a finished run
// run again trains nothing and leaves best/ and last/ as they were.
TEST(Trainer, ResumeLogsEachStepOnceCleansLeftoversAndAFinishedRunStaysFinished) {
  const fs::path dir = temp_run("rundir");
  TrainerConfig cfg = base_config(dir);
  cfg.checkpoint_every = 5;
  cfg.log_every = 1;
  {
    RegressionTask first;
    Trainer t(first, cfg);
    t.on_step = [](int64_t step) {
      if (step == 23) throw std::runtime_error("killed");  // last checkpoint: step 20
    };
    EXPECT_THROW(t.run(), std::runtime_error);
  }
  fs::create_directories(dir / "last.tmp-99999");   // a save killed half way
  fs::create_directories(dir / "best.old-99998");  // a swap killed after its second rename
  RegressionTask resumed;
  Trainer(resumed, cfg).run();
  EXPECT_FALSE(fs::exists(dir / "last.tmp-99999"));
  EXPECT_FALSE(fs::exists(dir / "best.old-99998"));
  std::map<int64_t, int> train_lines;
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.at("event") == "train") ++train_lines[j.at("step").get<int64_t>()];
  }
  ASSERT_EQ(train_lines.size(), 80u);
  for (const auto& [step, n] : train_lines) EXPECT_EQ(n, 1) << "step " << step;

  const std::string best_before = testing_read(dir / "best" / "trainer.json");
  RegressionTask again;
  const TrainSummary s = Trainer(again, cfg).run();
  EXPECT_EQ(again.batches_seen_, 0);
  EXPECT_EQ(s.steps, 80);
  EXPECT_EQ(testing_read(dir / "best" / "trainer.json"), best_before);
  fs::remove_all(dir);
}

TEST(Trainer, ConfigIsCheckedCompletelyBeforeTraining) {
  TrainerConfig cfg = base_config(temp_run("check"));
  cfg.optimizer.name = "adamw";
  EXPECT_THROW(check_trainer_config(cfg), Error);
  cfg = base_config(temp_run("check"));
  cfg.optimizer.momentum = 1.5f;
  EXPECT_THROW(check_trainer_config(cfg), Error);
  cfg = base_config(temp_run("check"));
  cfg.schedule.name = "cosine";
  EXPECT_THROW(check_trainer_config(cfg), Error);
  cfg = base_config(temp_run("check"));
  cfg.max_minutes = std::nan("");
  EXPECT_THROW(check_trainer_config(cfg), Error);
  cfg = base_config(temp_run("check"));
  cfg.precision = "fp16";
  EXPECT_THROW(check_trainer_config(cfg), Error);
  EXPECT_NO_THROW(check_trainer_config(base_config(temp_run("check"))));
}

// train.precision bf16: the products of forward and backward run on bf16-rounded operands (the
// losses part from fp32's after the first update), the weights, gradients and Adam stay fp32,
// and the model learns as in fp32. A product of 256 x 16 x 64 (above the tiny ones Eigen takes).
class WideRegressionTask : public TrainTask {
 public:
  WideRegressionTask() {
    w_ = store_.add("wide", {kOut, kIn});
    Rng rng(11);
    for (auto& v : x_) v = rng.uniform(-1, 1);
    for (int i = 0; i < kRows; ++i)
      for (int o = 0; o < kOut; ++o) {
        float y = 0;
        for (int j = 0; j < kIn; ++j) y += x_[i * kIn + j] * std::sin(0.1f * (o * kIn + j));
        y_[i * kOut + o] = y;
      }
  }
  nn::ParamStore& params() override { return store_; }
  std::string model_name() const override { return "wide-regression"; }
  YAML::Node model_config() const override { return {}; }
  int64_t batches_per_epoch() const override { return 1; }
  void begin_epoch(int, uint64_t) override {}
  BatchResult train_batch(int64_t) override {
    Graph g;
    core::Var pred = core::affine(g.input(Tensor{x_.data(), {kRows, kIn}}), store_.var(g, w_), core::Var{});
    core::Var loss = core::mse(pred, y_.data());
    g.backward(loss);
    return {loss.data()[0], 1};
  }
  Metrics validate() override { return {}; }
  std::string primary_metric() const override { return "mse"; }
  bool higher_is_better() const override { return false; }

 private:
  static constexpr int kRows = 256, kIn = 64, kOut = 16;
  nn::ParamStore store_;
  nn::ParamId w_;
  std::vector<float> x_ = std::vector<float>(kRows * kIn), y_ = std::vector<float>(kRows * kOut);
};

TEST(Trainer, Bf16ProductsLearnLikeFp32) {
  if (!core::kernels::bf16_matmul_available()) {
    std::printf("SKIPPED: oneDNN has no bf16 matmul for this CPU (train.precision bf16 is refused there)\n");
    TrainerConfig cfg = base_config(temp_run("bf16"));
    cfg.precision = "bf16";
    EXPECT_THROW(check_trainer_config(cfg), Error);
    return;
  }
  std::map<std::string, std::vector<double>> losses;
  for (const char* precision : {"fp32", "bf16"}) {
    WideRegressionTask task;
    TrainerConfig cfg = base_config(temp_run("bf16"));
    cfg.optimizer.name = "adam";
    cfg.optimizer.lr = 0.02f;
    cfg.precision = precision;
    Updater updater(task, cfg);
    for (int step = 0; step < 60; ++step) losses[precision].push_back(updater.update(0).batch.loss_sum);
    EXPECT_EQ(core::kernels::bf16_products(), nullptr) << "the scope ends with the batch";
  }
  const auto &f = losses["fp32"], &b = losses["bf16"];
  EXPECT_LT(f.back(), 0.02 * f.front());
  EXPECT_LT(b.back(), 0.02 * b.front()) << "bf16 products learn";
  EXPECT_NE(f[1], b[1]) << "the products were not rounded to bf16";
  EXPECT_NEAR(b[1], f[1], 0.01 * f[1]);
}


// Phases: a task with a phase before the main one (as MemN2N's linear start) runs both in one
// run directory; a kill in the phase, at its end or in the main phase resumes to parameters
// bit-identical to an uninterrupted run, and best/ is the main phase's.
struct PhasedTask : RegressionTask {
  std::vector<TrainPhase> phases() const override { return {{.name = "warmup", .max_epochs = 3, .lr = 0.02f}}; }
  void begin_phase(int p) override { phases_begun.push_back(p); }
  std::vector<int> phases_begun;
};

TEST(Trainer, PhasesRunInOneResumableRun) {
  const fs::path full_dir = temp_run("phases-full");
  TrainerConfig cfg = base_config(full_dir);
  cfg.max_epochs = 4;
  cfg.checkpoint_every = 5;
  PhasedTask full;
  const TrainSummary fs_ = Trainer(full, cfg).run();
  EXPECT_EQ(fs_.steps, (3 + 4) * 8);
  EXPECT_EQ(fs_.phase, 1);
  EXPECT_EQ(full.phases_begun, (std::vector<int>{0, 1}));
  const nlohmann::json best = io::read_checkpoint_info(full_dir / "best").trainer;
  EXPECT_EQ(best.at("phase").get<int>(), 1);
  for (int64_t kill_at : {13, 24, 26, 47}) {  // in the phase, at its end (step 24), just after, in the main phase
    const fs::path dir = temp_run("phases-killed");
    cfg.run_dir = dir.string();
    {
      PhasedTask first;
      Trainer t(first, cfg);
      t.on_step = [kill_at](int64_t step) {
        if (step == kill_at) throw std::runtime_error("killed");
      };
      EXPECT_THROW(t.run(), std::runtime_error);
    }
    PhasedTask resumed;
    const TrainSummary s = Trainer(resumed, cfg).run();
    EXPECT_TRUE(s.resumed);
    EXPECT_EQ(s.steps, 56) << "killed at " << kill_at;
    EXPECT_EQ(std::memcmp(resumed.store_.values(), full.store_.values(), sizeof(float) * full.store_.numel()), 0)
        << "killed at " << kill_at;
    fs::remove_all(dir);
  }
  fs::remove_all(full_dir);
}


// The config's limits bound every phase: train.max_steps ends each phase after that many updates
// of its own, train.max_epochs caps a phase's epochs, and train.max_minutes is one clock from
// Trainer::started (a recipe's several runs share it): a run started past it trains nothing.
TEST(Trainer, LimitsBoundEveryPhaseAndTheTimeLimitIsShared) {
  const fs::path dir = temp_run("phase-limits");
  TrainerConfig cfg = base_config(dir);
  cfg.max_steps = 5;
  {
    PhasedTask task;
    const TrainSummary s = Trainer(task, cfg).run();
    EXPECT_EQ(s.phase, 1);
    EXPECT_EQ(s.steps, 5 + 5);  // 5 in the warmup phase (3 epochs of 8 otherwise), 5 in the main one
    EXPECT_EQ(task.batches_seen_, 10);
  }
  fs::remove_all(dir);
  cfg.max_steps = 0;
  cfg.max_epochs = 2;
  {
    PhasedTask task;
    const TrainSummary s = Trainer(task, cfg).run();
    EXPECT_EQ(s.steps, (2 + 2) * 8);  // the warmup's 3 epochs capped at 2
  }
  fs::remove_all(dir);
  cfg.max_minutes = 0.5;
  {
    PhasedTask task;
    Trainer t(task, cfg);
    t.started = std::chrono::steady_clock::now() - std::chrono::minutes(1);
    const TrainSummary s = t.run();
    EXPECT_TRUE(s.out_of_time);
    EXPECT_EQ(s.steps, 0);
    EXPECT_EQ(task.batches_seen_, 0);
  }
  fs::remove_all(dir);
}

// A resume from a checkpoint inside a log window (checkpoint_every 5, log_every 4: the checkpoint
// at step 15 holds steps 13-15 of the window logged at 16) logs the losses of an uninterrupted run.
TEST(Trainer, ResumeInsideALogWindowLogsTheUninterruptedLosses) {
  const fs::path full_dir = temp_run("window-full"), killed_dir = temp_run("window-killed");
  TrainerConfig cfg = base_config(full_dir);
  cfg.checkpoint_every = 5;
  cfg.log_every = 4;
  {
    RegressionTask full;
    Trainer(full, cfg).run();
  }
  cfg.run_dir = killed_dir.string();
  {
    RegressionTask first;
    Trainer t(first, cfg);
    t.on_step = [](int64_t step) {
      if (step == 18) throw std::runtime_error("killed");  // last checkpoint: step 15
    };
    EXPECT_THROW(t.run(), std::runtime_error);
  }
  {
    RegressionTask resumed;
    EXPECT_TRUE(Trainer(resumed, cfg).run().resumed);
  }
  auto losses = [](const fs::path& dir) {
    std::map<int64_t, double> m;
    std::ifstream in(dir / "metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.at("event") == "train") m[j.at("step").get<int64_t>()] = j.at("loss").get<double>();
    }
    return m;
  };
  const auto want = losses(full_dir), got = losses(killed_dir);
  ASSERT_EQ(want.size(), 20u);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [step, loss] : want) EXPECT_EQ(got.at(step), loss) << "step " << step;
  fs::remove_all(full_dir);
  fs::remove_all(killed_dir);
}

// Data parallelism's split of a batch (train/trainer.h, Shard): the shards of ranks 0..N-1 are
// disjoint, in order, cover the batch, differ in size by at most one, and may be empty when the
// batch has fewer examples than ranks.
TEST(Trainer, ShardsPartitionEveryBatch) {
  for (int size = 1; size <= 5; ++size)
    for (int64_t n = 0; n <= 13; ++n) {
      int64_t next = 0, smallest = n, largest = 0;
      for (int r = 0; r < size; ++r) {
        const auto [lo, hi] = shard_range(n, {r, size});
        EXPECT_EQ(lo, next) << "n " << n << " rank " << r << " of " << size;
        EXPECT_LE(lo, hi);
        smallest = std::min(smallest, hi - lo), largest = std::max(largest, hi - lo);
        next = hi;
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
    }
  EXPECT_THROW(shard_range(4, {2, 2}), Error);
  EXPECT_THROW(shard_range(4, {0, 0}), Error);
  // Rank 0 draws what one process draws; other ranks draw other numbers.
  EXPECT_EQ(shard_seed(1234, {0, 4}), 1234u);
  EXPECT_NE(shard_seed(1234, {1, 4}), 1234u);
  EXPECT_NE(shard_seed(1234, {1, 4}), shard_seed(1234, {2, 4}));
}

// Without an MPI launcher the process is rank 0 of 1 and every collective leaves its data alone.
// y = w2 . tanh(W1 x + b1) + b2 on batches wide enough to split over a team of two: the hidden
// layer's [128, 512] values are above the element-wise ops' 32k-value grain and its products take
// the sgemm column split (few rows, much work). Under ThreadSanitizer (make tsan) this is the
// trainer's steps on the thread team.
class WideTask : public TrainTask {
 public:
  WideTask() {
    w1_ = store_.add("w1", {kHidden, kIn});
    b1_ = store_.add("b1", {kHidden});
    w2_ = store_.add("w2", {1, kHidden});
    b2_ = store_.add("b2", {1});
    Rng rng(5);
    for (int64_t i = 0; i < store_.numel(); ++i) store_.values()[i] = rng.uniform(-0.1f, 0.1f);
    for (float& v : x_) v = rng.uniform(-1, 1);
    for (int i = 0; i < kN; ++i) y_[i] = std::sin(x_[i * kIn] * 3) + x_[i * kIn + 1];  // a target to learn
  }
  nn::ParamStore& params() override { return store_; }
  std::string model_name() const override { return "wide"; }
  YAML::Node model_config() const override { return YAML::Node(); }
  int64_t batches_per_epoch() const override { return kN / kBatch; }
  void begin_epoch(int, uint64_t) override {}
  BatchResult train_batch(int64_t index) override {
    Graph g;
    core::Var loss = loss_of(g, x_.data() + index * kBatch * kIn, y_.data() + index * kBatch, kBatch);
    g.backward(loss);
    return {loss.data()[0] * kBatch, kBatch};
  }
  Metrics validate() override {
    Graph g(false);
    return {{"mse", loss_of(g, x_.data(), y_.data(), kN).data()[0]}};
  }
  std::string primary_metric() const override { return "mse"; }
  bool higher_is_better() const override { return false; }

  static constexpr int kN = 256, kIn = 128, kHidden = 512, kBatch = 128;

 private:
  core::Var loss_of(Graph& g, float* x, const float* y, int rows) {
    core::Var h = core::tanh(core::affine(g.input(Tensor{x, {rows, kIn}}), store_.var(g, w1_), store_.var(g, b1_)));
    return core::mse(core::affine(h, store_.var(g, w2_), store_.var(g, b2_)), y);  // h: [rows, kHidden]
  }
  nn::ParamStore store_;
  nn::ParamId w1_, b1_, w2_, b2_;
  std::vector<float> x_ = std::vector<float>(kN * kIn), y_ = std::vector<float>(kN);  // [kN, kIn], [kN]
};

// The trainer's result does not depend on the thread count (docs/engine.md: the split never
// changes a result): two threads train the same bits as one.
TEST(Trainer, TwoThreadsTrainTheSameBitsAsOne) {
  std::vector<std::vector<float>> trained;
  for (int threads : {1, 2}) {
    core::kernels::set_blas_threads(threads);
    const fs::path dir = temp_run(fmt::format("wide{}", threads));
    WideTask task;
    const double before = task.validate().at("mse");
    TrainerConfig cfg = base_config(dir);
    cfg.max_epochs = 3;
    cfg.optimizer.name = "adam";
    cfg.optimizer.lr = 0.01f;
    const TrainSummary s = Trainer(task, cfg).run();
    EXPECT_EQ(s.steps, 3 * 2);
    EXPECT_LT(s.last_valid.at("mse"), before) << threads << " threads: it learns";
    const float* v = task.params().values();
    trained.emplace_back(v, v + task.params().numel());
    fs::remove_all(dir);
  }
  core::kernels::set_blas_threads(1);
  ASSERT_EQ(trained[0].size(), trained[1].size());
  EXPECT_TRUE(trained[0] == trained[1]) << "the parameters trained on two threads differ from one thread's";
}

TEST(Trainer, OneProcessIsRankZeroOfOne) {
  EXPECT_TRUE(world().root());
  EXPECT_FALSE(world().distributed());
  float g[3] = {1, 2, 3};
  allreduce_sum(g, 3, "test");
  EXPECT_EQ(g[2], 3.0f);
  EXPECT_TRUE(all_equal(42, "test"));
  std::string s = "x";
  broadcast(s, "test");
  EXPECT_EQ(s, "x");
}

// The parameter checksum against values computed outside engram. A float whose bit pattern is
// 0x61 is one FNV-1a step over the byte 'a', so its sum is FNV's published FNV-1a 64-bit value
// of "a"; no floats leave the offset basis. The two-float sums are from Python:
//   import struct; bits = lambda f: struct.unpack('<I', struct.pack('<f', f))[0]
//   h = 14695981039346656037
//   for w in (bits(1.0), bits(2.0)): h = ((h ^ w) * 1099511628211) % 2**64
// (and with bits(2.0) + 1, the next float after 2.0, for the second).
TEST(Trainer, ParameterChecksumIsFnv1aOverTheFloatsBits) {
  EXPECT_EQ(checksum(nullptr, 0), 0xcbf29ce484222325ull);
  uint32_t a_bits = 0x61;
  float a;
  std::memcpy(&a, &a_bits, sizeof a);
  EXPECT_EQ(checksum(&a, 1), 0xaf63dc4c8601ec8cull);
  const float one_two[2] = {1.0f, 2.0f}, one_next[2] = {1.0f, std::nextafter(2.0f, 3.0f)};
  EXPECT_EQ(checksum(one_two, 2), 0x083327da586b6fedull);
  EXPECT_EQ(checksum(one_next, 2), 0x083326da586b6e3aull);  // one bit of one float changes it
}

}  // namespace
}  // namespace engram::train
