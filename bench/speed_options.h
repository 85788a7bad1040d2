// Shared by the training-speed programs (bench/*_speed.cc, built by bench/CMakeLists.txt): the
// --threads option as the engram commands spell it (cli/options.h; nothing depends on cli/), and
// a main with the engram binary's error contract (docs/limits.md): `NAME: error: ...` on one line
// of stderr, exit 1 for a failed check or write, 2 for a bad command line, 0 for --help.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>

#include "engram/core/kernels/blas.h"

namespace engram::bench {

// --threads N: BLAS / OpenMP threads, 1 ... 256 (set by speed_main before the body runs).
inline CLI::Option* add_threads_option(CLI::App& app, int& threads) {
  return app
      .add_option("--threads", threads, "BLAS/OpenMP threads (one suits these models' small per-step products; "
                                        "never more than the free cores)")
      ->check(CLI::Range(1, 256));
}

// Parses the command line into the options bound to `app`, sets `threads` BLAS / OpenMP threads
// and runs `body`. Returns the exit code.
inline int speed_main(CLI::App& app, int argc, char** argv, const int& threads, const std::function<void()>& body) {
  const std::string name = app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", name.c_str(), e.what(), name.c_str());
    return 2;
  }
  try {
    core::kernels::set_blas_threads(threads);
    body();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    return 1;
  }
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  std::fprintf(stderr, "%s: error: cannot write to standard output: %s\n", name.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace engram::bench
