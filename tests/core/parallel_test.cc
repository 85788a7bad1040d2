// kernels::parallel_for and the ops that use it: every index visited once whatever the grain and
// team, and the threaded ops (element-wise unary and same-shape binary, softmax / log-softmax, cross-entropy) give the
// same bits on two threads as on one, in value and gradient; errors found inside a parallel loop
// still come out as one engram::Error naming the first bad row. GRU / LSTM cells and bmm too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"
#include "engram/core/ops.h"
#include "engram/core/rng.h"

namespace engram::core {
namespace {

TEST(ParallelFor, VisitsEveryIndexOnceInContiguousChunks) {
  for (int threads : {1, 2}) {
    kernels::set_blas_threads(threads);
    for (int64_t n : {0, 1, 5, 1000, 100003})
      for (int64_t grain : {1, 7, 1 << 15}) {
        std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
        std::atomic<int> chunks{0};
        kernels::parallel_for(n, grain, [&](int64_t b, int64_t e) {
          ASSERT_LT(b, e);
          ++chunks;
          for (int64_t i = b; i < e; ++i) ++seen[static_cast<size_t>(i)];
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)].load(), 1) << n << " " << grain;
        if (n > 0) {
          EXPECT_GE(chunks.load(), 1);
          EXPECT_LE(chunks.load(), threads);
          if (n < 2 * grain) {
            EXPECT_EQ(chunks.load(), 1) << "below two grains: one chunk";
          }
        }
      }
  }
  kernels::set_blas_threads(1);
}

using Floats = std::vector<float>;

// Forward values and the input gradient of f(x) weighted by a fixed random cotangent.
std::pair<Floats, Floats> run(int threads, const Floats& xv, Shape shape, Var (*f)(Var)) {
  kernels::set_blas_threads(threads);
  Graph g;
  Var x = g.variable(Tensor{const_cast<float*>(xv.data()), shape});
  Var y = f(x);
  Floats seed(static_cast<size_t>(y.numel()));
  Rng rng(4);
  for (auto& s : seed) s = rng.uniform(-1, 1);
  g.backward(y, seed.data());
  kernels::set_blas_threads(1);
  return {Floats(y.data(), y.data() + y.numel()), Floats(x.grad(), x.grad() + x.numel())};
}

TEST(ParallelOps, TwoThreadsGiveTheSameBitsAsOne) {
  Rng rng(9);
  const Shape shape{70, 1003};  // 70k values: above the 32k grain, rows of an odd width
  Floats xv(static_cast<size_t>(shape.numel()));
  for (auto& v : xv) v = rng.uniform(-4, 4);
  struct Case {
    const char* name;
    Var (*f)(Var);
  };
  const Case cases[] = {{"tanh", [](Var x) { return tanh(x); }},
                        {"sigmoid", [](Var x) { return sigmoid(x); }},
                        {"exp", [](Var x) { return exp(x); }},
                        {"softmax", [](Var x) { return softmax(x); }},
                        {"log_softmax", [](Var x) { return log_softmax(x); }},
                        {"add, mul", [](Var x) { return mul(add(x, x), tanh(x)); }},
                        {"scalar broadcast", [](Var x) { return add(x, x.g->full({}, 0.5f)); }}};
  for (const Case& c : cases) {
    const auto one = run(1, xv, shape, c.f), two = run(2, xv, shape, c.f);
    EXPECT_EQ(one.first, two.first) << c.name << " values";
    EXPECT_EQ(one.second, two.second) << c.name << " gradients";
  }
  std::vector<int32_t> targets(70);
  for (int i = 0; i < 70; ++i) targets[i] = i % 7 == 3 ? -1 : (i * 37) % 1003;
  auto ce = [&](int threads) {
    kernels::set_blas_threads(threads);
    Graph g;
    Var x = g.variable(Tensor{xv.data(), shape});
    CrossEntropyOptions o;
    o.label_smoothing = 0.1f;
    o.ignore_index = -1;
    Var loss = cross_entropy(x, targets, o);
    g.backward(loss);
    kernels::set_blas_threads(1);
    return std::pair{loss.data()[0], Floats(x.grad(), x.grad() + x.numel())};
  };
  const auto ce1 = ce(1), ce2 = ce(2);
  EXPECT_EQ(ce1.first, ce2.first) << "cross_entropy loss";
  EXPECT_EQ(ce1.second, ce2.second) << "cross_entropy gradient";
}

// The ops that split rows or batch items over the team with a per-row or per-item result: fused
// GRU / LSTM cells (bias gradient summed in row order afterwards) and bmm.
TEST(ParallelOps, CellsAndBmmGiveTheSameBitsOnTwoThreads) {
  const int b = 64, h = 512;  // 64 x 1536 gate values: above two grains
  auto random = [](Shape s, uint64_t seed) {
    Rng rng(seed);
    Floats v(static_cast<size_t>(s.numel()));
    for (auto& e : v) e = rng.uniform(-1, 1);
    return v;
  };
  // Every input's gradient after backward(out, seed), and out itself.
  using Build = std::function<Var(Graph&, const std::vector<Var>&)>;
  auto run_op = [&](int threads, const std::vector<Shape>& shapes, const Build& build) {
    kernels::set_blas_threads(threads);
    std::vector<Floats> values;
    for (size_t i = 0; i < shapes.size(); ++i) values.push_back(random(shapes[i], 10 + i));
    Graph g;
    std::vector<Var> in;
    for (size_t i = 0; i < shapes.size(); ++i) in.push_back(g.variable(Tensor{values[i].data(), shapes[i]}));
    Var out = build(g, in);
    const Floats seed = random(out.shape(), 99);
    g.backward(out, seed.data());
    std::vector<Floats> res{Floats(out.data(), out.data() + out.numel())};
    for (Var v : in) res.emplace_back(v.grad(), v.grad() + v.numel());
    kernels::set_blas_threads(1);
    return res;
  };
  const Build gru = [](Graph&, const std::vector<Var>& x) { return gru_cell(x[0], x[1], x[2], x[3]); };
  const Build lstm = [](Graph&, const std::vector<Var>& x) { return lstm_cell(x[0], x[1], x[2], x[3], x[4]).h; };
  const Build batched = [](Graph&, const std::vector<Var>& x) { return bmm(x[0], x[1]); };
  const std::vector<std::pair<const char*, std::pair<std::vector<Shape>, Build>>> cases = {
      {"gru_cell", {{{b, 3 * h}, {b, h}, {3 * h, h}, {3 * h}}, gru}},
      {"lstm_cell", {{{b, 4 * h}, {b, h}, {b, h}, {4 * h, h}, {4 * h}}, lstm}},
      {"bmm", {{{b, 1, 20}, {b, 20, 1024}}, batched}}};
  for (const auto& [name, c] : cases) {
    const auto one = run_op(1, c.first, c.second), two = run_op(2, c.first, c.second);
    ASSERT_EQ(one.size(), two.size());
    for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i], two[i]) << name << (i ? " gradient " : " value ") << i;
  }
}

