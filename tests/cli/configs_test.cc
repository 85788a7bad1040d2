// Every shipped config (configs/*.yaml) loads through the command that takes it — `engram ntm
// train`, `engram babi train` or `engram train` with --dump-config — so a renamed or mistyped key
// in a config fails here, not in a user's first run. The dumped config must show the file's model.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engram/cli/commands.h"
#include "cli/run_cli.h"
#include "engram/core/error.h"

namespace engram::cli {
namespace {

namespace fs = std::filesystem;

std::string run(std::vector<std::string> args) { return testing::run_cli(std::move(args), {register_commands}); }

TEST(Configs, EveryShippedConfigLoads) {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(ENGRAM_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string file = entry.path().string(), name = entry.path().filename().string();
    std::vector<std::string> args;
    if (name.rfind("ntm-", 0) == 0) args = {"ntm", "train", file, "--dump-config"};
    else if (name.rfind("babi-", 0) == 0) args = {"babi", "train", file, "--dump-config"};
    else args = {"train", file, "--dump-config"};
    std::string out;
    try {
      out = run(args);
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
      continue;
    }
    EXPECT_GT(out.size(), 100u) << name;
    if (name.find("lstm") != std::string::npos) {
      EXPECT_NE(out.find("architecture: lstm"), std::string::npos) << name;
    }
    ++seen;
  }
  EXPECT_GE(seen, 12);
}

}  // namespace
}  // namespace engram::cli
