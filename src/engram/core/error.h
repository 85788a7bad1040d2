// Error type and the one checking macro of the project: ENGRAM_CHECK(cond, "fmt {}", args...)
// throws engram::Error with a formatted one-line message. Entry points print it and exit non-zero.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace engram {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace engram

#define ENGRAM_CHECK(cond, ...)                                   \
  do {                                                            \
    if (!(cond)) [[unlikely]] {                                   \
      throw ::engram::Error(::fmt::format(__VA_ARGS__));          \
    }                                                             \
  } while (0)