TEST(ParallelOps, AFullyMaskedRowIsReportedFromInsideTheParallelLoop) {
  kernels::set_blas_threads(2);
  const int rows = 64, c = 1024;
  Floats xv(rows * c, 0.5f), mask(rows * c, 1.0f);
  for (int r : {41, 57})
    for (int j = 0; j < c; ++j) mask[r * c + j] = 0.0f;
  Graph g(false);
  try {
    log_softmax(g.input(Tensor{xv.data(), {rows, c}}), mask.data());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 41 of"), std::string::npos) << e.what();
  }
  kernels::set_blas_threads(1);
}

// on_team: each part once, the caller as part 0, and what the caller wrote before it visible to the
// team, what the team wrote visible after it. Under ThreadSanitizer (make tsan) this is also the
// check of the hand-offs (parallel.cc): a report here (the process stops, halt_on_error=1) would be
// a race between the caller and a helper.
TEST(OnTeam, EachThreadOnceAndTheCallersWritesSeenBothWays) {
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 50; ++round) {  // the same pool threads, region after region
    std::vector<int> in(64), out(64, -1), seen(4, 0);
    for (int i = 0; i < 64; ++i) in[i] = round * 100 + i;  // written by the caller just before
    std::atomic<int> size{0};
    bool caller_is_zero = false;
    kernels::on_team(4, [&](int t, int nt) {
      size = nt;
      ++seen[t];  // one element per thread: no two threads write the same one
      if (t == 0) caller_is_zero = std::this_thread::get_id() == caller;
      for (int i = 64 * t / nt; i < 64 * (t + 1) / nt; ++i) out[i] = in[i] + 1;
    });
    ASSERT_EQ(size.load(), 4) << "every part runs, whoever runs it";
    EXPECT_TRUE(caller_is_zero);
    for (int t = 0; t < 4; ++t) ASSERT_EQ(seen[t], t < size.load() ? 1 : 0) << t;
    for (int i = 0; i < 64; ++i) ASSERT_EQ(out[i], round * 100 + i + 1) << i;  // read by the caller just after
    out.assign(64, 0);  // and written again, after the team's writes
  }
  int ran = 0;
  kernels::on_team(1, [&](int t, int nt) { ran += (t == 0 && nt == 1); });
  EXPECT_EQ(ran, 1) << "a team of one runs on the caller";
}

