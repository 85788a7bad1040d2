// RUN/train.yaml on resume: a changed key that shapes the run's numbers is refused by name; the
// limits (train.max_steps, ...) may change; a run without a checkpoint takes any config.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "engram/core/error.h"
#include "engram/io/files.h"
#include "engram/train/run_config.h"

namespace engram::train {
namespace {

namespace fs = std::filesystem;

const std::string kRun =
    "model: toy\ndata:\n  batch_size: 32\ntrain:\n  seed: 1\n  max_steps: 100\n  max_minutes: 0\n  optimizer:\n"
    "    name: sgd\n    lr: 0.1\n  schedule:\n    name: constant\n";

std::string with(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

std::string error_of(const fs::path& dir, const std::string& yaml) {
  try {
    write_run_config(dir, yaml);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RunConfig, AResumedRunRefusesChangedSettingsByNameAndTakesNewLimits) {
  const fs::path dir = fs::temp_directory_path() / ("engram-run-config-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_run_config(dir, kRun);
  // No checkpoint yet: nothing to keep, any config is written.
  EXPECT_EQ(error_of(dir, with(kRun, "seed: 1", "seed: 2")), "");
  write_run_config(dir, kRun);
  fs::create_directories(dir / "seed-1" / "last");  // MemN2N's layout: a checkpoint one level down
  ASSERT_TRUE(has_resumable_checkpoint(dir));
  EXPECT_NE(error_of(dir, with(kRun, "seed: 1", "seed: 2")).find("train.seed 2 (the run has 1)"), std::string::npos);
  EXPECT_NE(error_of(dir, with(kRun, "batch_size: 32", "batch_size: 64")).find("data.batch_size"), std::string::npos);
  EXPECT_NE(error_of(dir, with(kRun, "lr: 0.1", "lr: 0.2")).find("train.optimizer.lr"), std::string::npos);
  EXPECT_NE(error_of(dir, with(kRun, "name: constant", "name: step")).find("train.schedule.name"), std::string::npos);
  EXPECT_EQ(error_of(dir, with(with(kRun, "max_steps: 100", "max_steps: 500"), "max_minutes: 0", "max_minutes: 3")), "");
  EXPECT_EQ(error_of(dir, kRun + "  new_key: 1\n"), "");  // a key the saved config predates
  fs::remove_all(dir);
}

}  // namespace
}  // namespace engram::train
