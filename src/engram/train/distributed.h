// Data-parallel training over MPI (docs/distributed.md). `mpirun -np N engram train CONFIG`
// starts N processes (ranks); each computes the gradient of its shard of every batch, the ranks
// sum their gradients with MPI_Allreduce, and every rank applies the same update, so parameters
// stay identical (checked by a checksum every train.distributed.check_every updates). Rank 0
// alone writes: checkpoints, metrics, train.yaml, vocabularies, the progress line and stdout.
//
// MPI is initialised only when the process was started by an MPI launcher (the launcher's
// environment variables say so), so `engram train` without mpirun is a plain single process and
// never touches MPI; a build without MPI (ENGRAM_MPI=OFF) refuses to run under mpirun with N > 1.
// Every collective waits at most train.distributed.timeout_s: past it the rank reports which
// collective stalled and aborts the job (MPI_Abort), so a stuck rank ends the job, not hangs it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace engram::train {

struct DistributedConfig {
  double timeout_s = 600;     // the longest any collective may wait (validation on rank 0 included)
  int64_t check_every = 100;  // parameter checksum across ranks at each phase start and every N updates (0 = never)

  template <class V>
  void visit(V& v) {
    v("timeout_s", timeout_s, "the longest a rank waits for the others in one collective (seconds)");
    v("check_every", check_every, "compare the parameters' checksum across ranks at each phase start and every N updates (0 = never)");
  }
};

// This process's place in the job: rank r of `size` ranks (0 of 1 without MPI).
struct World {
  int rank = 0;
  int size = 1;
  bool root() const { return rank == 0; }
  bool distributed() const { return size > 1; }
};

// Initialises MPI when started by an MPI launcher (main() holds one for the process's life);
// finish() ends it: MPI_Finalize after success; after a failure of a job with several ranks,
// MPI_Abort, so the other ranks do not wait for this one.
class DistributedSession {
 public:
  DistributedSession(int* argc, char*** argv);
  ~DistributedSession();
  DistributedSession(const DistributedSession&) = delete;
  DistributedSession& operator=(const DistributedSession&) = delete;
  int finish(int exit_code);

 private:
  bool active_ = false;
};

// The world of this process (rank 0 of 1 unless a DistributedSession started MPI).
const World& world();
// Whether this build was made with MPI.
bool mpi_available();

// Collectives over all ranks (no-ops with one rank). Each waits at most `timeout_s` seconds
// (set_timeout; default 600) and then aborts the job with a message naming `what`.
void set_timeout(double seconds);
void allreduce_sum(float* data, size_t n, const char* what);
void allreduce_sum(double* data, size_t n, const char* what);
// Whether every rank holds the same value (an exact comparison of min and max).
bool all_equal(uint64_t value, const char* what);
// Rank 0's string, on every rank.
void broadcast(std::string& text, const char* what);
void barrier(const char* what);

// Runs f on rank 0 first, then (after a barrier) on the other ranks: for setup that writes files
// the others then read (vocabularies built from the data, say).
template <class F>
void root_first(F&& f) {
  if (world().root()) f();
  barrier("setup on rank 0");
  if (!world().root()) f();
}

// The parameter checksum: FNV-1a's step h = (h ^ w) * 1099511628211 (mod 2^64) from the 64-bit
// offset basis 14695981039346656037, over the n floats' 32-bit patterns w (one step a float, not a
// byte). Equal bits give equal sums on every machine; one changed bit changes the sum.
uint64_t checksum(const float* data, size_t n);

}  // namespace engram::train
