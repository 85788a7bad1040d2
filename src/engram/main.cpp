// The engram command-line program: every subcommand is a thin adapter in cli/.
#include "engram/cli/cli.h"

int main(int argc, char** argv) { return engram::cli::run(argc, argv); }
