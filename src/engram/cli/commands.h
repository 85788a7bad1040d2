// Registration of every `engram` subcommand (one function per command file).
#pragma once

#include <CLI/CLI.hpp>

namespace engram::cli {

void register_commands(CLI::App& app);
void register_demo(CLI::App& app);

}  // namespace engram::cli