// One call of a team of `team`: each part writes its own slots (plain stores) and counts itself.
void check_one_call(int team, int call) {
  std::vector<int> runs(static_cast<size_t>(team), 0), seen_nt(static_cast<size_t>(team), 0);
  std::vector<int> values(static_cast<size_t>(team) * 100, 0);
  kernels::on_team(team, [&](int t, int nt) {
    ++runs[static_cast<size_t>(t)];
    seen_nt[static_cast<size_t>(t)] = nt;
    for (int i = 0; i < 100; ++i) values[static_cast<size_t>(t) * 100 + i] = call + t + i;
  });
  for (int t = 0; t < team; ++t) {
    ASSERT_EQ(runs[static_cast<size_t>(t)], 1) << "team " << team << " part " << t << " call " << call;
    ASSERT_EQ(seen_nt[static_cast<size_t>(t)], team);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(values[static_cast<size_t>(t) * 100 + i], call + t + i);
  }
}

TEST(OnTeam, EveryPartOnceWhetherHelpersAreAwakeOrAsleep) {
  for (int team : {1, 2, 3, 4})
    for (int call = 0; call < 2000; ++call) check_one_call(team, call);  // back to back: helpers awake
  for (int call = 0; call < 20; ++call) {
    // Calls 300 us apart (the helpers still spinning) and 5 ms apart (longer than a helper spins,
    // 2 ms: it is asleep, then woken, or its part taken back).
    std::this_thread::sleep_for(std::chrono::microseconds(call % 2 ? 300 : 5000));
    check_one_call(2, call);
    check_one_call(3, call);
  }
}

TEST(OnTeam, HelpersRunPartsOnTheirOwnThreadsAndOneThreadEach) {
  // A sleeping helper's parts run on the caller until the helper is scheduled again, which can take
  // a while on a busy machine: call until parts have run on a helper 100 times (or 20 s passed).
  kernels::set_blas_threads(2);
  const std::thread::id caller = std::this_thread::get_id();
  int off_caller = 0, helper_team = 0, inside_team = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (off_caller < 100 && std::chrono::steady_clock::now() < deadline) {
    std::thread::id part1;
    int team1 = 0;
    kernels::on_team(2, [&](int t, int) {
      if (t == 0) {
        EXPECT_EQ(std::this_thread::get_id(), caller) << "part 0 is the caller's";
        inside_team = std::max(inside_team, kernels::blas_team_size());
      } else {
        part1 = std::this_thread::get_id();
        team1 = kernels::blas_team_size();
      }
    });
    if (part1 != caller) {
      ++off_caller;
      helper_team = std::max(helper_team, team1);
    }
  }
  EXPECT_EQ(kernels::blas_team_size(), 2);
  kernels::set_blas_threads(1);
  EXPECT_EQ(off_caller, 100) << "parts seldom or never ran on a helper";
  EXPECT_EQ(helper_team, 1) << "a helper's products must run on the helper alone";
  EXPECT_EQ(inside_team, 1) << "products inside a part run on its thread alone";
}

TEST(OnTeam, ACallFromInsideAPartRunsOnItsThread) {
  std::vector<int> inner(4, 0);
  kernels::on_team(2, [&](int t, int) {
    if (t != 0) return;
    const std::thread::id here = std::this_thread::get_id();
    kernels::on_team(4, [&](int u, int nt) {
      EXPECT_EQ(std::this_thread::get_id(), here);
      EXPECT_EQ(nt, 4);
      ++inner[static_cast<size_t>(u)];
    });
  });
  EXPECT_EQ(inner, std::vector<int>(4, 1));
}

