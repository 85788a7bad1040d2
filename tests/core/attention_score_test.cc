// additive_score (fused) against its composed form affine(tanh(keys + query), v): values and
// every input's gradient, on one and two threads, at a size above the threading grain; and its
// shape errors.
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

}  // namespace
}  // namespace engram::core
