// Trainer: learning, validation/best/last checkpoints, early stopping, metrics JSONL, and a
// resume after a simulated kill that ends bit-identical to an uninterrupted run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace engram::train
