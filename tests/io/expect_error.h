// EXPECT_ERROR_HAS(statement, {"piece", ...}): the statement throws engram::Error whose message
// is one line and contains every piece.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engram/core/error.h"

namespace engram::io::testing {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

inline void expect_message(const std::string& msg, const std::vector<std::string>& pieces) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  for (const auto& p : pieces) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

}  // namespace engram::io::testing
