// Engine tests: Shape and Tensor basics, the Arena's alignment and reuse, the Graph tape
// (gradient accumulation, inference mode, leaf buffers, thread independence) and Rng determinism.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "engram/core/kernels/blas.h"
#include "engram/core/ops.h"
#include "engram/core/rng.h"

namespace engram::core {
namespace {

using Floats = std::vector<float>;

Floats grads(Var v) { return v.grad() ? Floats(v.grad(), v.grad() + v.numel()) : Floats{}; }

// ---------------------------------------------------------------- Shape / Tensor

TEST(ShapeTest, ScalarAndDims) {
  Shape scalar;
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.str(), "[]");
  Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.dim(-1), 4);
  EXPECT_EQ(s.dim(0), 2);
  EXPECT_EQ(s.norm_axis(-3), 0);
  EXPECT_EQ(s.last(), 4);
  EXPECT_EQ(s.rows(), 6);
  EXPECT_EQ(s.str(), "[2, 3, 4]");
  EXPECT_EQ(fmt::format("{}", s), "[2, 3, 4]");
  EXPECT_EQ(s, Shape({2, 3, 4}));
  EXPECT_NE(s, Shape({2, 3}));
  EXPECT_NE(s, Shape({2, 3, 5}));
  std::vector<int64_t> dims = {5, 0};
  Shape e = Shape::from(dims.begin(), dims.end());
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.rows(), 0);
}

TEST(ShapeTest, InvalidShapesAndAxesThrow) {
  EXPECT_THROW(Shape({1, 2, 3, 4, 5}), engram::Error);
  EXPECT_THROW(Shape({2, -1}), engram::Error);
  Shape s{2, 3};
  EXPECT_THROW(s.norm_axis(2), engram::Error);
  EXPECT_THROW(s.norm_axis(-3), engram::Error);
  EXPECT_THROW(s.dim(5), engram::Error);
  try {
    s.norm_axis(7);
    ADD_FAILURE() << "no error";
  } catch (const engram::Error& err) {
    EXPECT_STREQ(err.what(), "axis 7 out of range for shape [2, 3]");
  }
}

TEST(TensorTest, ViewsShareData) {
  Floats buf = {0, 1, 2, 3, 4, 5};
  Tensor t{buf.data(), {3, 2}};
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.at(2, 1), 5);
  Tensor flat = t.reshaped({6});
  EXPECT_EQ(flat.data, t.data);
  EXPECT_THROW(t.reshaped({4}), engram::Error);
  Tensor r = t.rows(1, 3);
  EXPECT_EQ(r.shape, Shape({2, 2}));
  EXPECT_EQ(r.data, buf.data() + 2);
  EXPECT_EQ(r[0], 2);
  EXPECT_THROW(t.rows(2, 4), engram::Error);
  EXPECT_THROW(t.rows(2, 1), engram::Error);
  r.fill(7);
  EXPECT_EQ(buf, Floats({0, 1, 7, 7, 7, 7}));
  r.zero();
  EXPECT_EQ(buf, Floats({0, 1, 0, 0, 0, 0}));
  Floats other = {9, 8, 7, 6};
  r.copy_from(Tensor{other.data(), {4}});
  EXPECT_EQ(buf, Floats({0, 1, 9, 8, 7, 6}));
  EXPECT_THROW(r.copy_from(Tensor{other.data(), {3}}), engram::Error);
}

// ---------------------------------------------------------------- Arena

TEST(ArenaTest, AllocationsAre64ByteAlignedAndDisjoint) {
  Arena arena(4096);
  std::vector<std::pair<char*, size_t>> blocks;
  for (size_t bytes : {1, 3, 64, 65, 100, 1000, 4, 0, 2048}) {
    auto* p = static_cast<char*>(arena.allocate(bytes));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes << " bytes";
    for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<char>(blocks.size());
    blocks.emplace_back(p, bytes);
  }
  for (size_t k = 0; k < blocks.size(); ++k)
    for (size_t i = 0; i < blocks[k].second; ++i) ASSERT_EQ(blocks[k].first[i], static_cast<char>(k));
  EXPECT_GE(arena.used(), size_t{1 + 3 + 64 + 65 + 100 + 1000 + 4 + 2048});
}

