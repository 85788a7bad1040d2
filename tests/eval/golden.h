// Reads the committed golden inputs under tests/golden/ (see tests/golden/README.md).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace engram::eval::testing {

// Lines of tests/golden/<relative> (UTF-8, LF); fails the test if the file is missing.
inline std::vector<std::string> golden_lines(const std::string& relative) {
  const std::string path = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing golden file " << path;
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace engram::eval::testing
