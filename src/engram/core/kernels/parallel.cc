// The team (parallel.h): on_team, parallel_for and each thread's team size.
//
// A team is the calling thread's own helpers (team - 1 of them, started on first use and joined
// when the calling thread ends), one Slot each. The caller posts a job into a slot and the helper
// claims it, or the caller takes it back, by compare-and-swap on the slot's state word,
//   state = (job number << 2) | status,  status: kPosted -> kClaimed -> kDone, or kPosted -> kTaken.
// The job's fields are written by the caller before its store of (g, kPosted) and read by the
// helper only after its claim of (g, kPosted) succeeded; the caller writes the next job only after
// it saw (g, kDone) or took job g back itself, so the fields are never read and written at once.
// Between jobs a helper spins for kSpin, then sleeps: it sets `sleeping` (kAsleep) and waits on the
// state word; the caller stores the state, then turns kAsleep into kWoken and notifies (all
// sequentially consistent, so one of them sees the other). Until the woken helper runs, and
// whenever a helper has not claimed its part within kClaimWait (off its core: the other core
// busy), the caller runs that part itself: a team never waits on the scheduler for a part nobody
// started. Everything is std::atomic, so ThreadSanitizer sees every hand-off.
//
// OpenMP is left to oneDNN, and set to one thread on every thread that multiplies (a team's
// helpers and every caller, at its first blas_team_size()): engram splits its products itself
// (blas_split.cc, gemv.cc, gemm_bf16.cc), so libgomp's pool does not spin beside a team's helpers
// for the same cores. Only on_openmp gives oneDNN its own threads, for the largest products, and
// sends the caller's helpers to sleep first (`park`).
#include "engram/core/kernels/parallel.h"

#include "engram/core/kernels/blas.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "engram/core/kernels/blas.h"

extern "C" {
int omp_get_max_threads();  // libgomp (oneDNN's threads)
void omp_set_num_threads(int);
int omp_in_parallel();
}

namespace engram::core::kernels {

namespace {

using Clock = std::chrono::steady_clock;
// A helper spins this long after its last job before it sleeps: the gaps between one decoding
// step's products are a few microseconds, so a helper stays awake through a decoding.
constexpr auto kSpin = std::chrono::microseconds(2000);
// The caller waits this long for an awake helper to claim its part before running it itself.
constexpr auto kClaimWait = std::chrono::microseconds(20);
constexpr uint64_t kPosted = 0, kClaimed = 1, kDone = 2, kTaken = 3, kStatus = 3;
constexpr uint64_t kStop = ~uint64_t{0};
constexpr uint32_t kAwake = 0, kAsleep = 1, kWoken = 2;  // a helper's `sleeping`

thread_local bool t_helper = false;  // this thread is a team's helper
thread_local bool t_busy = false;    // this thread's own team is running a job
thread_local int t_team = 0;         // set_blas_threads; 0: not yet set (OpenMP's default then)
thread_local const Bf16Scope* t_bf16 = nullptr;  // the open Bf16Products scope (a helper: its job's caller's)
std::atomic<uint64_t> g_bf16_generation{0};

struct alignas(64) Slot {
  std::atomic<uint64_t> state{kDone};  // job 0, done
  std::atomic<uint32_t> sleeping{kAwake};
  std::atomic<uint32_t> park{0};  // 1: sleep now (the caller is about to run OpenMP threads)
  void (*fn)(void*, int, int) = nullptr;  // the posted job
  void* ctx = nullptr;
  int part = 0, parts = 0;
  const Bf16Scope* bf16 = nullptr;  // the caller's bf16_products(), for the part
};

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

void helper_main(Slot* s) {
  t_helper = true;
  omp_set_num_threads(1);  // oneDNN inside a part: sequential
  auto idle_since = Clock::now();
  for (unsigned spins = 0;; ++spins) {
    uint64_t st = s->state.load(std::memory_order_acquire);
    if (st == kStop) return;
    if ((st & kStatus) == kPosted) {
      if (s->state.compare_exchange_strong(st, st | kClaimed, std::memory_order_acquire)) {
        t_bf16 = s->bf16;
        s->fn(s->ctx, s->part, s->parts);
        t_bf16 = nullptr;
        s->state.store((st & ~kStatus) | kDone, std::memory_order_release);
      }
      idle_since = Clock::now();
      continue;
    }
    // `park` is read on every spin but written only when set, so the spin keeps the slot's cache
    // line shared with the caller instead of taking it over.
    if ((s->park.load(std::memory_order_relaxed) && s->park.exchange(0, std::memory_order_relaxed)) ||
        (spins % 64 == 0 && Clock::now() - idle_since > kSpin)) {
      s->sleeping.store(kAsleep, std::memory_order_seq_cst);
      if (s->state.load(std::memory_order_seq_cst) == st) s->state.wait(st, std::memory_order_seq_cst);
      s->sleeping.store(kAwake, std::memory_order_relaxed);
      s->park.store(0, std::memory_order_relaxed);  // a park sent while asleep is over: a job woke it
      idle_since = Clock::now();
    } else {
      pause();
    }
  }
}

class Team {
 public:
  ~Team() {
    for (auto& s : slots_) {
      s->state.store(kStop, std::memory_order_seq_cst);
      s->state.notify_one();
    }
    for (auto& t : threads_) t.join();
  }

