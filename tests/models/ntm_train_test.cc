// The NTM run's extrapolation set (`engram train` with model: ntm): validation on sequences outside the training range is
// logged next to the in-range validation, chooses best/, and rejects empty ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engram/models/ntm/task.h"
#include "engram/core/error.h"
#include "io/temp_dir.h"

namespace engram::models {
namespace {

using models::NtmArchitecture;
using models::NtmTaskKind;

// A small NTM on copy of 1-3 vectors, validated in range and on 5-7 vectors.
NtmTrainConfig small_config(const std::filesystem::path& run_dir) {
  NtmTrainConfig c = default_ntm_train_config(NtmTaskKind::kCopy, NtmArchitecture::kNtm);
  c.ntm.task.bits = 4;
  c.ntm.task.min_len = 1;
  c.ntm.task.max_len = 3;
  c.ntm.ntm.controller_size = 16;
  c.ntm.ntm.memory_slots = 12;
  c.ntm.ntm.memory_width = 6;
  c.data.batch_size = 4;
  c.data.batches_per_epoch = 25;
  c.data.valid_sequences = 6;
  c.data.extrapolation.sequences = 6;
  c.data.extrapolation.min_len = 5;
  c.data.extrapolation.max_len = 7;
  c.train.optimizer.lr = 3e-3f;
  c.train.max_steps = 150;
  c.train.log_every = 1000;
  c.train.run_dir = run_dir.string();
  return c;
}

std::vector<nlohmann::json> valid_events(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("event", "") == "valid") out.push_back(j);
  }
  return out;
}

TEST(NtmTrain, ExtrapolationSetIsLoggedAndChoosesTheBestCheckpoint) {
  io::testing::TempDir tmp;
  const NtmTrainConfig cfg = small_config(tmp / "run");
  ::testing::internal::CaptureStdout();
  const train::TrainSummary s = train_ntm(cfg);
  ::testing::internal::GetCapturedStdout();

  const std::vector<nlohmann::json> v = valid_events(tmp / "run" / "metrics.jsonl");
  ASSERT_EQ(v.size(), 6u);  // 150 updates, one validation per 25
  double best = std::numeric_limits<double>::infinity();
  int64_t best_step = -1;
  for (const nlohmann::json& j : v) {
    ASSERT_TRUE(j.contains("bits") && j.contains("extrap_bits") && j.contains("extrap_bit_errors")) << j.dump();
    const double x = j.at("extrap_bits").get<double>();
    // Sequences of 5-7 vectors cost more than sequences of 1-3 while the copy is not learnt.
    if (j.at("step").get<int64_t>() == 25) {
      EXPECT_GT(x, j.at("bits").get<double>());
    }
    if (x < best) best = x, best_step = j.at("step").get<int64_t>();
  }
  EXPECT_DOUBLE_EQ(s.best_metric, best);
  std::ifstream t(tmp / "run" / "best" / "trainer.json");
  const nlohmann::json trainer = nlohmann::json::parse(t);
  EXPECT_EQ(trainer.at("step").get<int64_t>(), best_step);
}

TEST(NtmTrain, WithoutExtrapolationSetTheTrainingRangeChooses) {
  io::testing::TempDir tmp;
  NtmTrainConfig cfg = small_config(tmp / "run");
  cfg.data.extrapolation.sequences = 0;
  cfg.train.max_steps = 50;
  ::testing::internal::CaptureStdout();
  const train::TrainSummary s = train_ntm(cfg);
  ::testing::internal::GetCapturedStdout();
  const std::vector<nlohmann::json> v = valid_events(tmp / "run" / "metrics.jsonl");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_FALSE(v[0].contains("extrap_bits"));
  EXPECT_DOUBLE_EQ(s.best_metric, std::min(v[0].at("bits").get<double>(), v[1].at("bits").get<double>()));
}

TEST(NtmTrain, EmptyExtrapolationRangeIsAnError) {
  io::testing::TempDir tmp;
  NtmTrainConfig cfg = small_config(tmp / "run");
  cfg.data.extrapolation.min_len = 9;
  cfg.data.extrapolation.max_len = 8;
  try {
    train_ntm(cfg);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("extrapolation lengths 9-8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace engram::models