TEST(OnTeam, AnExceptionFromTheCallersPartComesOutAfterEveryPartEnded) {
  std::vector<std::atomic<int>> ran(2);
  try {
    kernels::on_team(2, [&](int t, int) {
      if (t == 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // still running at the throw
      ran[static_cast<size_t>(t)] = 1;
      if (t == 0) throw Error("part 0 failed");
    });
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "part 0 failed");
  }
  EXPECT_EQ(ran[1].load(), 1) << "part 1 ended before the exception came out";
  check_one_call(2, 0);  // and the team still works
}

// on_openmp: fn runs once, on the caller; oneDNN goes back to one thread afterwards, also when fn
// throws; the caller's team (sent to sleep) works again at once.
TEST(OnTeam, OnOpenmpRunsOnTheCallerAndHandsTheCoresBack) {
  kernels::set_blas_threads(2);
  check_one_call(2, 0);  // helpers started
  const std::thread::id caller = std::this_thread::get_id();
  int runs = 0;
  kernels::on_openmp(2, [&] {
    ++runs;
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_THROW(kernels::on_openmp(2, [] { throw Error("inside"); }), Error);
  EXPECT_EQ(kernels::blas_team_size(), 2);
  for (int call = 0; call < 100; ++call) check_one_call(2, call);
  // A product big enough for on_openmp (2^30 multiply-adds) agrees with the same product on one
  // thread (oneDNN's threads may sum in another order: to 1e-3 on sums of 1,024 terms).
  const int n = 1024;
  std::vector<float> a(static_cast<size_t>(n) * n), b(static_cast<size_t>(n) * n), c1(a.size()), c2(a.size());
  Rng rng(3);
  for (auto& v : a) v = rng.uniform(-1, 1);
  for (auto& v : b) v = rng.uniform(-1, 1);
  kernels::sgemm(false, true, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c2.data(), n);
  kernels::set_blas_threads(1);
  kernels::sgemm(false, true, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c1.data(), n);
  for (size_t i = 0; i < c1.size(); ++i) ASSERT_NEAR(c1[i], c2[i], 1e-3f) << i;
  // gemm_bf16 takes the same path at that size (bf16 operands, fp32 sums).
  std::vector<uint16_t> wb(b.size());
  kernels::to_bf16(b.data(), wb.data(), static_cast<int64_t>(b.size()));
  kernels::gemm_bf16(n, n, n, a.data(), n, wb.data(), n, 0.0f, c1.data(), n);
  kernels::set_blas_threads(2);
  kernels::gemm_bf16(n, n, n, a.data(), n, wb.data(), n, 0.0f, c2.data(), n);
  kernels::set_blas_threads(1);
  for (size_t i = 0; i < c1.size(); ++i) ASSERT_NEAR(c1[i], c2[i], 1e-3f) << "bf16 " << i;
}

TEST(OnTeam, CallersEachHaveTheirOwnTeam) {
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([c] {
      for (int call = 0; call < 300; ++call) check_one_call(2 + c % 2, call);
    });
  for (auto& t : callers) t.join();  // each caller's helpers are joined as it ends
}

#if defined(__SANITIZE_THREAD__)
// TSan sees the hand-offs as they are (atomics), so it still sees a race between two parts: two of
// them writing the same value is reported (in a child process, which TSan ends with exit 66 at the
// first report). Each part waits up to 10 ms for the other to start, so the two usually overlap;
// TSan reports the race whether or not they do, as nothing orders the two writes.
TEST(OnTeam, ARaceBetweenTwoPartsIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto race = [] {
    std::vector<int> v(1, 0);
    for (int round = 0; round < 20; ++round) {
      std::atomic<int> arrived{0};
      kernels::on_team(2, [&](int t, int nt) {
        arrived.fetch_add(1, std::memory_order_relaxed);
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
        while (nt == 2 && arrived.load(std::memory_order_relaxed) < 2 && std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        v[0] = t + 1;
      });
    }
    std::exit(v[0] > 0 ? 0 : 1);
  };
  EXPECT_EXIT(race(), ::testing::ExitedWithCode(66), "ThreadSanitizer: data race");
}
#endif

}  // namespace
}  // namespace engram::core
