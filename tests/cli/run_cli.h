// Runs `engram ARGS...` in-process through CLI11 exactly as the binary parses them, with the
// given command groups registered; returns what the command printed to stdout. engram::Error
// (and CLI11's parse errors) escape to the caller.
#pragma once

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "engram/cli/commands.h"

namespace engram::cli::testing {

inline std::string run_cli(std::vector<std::string> args, std::initializer_list<void (*)(CLI::App&)> groups) {
  CLI::App app{"engram"};
  app.require_subcommand(1);
  for (auto* reg : groups) reg(app);
  args.insert(args.begin(), "engram");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  ::testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return ::testing::internal::GetCapturedStdout();
}

// `engram ARGS...` with every command group registered, as the binary has them.
inline std::string run_engram(std::vector<std::string> args) { return run_cli(std::move(args), {register_commands}); }

}  // namespace engram::cli::testing