  // At least `helpers` helpers; false if a thread could not be started.
  bool reserve(int helpers) {
    try {
      while (static_cast<int>(threads_.size()) < helpers) {
        slots_.push_back(std::make_unique<Slot>());
        threads_.emplace_back(helper_main, slots_.back().get());
      }
    } catch (...) {
      if (slots_.size() > threads_.size()) slots_.pop_back();
      return false;
    }
    return true;
  }

  void park() {
    for (auto& s : slots_) s->park.store(1, std::memory_order_relaxed);
  }

  void run(int team, void (*fn)(void*, int, int), void* ctx) {
    const uint64_t g = ++jobs_;
    for (int i = 1; i < team; ++i) {
      Slot& s = *slots_[i - 1];
      s.fn = fn;
      s.ctx = ctx;
      s.part = i;
      s.parts = team;
      s.bf16 = t_bf16;
      s.state.store(g << 2 | kPosted, std::memory_order_seq_cst);
      uint32_t asleep = kAsleep;  // wake it once (a futex call is dear on a virtual machine)
      if (s.sleeping.load(std::memory_order_seq_cst) == kAsleep &&
          s.sleeping.compare_exchange_strong(asleep, kWoken, std::memory_order_seq_cst))
        s.state.notify_one();
    }
    std::exception_ptr error;  // a part of the caller's that threw: rethrown once every part ended
    auto mine = [&](int part) {
      try {
        fn(ctx, part, team);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    };
    mine(0);
    const auto mine_done = Clock::now();
    for (int i = 1; i < team; ++i) {
      Slot& s = *slots_[i - 1];
      uint64_t posted = g << 2 | kPosted;
      for (unsigned spins = 0;; ++spins) {
        const uint64_t st = s.state.load(std::memory_order_acquire);
        if (st == (g << 2 | kDone)) break;
        if (st == posted && (s.sleeping.load(std::memory_order_relaxed) != kAwake ||
                             (spins % 64 == 63 && Clock::now() - mine_done > kClaimWait))) {
          if (s.state.compare_exchange_strong(posted, g << 2 | kTaken, std::memory_order_acquire)) {
            mine(i);
            break;
          }
          posted = g << 2 | kPosted;  // the helper claimed it meanwhile: wait for it
        }
        pause();
      }
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  uint64_t jobs_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // [helpers]
  std::vector<std::thread> threads_;          // [helpers]
};

Team& my_team() {
  thread_local Team team;
  return team;
}

}  // namespace

int blas_team_size() {
  if (t_team == 0 && !t_helper) set_team_threads(omp_get_max_threads());  // OMP_NUM_THREADS, or all cores
  if (t_helper || t_busy || omp_in_parallel()) return 1;
  return t_team;
}

const Bf16Scope* bf16_products() { return t_bf16; }

Bf16Products::Bf16Products(bool on, const float* weights, int64_t weights_count)
    : scope_{weights, weights_count, g_bf16_generation.fetch_add(1, std::memory_order_relaxed) + 1}, was_(t_bf16) {
  t_bf16 = on ? &scope_ : nullptr;
}
Bf16Products::~Bf16Products() { t_bf16 = was_; }

void set_team_threads(int n) {
  t_team = std::max(1, n);
  omp_set_num_threads(1);  // oneDNN called by this thread: sequential (its products are split here)
}

void on_openmp_impl(int threads, void (*fn)(void*), void* ctx) {
  if (threads <= 1) {
    fn(ctx);
    return;
  }
  my_team().park();  // the helpers sleep: OpenMP's threads get the cores
  omp_set_num_threads(threads);
  struct Back {
    ~Back() { omp_set_num_threads(1); }
  } const back;
  fn(ctx);
}

void on_team_impl(int team, void (*fn)(void*, int, int), void* ctx) {
  Team& crew = my_team();
  if (team <= 1 || t_helper || t_busy || !crew.reserve(team - 1)) {
    const int parts = std::max(team, 1);
    for (int t = 0; t < parts; ++t) fn(ctx, t, parts);
    return;
  }
  struct Busy {
    Busy() { t_busy = true; }
    ~Busy() { t_busy = false; }
  } const busy;
  crew.run(team, fn, ctx);
}

void parallel_for_impl(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  if (n <= 0) return;
  const int64_t most = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int team = static_cast<int>(std::min<int64_t>(blas_team_size(), most));
  if (team <= 1) {
    fn(ctx, 0, n);
    return;
  }
  on_team(team, [&](int t, int nt) {
    const int64_t b = n * t / nt, e = n * (t + 1) / nt;
    if (e > b) fn(ctx, b, e);
  });
}

}  // namespace engram::core::kernels
