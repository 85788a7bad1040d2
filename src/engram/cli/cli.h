// Entry of the `engram` program: parses the command line and dispatches to a subcommand.
#pragma once

namespace engram::cli {

// Returns the process exit code; an engram::Error is printed as one line and gives 1.
int run(int argc, char** argv);

}  // namespace engram::cli