// An arena hands out at most its limit between resets: the allocation that would pass it is an
// engram::Error naming the limit (a batch too large for the machine, not an OOM kill); a reset
// starts the count again. The default limit is 3/4 of the machine's physical memory.
TEST(ArenaTest, AllocationsPastTheLimitAreAnErrorUntilTheReset) {
  Arena arena(4096, 10000);
  EXPECT_NO_THROW(arena.allocate(6400));
  EXPECT_NO_THROW(arena.allocate(3584));  // 9,984 bytes: within the limit
  try {
    arena.allocate(1);  // 64 bytes once aligned: past it
    ADD_FAILURE() << "no error past the limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("over its limit of 0.00 GiB"), std::string::npos) << e.what();
  }
  EXPECT_THROW(arena.allocate(size_t{1} << 62), Error);  // far past it (no overflow of the count)
  arena.reset();
  EXPECT_NO_THROW(arena.allocate(9000));
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  EXPECT_EQ(memory_limit(), static_cast<size_t>(pages) / 4 * 3 * static_cast<size_t>(page));
}

// A destroyed arena's blocks serve the next arena (no fresh pages from the OS for a Graph made per
// batch), blocks more than twice the size asked for are left in the cache, and AddressSanitizer
// builds, which keep no cache, get fresh blocks that are still aligned and usable.
TEST(ArenaTest, ADestroyedArenasBlocksServeTheNextArena) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool cached = false;
#else
  constexpr bool cached = true;
#endif
  constexpr size_t kBig = size_t{3} << 20;  // a size no other arena of this test asks for
  void* first = nullptr;
  {
    Arena a(kBig);
    first = a.allocate(64);
    static_cast<char*>(first)[0] = 1;
  }
  Arena small(kBig / 4);  // the cached block is more than twice this: not taken
  EXPECT_NE(small.allocate(64), first);
  EXPECT_LT(small.capacity(), kBig);
  Arena b(kBig);
  void* again = b.allocate(64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again) % 64, 0u);
  if (cached) {
    EXPECT_EQ(again, first) << "the block of the destroyed arena";
  }
  static_cast<char*>(again)[kBig - 65] = 2;
  EXPECT_GE(b.capacity(), kBig);
}

