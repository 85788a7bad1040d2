// The committed golden models (tests/golden/models/<family>/) and their cases.tsv, for the tests
// that run them (tests/models/golden_models_test.cc checks the library against the same files).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace engram::testing {

inline std::filesystem::path golden_dir(const std::string& family) {
  return std::filesystem::path(ENGRAM_SOURCE_DIR) / "tests" / "golden" / "models" / family;
}

// INPUT<TAB>EXPECTED lines of the family's cases.tsv: engram's recorded outputs of run_line.
inline std::vector<std::pair<std::string, std::string>> golden_cases(const std::string& family) {
  std::ifstream in(golden_dir(family) / "cases.tsv", std::ios::binary);
  EXPECT_TRUE(in.good()) << family;
  std::vector<std::pair<std::string, std::string>> cases;
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) cases.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return cases;
}

}  // namespace engram::testing
