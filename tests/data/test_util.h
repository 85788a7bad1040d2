// Helpers for the data tests: a per-test temporary directory and the shared corpus directory.
//
// Corpora are found through ENGRAM_DATA_DIR, default <ENGRAM_SOURCE_DIR>/../shared/data. A test
// that needs them FAILS when the directory is missing; it is skipped (loudly) only when
// ENGRAM_DATA_DIR is explicitly set to the empty string.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "engram/core/error.h"

namespace engram::data::testing {

// The message of the engram::Error that f throws, or "<no error>".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "engram_data_";
    if (info) name += std::string(info->test_suite_name()) + "_" + info->name() + "_";
    name += std::to_string(::getpid());
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes bytes exactly as given and returns the path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = file(name);
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// Fixture for tests that read /work/shared/data-style corpora: SetUp fails (or, with
// ENGRAM_DATA_DIR="", skips) before the body runs when the directory is unusable.
class CorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env = std::getenv("ENGRAM_DATA_DIR");
    if (env != nullptr && std::string(env).empty()) {
      GTEST_SKIP() << "*** SKIPPING corpus test: ENGRAM_DATA_DIR is set to the empty string ***";
    }
    data_dir_ =
        env != nullptr ? std::string(env) : std::string(ENGRAM_SOURCE_DIR) + "/../shared/data";
    ASSERT_TRUE(std::filesystem::is_directory(data_dir_))
        << "corpus directory '" << data_dir_ << "' not found. Set ENGRAM_DATA_DIR to the folder "
        << "holding babi/, multi30k/, tatoeba-zh-en/ ... (or to \"\" to skip corpus tests).";
  }
  std::string path(const std::string& relative) const { return data_dir_ + "/" + relative; }
  std::string data_dir_;
};

}  // namespace engram::data::testing
