// The engram command-line program: every subcommand is a thin adapter in cli/. Under mpirun the
// process is one rank of a data-parallel job (train/distributed.h).
#include "engram/cli/cli.h"
#include "engram/train/distributed.h"

int main(int argc, char** argv) {
  engram::train::DistributedSession mpi(&argc, &argv);
  return mpi.finish(engram::cli::run(argc, argv));
}
