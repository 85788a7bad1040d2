// `engram` subcommand dispatch. Each subcommand lives in its own file as a thin adapter.
#include "engram/cli/cli.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "engram/cli/commands.h"
#include "engram/core/error.h"

namespace engram::cli {

int run(int argc, char** argv) {
  CLI::App app{"engram: attention and memory-augmented sequence models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "engram 0.1.0");
  register_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const engram::Error& e) {
    std::fprintf(stderr, "engram: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engram: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace engram::cli
