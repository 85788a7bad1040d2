// `engram` subcommand dispatch. Each subcommand lives in its own file as a thin adapter.
// One error style and three exit codes (docs/limits.md):
//   0  success (also --help and --version)
//   1  `engram: error: ...`: bad input, a failed check, a failed write (standard output included)
//   2  `engram: error: ...`: the command line itself (unknown option, bad or missing value)
#include "engram/cli/cli.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engram/cli/commands.h"
#include "engram/core/error.h"

namespace engram::cli {

namespace {

// Flushes standard output; a failure (a full disk, a closed pipe) is an error, never a silent loss.
bool stdout_ok() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return true;
  std::fprintf(stderr, "engram: error: cannot write to standard output: %s\n", std::strerror(errno));
  return false;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"engram: attention and memory-augmented sequence models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "engram 0.1.0");
  app.option_defaults()->always_capture_default();  // every option's --help shows its default
  register_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "engram: error: %s (see engram --help, or engram COMMAND --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // engram::Error and the rest: one line, exit 1
    std::fflush(stdout);                  // what was written stays written; the error says why it stopped
    std::fprintf(stderr, "engram: error: %s\n", e.what());
    return 1;
  }
  return stdout_ok() ? 0 : 1;
}

}  // namespace engram::cli
