// Every shipped config (configs/*.yaml) loads through `engram train CONFIG --dump-config`, so a
// renamed or mistyped key in a config fails here, not in a user's first run. The dumped config
// must name the family the file's name says (seq2seq for the translation configs) and its model.
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


// Every entry of configs/ is a .yaml file that loads: none is skipped for its extension (a
// config.yml or a stray file fails here rather than going unchecked).
TEST(Configs, EveryShippedConfigLoads) {
  int entries = 0, loaded = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(ENGRAM_SOURCE_DIR) / "configs")) {
    ++entries;
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml") {
      ADD_FAILURE() << entry.path() << ": configs/ holds only run configs, CONFIG.yaml";
      continue;
    }
    const std::string file = entry.path().string(), name = entry.path().filename().string();
    const std::vector<std::string> args = {"train", file, "--dump-config"};
    const std::string family = name.rfind("ntm-", 0) == 0    ? "ntm"
                               : name.rfind("babi-", 0) == 0 ? "memn2n"
                               : name.rfind("sst-", 0) == 0  ? "tree"
                               : name.rfind("pointer-generator-", 0) == 0 ? "pointer_generator"
                               : name.rfind("pointer-", 0) == 0 ? "pointer"
                               : name.rfind("fsdd-", 0) == 0 ? "speech"
                                                              : "seq2seq";
    std::string out;
    try {
      out = testing::run_engram(args);
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
      continue;
    }
    EXPECT_GT(out.size(), 100u) << name;
    EXPECT_EQ(out.rfind("model: " + family + " ", 0), 0u) << name << ":\n" << out.substr(0, 200);
    EXPECT_NE(out.find("\n" + family + ":\n"), std::string::npos) << name;
    if (family == "ntm" && name.find("lstm") != std::string::npos) {
      EXPECT_NE(out.find("architecture: lstm"), std::string::npos) << name;
    }
    ++loaded;
  }
  EXPECT_GT(entries, 0);
  EXPECT_EQ(loaded, entries) << "of the " << entries << " entries of configs/, " << loaded << " loaded";
}

}  // namespace
}  // namespace engram::cli
