// Data parallelism over MPI (see distributed.h). Every collective is the non-blocking MPI call
// polled with MPI_Test until done or the timeout, so a rank that stopped answering ends the job
// with a message instead of hanging it.
#include "engram/train/distributed.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#ifdef ENGRAM_WITH_MPI
#include <mpi.h>
#endif

namespace engram::train {

namespace {

World g_world;
double g_timeout_s = 600;

// The rank count an MPI launcher gave this process (Open MPI, MPICH / Intel MPI, PMIx), 0 if it
// was not started by one.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  if (std::getenv("PMIX_RANK")) return 1;
  return 0;
}

#ifdef ENGRAM_WITH_MPI
[[noreturn]] void abort_job(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "engram: error: rank %d of %d: %s; ending the job\n", g_world.rank, g_world.size,
               message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

// Polls a started non-blocking collective until it completes; past the timeout, aborts the job.
void wait(MPI_Request& req, const char* what) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  int done = 0;
  for (int polls = 0;; ++polls) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) abort_job(std::string(what) + ": MPI error");
    if (done) return;
    // A non-blocking collective moves only inside MPI calls, so poll without pause while it may
    // be moving data (a gradient allreduce: milliseconds to a second); past 2 s the others are
    // busy elsewhere (rank 0 validating), so sleep between polls and leave the cores to them.
    if ((polls & 63) != 0) continue;
    const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    if (waited > g_timeout_s)
      abort_job(std::string(what) + " did not complete within " + std::to_string(static_cast<int>(g_timeout_s)) +
                " s (train.distributed.timeout_s): another rank died or is stuck");
    if (waited > 2.0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
#endif

}  // namespace

DistributedSession::DistributedSession(int* argc, char*** argv) {
  const int n = launcher_size();
  if (n <= 0) return;
#ifdef ENGRAM_WITH_MPI
  MPI_Init(argc, argv);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
  // Rank 0 speaks for the job: the other ranks' standard output (progress, summaries) is dropped;
  // their errors (stderr) stay.
  if (g_world.rank != 0 && !std::freopen("/dev/null", "w", stdout)) {
    std::fprintf(stderr, "engram: error: rank %d: cannot redirect standard output\n", g_world.rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#else
  (void)argc, (void)argv;
  if (n > 1) {
    std::fprintf(stderr, "engram: error: started by an MPI launcher with %d ranks, but this engram was built "
                 "without MPI (rebuild with libopenmpi-dev installed and -DENGRAM_MPI=ON)\n", n);
    std::exit(1);
  }
#endif
}

DistributedSession::~DistributedSession() { finish(0); }

int DistributedSession::finish(int exit_code) {
#ifdef ENGRAM_WITH_MPI
  if (!active_) return exit_code;
  active_ = false;
  if (exit_code != 0 && g_world.size > 1) {
    // The others may be waiting in a collective for this rank: end them too.
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
  }
  MPI_Finalize();
#endif
  return exit_code;
}

const World& world() { return g_world; }

bool mpi_available() {
#ifdef ENGRAM_WITH_MPI
  return true;
#else
  return false;
#endif
}

void set_timeout(double seconds) { g_timeout_s = seconds; }

void allreduce_sum(float* data, size_t n, const char* what) {
  if (!g_world.distributed() || n == 0) return;
#ifdef ENGRAM_WITH_MPI
  // MPI counts are int: large buffers go in pieces of at most 2^30 floats.
  for (size_t off = 0; off < n;) {
    const size_t part = std::min<size_t>(n - off, size_t{1} << 30);
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, data + off, static_cast<int>(part), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
    wait(req, what);
    off += part;
  }
#endif
}

void allreduce_sum(double* data, size_t n, const char* what) {
  if (!g_world.distributed() || n == 0) return;
#ifdef ENGRAM_WITH_MPI
  MPI_Request req;
  MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  wait(req, what);
#endif
}

bool all_equal(uint64_t value, const char* what) {
  if (!g_world.distributed()) return true;
#ifdef ENGRAM_WITH_MPI
  uint64_t lo = value, hi = value;
  MPI_Request req[2];
  MPI_Iallreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD, &req[0]);
  wait(req[0], what);
  MPI_Iallreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &req[1]);
  wait(req[1], what);
  return lo == hi;
#else
  return true;
#endif
}

void broadcast(std::string& text, const char* what) {
  if (!g_world.distributed()) return;
#ifdef ENGRAM_WITH_MPI
  uint64_t n = text.size();
  MPI_Request req;
  MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req);
  wait(req, what);
  if (!g_world.root()) text.assign(n, '\0');
  if (n == 0) return;
  MPI_Ibcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD, &req);
  wait(req, what);
#endif
}

void barrier(const char* what) {
  if (!g_world.distributed()) return;
#ifdef ENGRAM_WITH_MPI
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  wait(req, what);
#endif
}

uint64_t checksum(const float* data, size_t n) {
  uint64_t h = 14695981039346656037ull;  // FNV's 64-bit offset basis
  for (size_t i = 0; i < n; ++i) {
    uint32_t w;
    std::memcpy(&w, data + i, sizeof w);
    h = (h ^ w) * 1099511628211ull;
  }
  return h;
}

}  // namespace engram::train