// Arenas made and destroyed on four threads at once share the block cache (make tsan runs this):
// every arena's memory holds what its thread wrote until the arena dies.
TEST(ArenaTest, ThreadsShareTheBlockCacheSafely) {
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &bad] {
      for (int i = 0; i < 200; ++i) {
        Arena a(size_t{1} << (16 + (i + t) % 4));  // 64 KiB to 512 KiB
        const size_t n = size_t{4096} << ((i + t) % 4);
        auto* p = static_cast<unsigned char*>(a.allocate(n));
        std::memset(p, t + 1, n);
        for (size_t k = 0; k < n; k += 97)
          if (p[k] != t + 1) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(ArenaTest, ResetKeepsCapacityAndASecondCycleDoesNotGrowIt) {
  Arena arena(1024);
  auto cycle = [&] {
    for (int i = 0; i < 20; ++i) {
      float* p = arena.floats(300);  // 1,200 bytes each: spills past the first block
      p[0] = p[299] = 1.0f;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    }
  };
  cycle();
  const size_t used = arena.used();
  EXPECT_GT(arena.capacity(), size_t{1024});
  arena.reset();
  EXPECT_EQ(arena.used(), 0u);
  const size_t capacity = arena.capacity();
  EXPECT_GE(capacity, used);
  float* first = arena.floats(300);
  arena.reset();
  EXPECT_EQ(arena.floats(300), first) << "memory is reused after reset";
  arena.reset();
  cycle();
  EXPECT_EQ(arena.used(), used);
  EXPECT_EQ(arena.capacity(), capacity) << "an identical cycle must fit in the merged block";
  arena.reset();
  EXPECT_EQ(arena.capacity(), capacity);
}

// ---------------------------------------------------------------- Graph

TEST(GraphTest, AVarUsedTwiceAccumulatesItsGradient) {
  Graph g;
  Floats xv = {1, -2, 3};
  Var x = g.variable(Tensor{xv.data(), {3}});
  g.backward(sum_all(mul(x, x)));  // d/dx sum x^2 = 2x
  EXPECT_EQ(grads(x), Floats({2, -4, 6}));

  Graph h;
  Var y = h.variable(Tensor{xv.data(), {3}});
  Var t = tanh(y);
  h.backward(sum_all(add(scale(y, 3.0f), t)));  // two branches: 3 + (1 - tanh^2)
  for (int i = 0; i < 3; ++i) {
    const float th = std::tanh(xv[i]);
    EXPECT_NEAR(y.grad()[i], 3.0f + 1.0f - th * th, 1e-6f);
  }
}

// Graph::weight_grad: a parameter used by three steps (4 rows each) gets dW = sum over the
// steps of dyᵀ x, summed once at the end of backward(); a weight computed from a parameter (here
// 2 W, which has its own backward) gets its terms at once, so its backward passes them on; a
// graph reset for the next batch starts from no deferred rows.
TEST(GraphTest, WeightGradientRowsOfManyStepsArriveByTheEndOfBackward) {
  constexpr int kRows = 4, kIn = 3, kOut = 2, kSteps = 3;
  Rng rng(4);
  Floats wv(kOut * kIn), xv(kSteps * kRows * kIn);
  for (auto* v : {&wv, &xv})
    for (auto& x : *v) x = rng.uniform(-1, 1);
  // loss = sum over steps of sum(y_t * c), y_t = x_t Wᵀ, c[r, o] = 1 + o: dW[o, p] = (1 + o) sum x[., p]
  Floats col(kIn, 0.0f);
  for (int i = 0; i < kSteps * kRows; ++i)
    for (int p = 0; p < kIn; ++p) col[p] += xv[i * kIn + p];
  Floats cv(kRows * kOut);
  for (int r = 0; r < kRows; ++r)
    for (int o = 0; o < kOut; ++o) cv[r * kOut + o] = 1.0f + o;
  Graph g;
  for (bool computed : {false, true})
    for (int round = 0; round < 2; ++round) {
      Floats wg(kOut * kIn, 0.0f);
      g.reset();
      Var w = g.leaf(Tensor{wv.data(), {kOut, kIn}}, wg.data());
      Var used = computed ? scale(w, 2.0f) : w;
      Var loss;
      for (int t = 0; t < kSteps; ++t) {
        Var y = affine(g.input(Tensor{xv.data() + t * kRows * kIn, {kRows, kIn}}), used);
        Var term = sum_all(mul(y, g.constant(Tensor{cv.data(), {kRows, kOut}})));
        loss = t == 0 ? term : add(loss, term);
      }
      g.backward(loss);
      for (int o = 0; o < kOut; ++o)
        for (int p = 0; p < kIn; ++p)
          EXPECT_NEAR(wg[o * kIn + p], (computed ? 2.0f : 1.0f) * (1.0f + o) * col[p], 1e-5f)
              << "computed " << computed << " round " << round << " o " << o << " p " << p;
    }
}

TEST(GraphTest, InferenceModeRecordsNoBackwardAndAllocatesNoGrads) {
  Floats wv = {0.5f, -1.0f, 2.0f, 0.25f}, wg(4, 0.0f), xv = {1, 2};
  Graph g(false);
  EXPECT_FALSE(g.grad_enabled());
  Var w = g.leaf(Tensor{wv.data(), {2, 2}}, wg.data());
  Var x = g.input(Tensor{xv.data(), {1, 2}});
  Var y = sum_all(tanh(affine(x, w)));
  EXPECT_FALSE(w.needs_grad());
  EXPECT_EQ(w.grad(), nullptr);
  for (size_t id = 0; id < g.size(); ++id) {
    EXPECT_EQ(g.node(static_cast<int32_t>(id)).backward, nullptr) << id;
    EXPECT_EQ(g.node(static_cast<int32_t>(id)).grad, nullptr) << id;
    EXPECT_FALSE(g.node(static_cast<int32_t>(id)).needs_grad) << id;
  }
  EXPECT_EQ(g.grad(w.id), nullptr);
  EXPECT_THROW(g.backward(y), engram::Error);
  EXPECT_EQ(wg, Floats(4, 0.0f));
  // Same value as with gradients on.
  Graph t;
  Var wt = t.leaf(Tensor{wv.data(), {2, 2}}, wg.data());
  Var yt = sum_all(tanh(affine(t.input(Tensor{xv.data(), {1, 2}}), wt)));
  EXPECT_EQ(y.data()[0], yt.data()[0]);
}

TEST(GraphTest, NoGradScopeDisablesAndRestores) {
  Graph g;
  Floats xv = {1, 2};
  Var x = g.variable(Tensor{xv.data(), {2}});
  EXPECT_TRUE(x.needs_grad());
  const size_t before = g.arena().used();
  {
    NoGrad no_grad(g);
    EXPECT_FALSE(g.grad_enabled());
    Var y = tanh(x);
    EXPECT_FALSE(y.needs_grad());
    EXPECT_EQ(g.node(y.id).backward, nullptr);
    Var z = scale(y, 2.0f);
    EXPECT_EQ(g.arena().used() - before, 2 * 64u) << "two 8-byte values, no gradient buffers";
    EXPECT_FALSE(z.needs_grad());
  }
  EXPECT_TRUE(g.grad_enabled());
  EXPECT_TRUE(tanh(x).needs_grad());
}

// Packed fp32 weights (Graph::use_packed_weights): with gradients off, products of up to
// kernels::kPackedRows rows (3 and kPackedRows) on a listed weight read the packed copy (the same
// fp32 values: results agree to rounding), with and without a bias; more rows (kPackedRows + 1),
// other weights and gradients-on graphs keep the plain path;
// bf16 weights, when also set, take precedence.
TEST(GraphTest, PackedFp32WeightsServeFewRowProductsWithoutGradients) {
  Rng rng(6);
  const int n = 70, k = 40;
  constexpr int kMany = kernels::kPackedRows + 1;
  Floats params(n * k), xs(kMany * k), bias(n);
  for (auto* v : {&params, &xs, &bias})
    for (auto& e : *v) e = rng.uniform(-1, 1);
  const PackedWeights::Matrix listed[] = {{0, n, k}};
  const PackedWeights packed(params, listed);
  EXPECT_EQ(packed.find(params.data(), n, k) != nullptr, kernels::packed_f32_kernel());
  EXPECT_EQ(packed.find(params.data(), k, n), nullptr) << "another shape";
  Graph g(false);
  Var w = g.input(Tensor{params.data(), {n, k}});
  Var b = g.input(Tensor{bias.data(), {n}});
  auto run = [&](int rows, bool with_bias) {
    Var y = affine(g.input(Tensor{xs.data(), {rows, k}}), w, with_bias ? b : Var{});
    return Floats(y.data(), y.data() + y.numel());
  };
  const Floats plain_3 = run(3, false), plain_3b = run(3, true), plain_all = run(kMany - 1, false),
               plain_many = run(kMany, false);
  g.use_packed_weights(&packed);
  const Floats packed_3 = run(3, false), packed_3b = run(3, true), packed_all = run(kMany - 1, false);
  for (size_t i = 0; i < plain_3.size(); ++i) {
    EXPECT_NEAR(packed_3[i], plain_3[i], 1e-5) << i;
    EXPECT_NEAR(packed_3b[i], plain_3b[i], 1e-5) << i;
  }
  for (size_t i = 0; i < plain_all.size(); ++i) EXPECT_NEAR(packed_all[i], plain_all[i], 1e-5) << i;
  // The packed path really ran: the packed copy does not follow later changes to the weights.
  for (int p = 0; p < k; ++p) params[p] += 1.0f;  // output 0's weights
  const Floats from_snapshot = run(3, false), from_snapshot_all = run(kMany - 1, false),
               from_plain_many = run(kMany, false);
  g.use_packed_weights(nullptr);
  const Floats from_changed = run(3, false);
  g.use_packed_weights(&packed);
  for (int p = 0; p < k; ++p) params[p] -= 1.0f;
  EXPECT_GT(std::fabs(from_changed[0] - plain_3[0]), 0.1f);
  EXPECT_GT(std::fabs(from_plain_many[0] - plain_many[0]), 0.1f) << "kPackedRows + 1 rows: the plain product";
  if (kernels::packed_f32_kernel()) {
    EXPECT_NEAR(from_snapshot[0], plain_3[0], 1e-5) << "read the packed copy";
    EXPECT_NEAR(from_snapshot_all[0], plain_all[0], 1e-5) << "kPackedRows rows: read the packed copy";
  }
  g.set_grad_enabled(true);
  EXPECT_EQ(run(3, false), plain_3) << "gradients on: the plain product";
  g.set_grad_enabled(false);
  const Bf16Weights mirror(params);
  g.use_bf16_weights(&mirror);
  const Floats bf16_3 = run(3, false);
  g.use_packed_weights(nullptr);
  EXPECT_EQ(run(3, false), bf16_3) << "bf16 weights take precedence over the packed fp32 copy";
}

// bf16 weights (Graph::use_bf16_weights): only with gradients off, only for weights inside the
// mirrored buffer; few rows (3: gemv.cc) and many (9: oneDNN's bf16 matmul) alike; gru_cell's
// recurrent product follows too.
TEST(GraphTest, Bf16WeightsServeProductsWithoutGradients) {
  Rng rng(5);
  const int n = 40, k = 70;
  Floats params(n * k + n * 5), other(n * k), xs(9 * k);
  for (auto* v : {&params, &other, &xs})
    for (auto& e : *v) e = rng.uniform(-1, 1);
  const Bf16Weights mirror(params);
  Graph g(false);
  Var w = g.input(Tensor{params.data(), {n, k}});
  Var w_other = g.input(Tensor{other.data(), {n, k}});
  auto run = [&](Var weight, int rows) {
    Var y = affine(g.input(Tensor{xs.data(), {rows, k}}), weight);
    return Floats(y.data(), y.data() + y.numel());
  };
  const Floats fp32_3 = run(w, 3), fp32_9 = run(w, 9), fp32_other = run(w_other, 3);
  g.use_bf16_weights(&mirror);
  for (auto [rows, fp32] : {std::pair{3, &fp32_3}, std::pair{9, &fp32_9}}) {
    const Floats bf16 = run(w, rows);
    double diff = 0;
    for (size_t i = 0; i < bf16.size(); ++i) {
      diff = std::max(diff, double(std::fabs(bf16[i] - (*fp32)[i])));
      EXPECT_NEAR(bf16[i], (*fp32)[i], 0.1) << rows << " rows, " << i;  // |x w| sums ~ 17: rounding ~ 0.07 at most
    }
    EXPECT_GT(diff, 0.0) << rows << " rows: the bf16 copy was not used";
  }
  EXPECT_EQ(run(w_other, 3), fp32_other) << "a weight outside the mirrored buffer: fp32";
  // Listed as a matrix, the weight is also packed; few-row products then take the packed kernel
  // (same bf16 operands, another summation order) where the CPU has AVX512-BF16.
  const Bf16Weights::Matrix listed[] = {{0, n, k}};
  const Bf16Weights packed_mirror(params, listed);
  EXPECT_EQ(packed_mirror.find_packed(params.data(), n, k) != nullptr, kernels::packed_bf16_kernel());
  EXPECT_EQ(packed_mirror.find_packed(params.data(), k, n), nullptr) << "another shape";
  EXPECT_EQ(packed_mirror.find_packed(params.data() + 1, n, k), nullptr) << "not a matrix start";
  const Floats flat_3 = run(w, 3);
  g.use_bf16_weights(&packed_mirror);
  const Floats packed_3 = run(w, 3);
  for (size_t i = 0; i < flat_3.size(); ++i) EXPECT_NEAR(packed_3[i], flat_3[i], 1e-4) << i;
  // With a bias: the packed kernel adds it in its epilogue, the other paths before the product.
  Floats bias(n);
  for (auto& e : bias) e = rng.uniform(-1, 1);
  Var b = g.input(Tensor{bias.data(), {n}});
  auto run_bias = [&] {
    Var y = affine(g.input(Tensor{xs.data(), {3, k}}), w, b);
    return Floats(y.data(), y.data() + y.numel());
  };
  const Floats packed_b = run_bias();
  g.use_bf16_weights(&mirror);
  const Floats flat_b = run_bias();
  for (size_t i = 0; i < packed_b.size(); ++i) {
    EXPECT_NEAR(packed_b[i], packed_3[i] + bias[i % n], 1e-5) << i;
    EXPECT_NEAR(packed_b[i], flat_b[i], 1e-4) << i;
  }
  g.use_bf16_weights(&mirror);
  g.set_grad_enabled(true);
  EXPECT_EQ(run(w, 3), fp32_3) << "gradients on: fp32";
  g.set_grad_enabled(false);
  // gru_cell: h W_hhᵀ reads the mirror too (W_hh [3H, H] inside `params`).
  const int h = 5;
  Var xw = g.input(Tensor{xs.data(), {2, 3 * h}});
  Var h0 = g.input(Tensor{xs.data() + 100, {2, h}});
  Var w_hh = g.input(Tensor{params.data() + n * k, {3 * h, h}});
  const Floats with = [&] { Var o = gru_cell(xw, h0, w_hh, Var{}); return Floats(o.data(), o.data() + o.numel()); }();
  g.use_bf16_weights(nullptr);
  const Floats without = [&] { Var o = gru_cell(xw, h0, w_hh, Var{}); return Floats(o.data(), o.data() + o.numel()); }();
  double cell_diff = 0;
  for (size_t i = 0; i < with.size(); ++i) cell_diff = std::max(cell_diff, double(std::fabs(with[i] - without[i])));
  EXPECT_GT(cell_diff, 0.0);
  EXPECT_LT(cell_diff, 0.02);
}

// Several buffers in one Bf16Weights (an ensemble's stores decoded in one graph): a product reads
// the bf16 copy of whichever buffer holds its weight, each as a one-buffer copy would give;
// weights outside every buffer stay fp32; overlapping buffers are refused.
TEST(GraphTest, Bf16WeightsOfSeveralBuffers) {
  Rng rng(8);
  const int n = 24, k = 40;
  Floats first(n * k), second(n * k + 7), outside(n * k), xs(3 * k);
  for (auto* v : {&first, &second, &outside, &xs})
    for (auto& e : *v) e = rng.uniform(-1, 1);
  const Bf16Weights::Buffer buffers[] = {{first, {{0, n, k}}}, {second, {{7, n, k}}}};
  const Bf16Weights both(buffers);
  const Bf16Weights::Matrix m0[] = {{0, n, k}}, m7[] = {{7, n, k}};
  const Bf16Weights only_first(first, m0), only_second(second, m7);
  ASSERT_NE(both.find(first.data() + 5), nullptr);
  ASSERT_NE(both.find(second.data() + 9), nullptr) << "the second buffer is found";
  EXPECT_EQ(*both.find(first.data() + 5), *only_first.find(first.data() + 5));
  EXPECT_EQ(*both.find(second.data() + 9), *only_second.find(second.data() + 9));
  EXPECT_EQ(both.find(outside.data()), nullptr);
  EXPECT_EQ(both.find_packed(second.data() + 7, n, k) != nullptr, kernels::packed_bf16_kernel());
  EXPECT_EQ(both.find_packed(second.data(), n, k), nullptr) << "not a listed matrix";
  Graph g(false);
  auto run = [&](const Bf16Weights* w, const float* weight) {
    g.use_bf16_weights(w);
    Var y = affine(g.input(Tensor{xs.data(), {3, k}}), g.input(Tensor{const_cast<float*>(weight), {n, k}}));
    return Floats(y.data(), y.data() + y.numel());
  };
  const Floats fp32_second = run(nullptr, second.data() + 7);
  EXPECT_EQ(run(&both, first.data()), run(&only_first, first.data()));
  EXPECT_EQ(run(&both, second.data() + 7), run(&only_second, second.data() + 7));
  EXPECT_NE(run(&both, second.data() + 7), fp32_second) << "the second buffer's bf16 copy was read";
  EXPECT_EQ(run(&both, outside.data()), run(nullptr, outside.data()));
  const Bf16Weights::Buffer overlapping[] = {{first, {}}, {std::span<const float>(first).subspan(10, 20), {}}};
  EXPECT_THROW(Bf16Weights{overlapping}, engram::Error);
}

TEST(GraphTest, BackwardNeedsAScalarLoss) {
  Graph g;
  Floats xv = {1, 2, 3};
  Var x = g.variable(Tensor{xv.data(), {3}});
  Var y = tanh(x);
  EXPECT_THROW(g.backward(y), engram::Error);
  Floats seed = {1, -2, 0.5f};
  g.backward(y, seed.data());  // a non-scalar output takes an explicit seed
  ASSERT_NE(x.grad(), nullptr);
  for (int i = 0; i < 3; ++i) {
    const double th = std::tanh(double{xv[i]});
    EXPECT_NEAR(x.grad()[i], seed[i] * (1 - th * th), 1e-6) << i;  // seed * tanh'(x)
  }
}

TEST(GraphTest, LeafGradsAccumulateIntoCallerBuffersAcrossBackwardCalls) {
  Floats wv = {1, 2, 3}, wg(3, 0.0f), cv = {0.5f, -1, 4};
  Graph g;
  for (int step = 1; step <= 2; ++step) {
    g.reset();
    Var w = g.leaf(Tensor{wv.data(), {3}}, wg.data());
    EXPECT_EQ(w.grad(), wg.data());
    Var c = g.constant(Shape{3}, cv.data());
    g.backward(sum_all(mul(w, c)));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(wg[i], step * cv[i]) << "step " << step;
  }
  Graph other;  // a second graph adds into the same buffer too
  Var w = other.leaf(Tensor{wv.data(), {3}}, wg.data());
  other.backward(sum_all(scale(w, 2.0f)));
  EXPECT_EQ(wg, Floats({1 + 2, -2 + 2, 8 + 2}));
}

TEST(GraphTest, OpsRejectVarsOfAnotherGraph) {
  Graph a, b;
  Floats v = {1, 2};
  Var x = a.constant(Shape{2}, v.data()), y = b.constant(Shape{}, v.data());
  EXPECT_THROW(add(x, y), engram::Error);
  EXPECT_THROW(a.backward(y), engram::Error);
}

// A small model over shared read-only parameters: per-thread graph, per-thread grad buffers.
struct TinyModel {
  static constexpr int kV = 7, kD = 6, kH = 5, kT = 4;
  Floats emb, w, b;  // [V, D], [H, D], [H]
  TinyModel() {
    Rng rng(11);
    for (auto* p : {&emb, &w, &b}) p->resize(p == &emb ? kV * kD : p == &w ? kH * kD : kH);
    for (auto* p : {&emb, &w, &b})
      for (float& x : *p) x = rng.uniform(-1.0f, 1.0f);
  }
  struct Result {
    float loss;
    Floats demb, dw, db;
  };
  // loss = mean(max_t tanh(E[ids] W^T + b)^T) + sum of a slice, over several steps.
  Result run(int steps) const {
    Result r{0, Floats(emb.size(), 0.0f), Floats(w.size(), 0.0f), Floats(b.size(), 0.0f)};
    Graph g;
    for (int s = 0; s < steps; ++s) {
      g.reset();
      Var e = g.leaf(Tensor{const_cast<float*>(emb.data()), {kV, kD}}, r.demb.data());
      Var wv = g.leaf(Tensor{const_cast<float*>(w.data()), {kH, kD}}, r.dw.data());
      Var bv = g.leaf(Tensor{const_cast<float*>(b.data()), {kH}}, r.db.data());
      std::vector<int32_t> ids(kT);
      for (int t = 0; t < kT; ++t) ids[t] = (t * 3 + s) % kV;
      Var h = tanh(affine(gather_rows(e, ids), wv, bv));  // [T, H]
      Var pooled = max(transpose(h), -1);                  // [H]
      Var both = concat({pooled, sum(slice(h, 0, 1, 3), 0)}, 0);
      Var loss = mean_all(square(both));
      g.backward(loss);
      r.loss += loss.data()[0];
    }
    return r;
  }
};

TEST(GraphTest, TwoGraphsInTwoThreadsMatchASingleThreadedRun) {
  const TinyModel model;
  const TinyModel::Result want = model.run(25);
  TinyModel::Result got[2];
  std::thread t0([&] { got[0] = model.run(25); });
  std::thread t1([&] { got[1] = model.run(25); });
  t0.join();
  t1.join();
  for (const auto& r : got) {
    EXPECT_EQ(r.loss, want.loss);
    EXPECT_EQ(r.demb, want.demb);
    EXPECT_EQ(r.dw, want.dw);
    EXPECT_EQ(r.db, want.db);
  }
  bool nonzero = false;
  for (float x : want.dw) nonzero = nonzero || x != 0.0f;
  EXPECT_TRUE(nonzero);
}

// ---------------------------------------------------------------- Rng

TEST(RngTest, SameSeedSameStreamDifferentSeedsDiffer) {
  Rng a(42), b(42), c(43);
  std::vector<uint64_t> sa, sb, sc;
  for (int i = 0; i < 100; ++i) {
    sa.push_back(a.next());
    sb.push_back(b.next());
    sc.push_back(c.next());
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += sa[i] == sc[i];
  EXPECT_EQ(same, 0);
  EXPECT_EQ(std::set<uint64_t>(sa.begin(), sa.end()).size(), sa.size());
}

TEST(RngTest, ReseedRestartsEveryDistribution) {
  Rng a(5);
  std::vector<double> first;
  for (int i = 0; i < 5; ++i) first.push_back(a.normal());  // leaves a cached spare
  a.seed(5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.normal(), first[i]);
  Rng u(9);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    const float y = u.uniform(-2.0f, 3.0f);
    ASSERT_GE(y, -2.0f);
    ASSERT_LE(y, 3.0f);
    ASSERT_LT(u.below(7), 7u);
  }
  std::vector<int> p1 = {0, 1, 2, 3, 4, 5, 6, 7}, p2 = p1;
  Rng s1(3), s2(3);
  s1.shuffle(p1.begin(), p1.end());
  s2.shuffle(p2.begin(), p2.end());
  EXPECT_EQ(p1, p2);
  EXPECT_NE(p1, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7})) << "shuffle left the order as it was";
  Rng s3(4);
  std::vector<int> p3 = {0, 1, 2, 3, 4, 5, 6, 7};
  s3.shuffle(p3.begin(), p3.end());
  EXPECT_NE(p3, p1) << "another seed, another order";
  std::vector<int> sorted = p1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7}));
}

}  // namespace
}  // namespace engram::core
