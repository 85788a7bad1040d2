// additive_score (fused) against its composed form affine(tanh(keys + query), v): values and
// every input's gradient, on one and two threads, at a size above the threading grain; and its
// shape errors. The row-mapped forms (additive_score's key_rows, bmm's b_batch: beams sharing their
// source's memory) against the same ops on the gathered rows.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/ops.h"
#include "engram/core/rng.h"

namespace engram::core {
namespace {

using Floats = std::vector<float>;

struct Result {
  Floats out, dk, dq, dv;
};

Result run(bool fused, int b, int s, int a, int threads) {
  kernels::set_blas_threads(threads);
  Rng rng(b * 100 + s * 10 + a);
  Floats k(b * s * a), q(b * a), v(a), seed(b * s);
  for (auto* x : {&k, &q, &v, &seed})
    for (auto& e : *x) e = rng.uniform(-2, 2);
  Graph g;
  Var K = g.variable(Tensor{k.data(), {b, s, a}}), Q = g.variable(Tensor{q.data(), {b, a}}),
      W = g.variable(Tensor{v.data(), {1, a}});
  Var out = fused ? additive_score(K, Q, W)
                  : reshape(affine(tanh(add(K, reshape(Q, {b, 1, a}))), W), {b, s});
  g.backward(out, seed.data());
  auto vec = [](Var x, const float* p) { return Floats(p, p + x.numel()); };
  Result r{vec(out, out.data()), vec(K, K.grad()), vec(Q, Q.grad()), vec(W, W.grad())};
  kernels::set_blas_threads(1);
  return r;
}

void expect_close(const Floats& x, const Floats& y, const char* what) {
  ASSERT_EQ(x.size(), y.size()) << what;
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 2e-5 * (1 + std::fabs(y[i]))) << what << " " << i;
}

TEST(AdditiveScore, MatchesTheComposedFormInValueAndGradient) {
  for (auto [b, s, a] : {std::tuple{1, 1, 1}, std::tuple{3, 5, 7}, std::tuple{16, 20, 128}}) {
    const Result f = run(true, b, s, a, 1), c = run(false, b, s, a, 1);
    expect_close(f.out, c.out, "value");
    expect_close(f.dk, c.dk, "dkeys");
    expect_close(f.dq, c.dq, "dquery");
    expect_close(f.dv, c.dv, "dv");
  }
}

TEST(AdditiveScore, TwoThreadsGiveTheSameBitsAsOne) {
  const Result one = run(true, 16, 20, 128, 1), two = run(true, 16, 20, 128, 2);  // 41k values per pass
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.dk, two.dk);
  EXPECT_EQ(one.dq, two.dq);
  EXPECT_EQ(one.dv, two.dv);
}

TEST(AdditiveScore, ShapeErrors) {
  Graph g;
  Var k = g.zeros({2, 3, 4}), q = g.zeros({2, 4}), v = g.zeros({1, 4});
  EXPECT_THROW(additive_score(g.zeros({2, 4}), q, v), Error);
  EXPECT_THROW(additive_score(k, g.zeros({3, 4}), v), Error);
  EXPECT_THROW(additive_score(k, q, g.zeros({2, 4})), Error);
  EXPECT_THROW(additive_score(k, q, g.zeros({1, 5})), Error);
  EXPECT_EQ(additive_score(k, q, g.zeros({4})).shape(), (Shape{2, 3}));
}

// Query row i reads row rows[i] of keys / values [Bm, S, ·] (plus per-row extra key terms): the
// same bits as the ops on the rows gathered first, on one and two threads; an index outside Bm and
// a graph that wants gradients are refused.
TEST(AdditiveScore, KeyRowsAndBmmByIndexEqualTheOpsOnGatheredRows) {
  constexpr int kSources = 3, kS = 20, kA = 128, kC = 24;
  const std::vector<int32_t> rows = {2, 2, 0, 1, 1, 1, 0, 2, 2, 0, 1, 0, 2, 1, 0, 0, 2};  // 17 rows
  const int n = static_cast<int>(rows.size());
  Rng rng(5);
  Floats k(kSources * kS * kA), vals(kSources * kS * kC), q(n * kA), w(kA), al(n * kS);
  for (auto* x : {&k, &vals, &q, &w, &al})
    for (auto& e : *x) e = rng.uniform(-2, 2);
  for (int threads : {1, 2}) {
    kernels::set_blas_threads(threads);
    Graph g(false);
    Var K = g.input(Tensor{k.data(), {kSources, kS, kA}}), V = g.input(Tensor{vals.data(), {kSources, kS, kC}}),
        Q = g.input(Tensor{q.data(), {n, kA}}), W = g.input(Tensor{w.data(), {1, kA}}),
        alpha = g.input(Tensor{al.data(), {n, 1, kS}});
    const Var by_index = additive_score(K, Q, W, rows.data());
    const Var gathered = additive_score(select_rows(K, rows), Q, W);
    ASSERT_EQ(by_index.shape(), (Shape{n, kS}));
    EXPECT_EQ(Floats(by_index.data(), by_index.data() + by_index.numel()),
              Floats(gathered.data(), gathered.data() + gathered.numel()));
    // Per-row extra key terms (coverage features) added inside.
    Floats ex(static_cast<size_t>(n) * kS * kA);
    for (auto& e : ex) e = rng.uniform(-1, 1);
    const Var E = g.input(Tensor{ex.data(), {n, kS, kA}});
    const Var with_extra = additive_score(K, Q, W, rows.data(), E);
    const Var added = additive_score(add(select_rows(K, rows), E), Q, W);
    EXPECT_EQ(Floats(with_extra.data(), with_extra.data() + with_extra.numel()),
              Floats(added.data(), added.data() + added.numel()));
    EXPECT_THROW(additive_score(K, Q, W, nullptr, E), Error);  // extra terms only with key rows
    const Var ctx = bmm(alpha, V, false, false, rows.data()), ctx_gathered = bmm(alpha, select_rows(V, rows));
    ASSERT_EQ(ctx.shape(), (Shape{n, 1, kC}));
    EXPECT_EQ(Floats(ctx.data(), ctx.data() + ctx.numel()),
              Floats(ctx_gathered.data(), ctx_gathered.data() + ctx_gathered.numel()));
    const Var dot = bmm(reshape(Q, {n, 1, kA}), K, false, true, rows.data());
    const Var dot_gathered = bmm(reshape(Q, {n, 1, kA}), select_rows(K, rows), false, true);
    EXPECT_EQ(Floats(dot.data(), dot.data() + dot.numel()),
              Floats(dot_gathered.data(), dot_gathered.data() + dot_gathered.numel()));
    std::vector<int32_t> bad = rows;
    bad[3] = kSources;
    EXPECT_THROW(additive_score(K, Q, W, bad.data()), Error);
    EXPECT_THROW(bmm(alpha, V, false, false, bad.data()), Error);
  }
  kernels::set_blas_threads(1);
  Graph train;
  Var K = train.variable(Tensor{k.data(), {kSources, kS, kA}}), Q = train.variable(Tensor{q.data(), {n, kA}}),
      W = train.variable(Tensor{w.data(), {1, kA}});
  EXPECT_THROW(additive_score(K, Q, W, rows.data()), Error);
  EXPECT_THROW(bmm(reshape(Q, {n, 1, kA}), K, false, true, rows.data()), Error);
}

}  // namespace
}  // namespace engram::core
