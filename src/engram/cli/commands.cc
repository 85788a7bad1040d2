// The list of subcommands.
#include "engram/cli/commands.h"

namespace engram::cli {

void register_commands(CLI::App& app) { register_demo(app); }

}  // namespace engram::cli
