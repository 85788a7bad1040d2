// Forward values and error cases of the structural op families: reduce (sum / mean / max,
// sum_all, mean_all), shape ops (reshape, transpose, permute, concat, split, slice) and index ops
// (gather_rows, scatter_add_rows, pick, select_rows). Gradients are in grad_check_test.cc; here
// a few backward results are checked exactly where the op's contract says something specific
// (first arg-max, rows untouched by a gather, views sharing their parent's gradient).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engram/core/ops.h"

namespace engram::core {
namespace ops_structure_test {

using Floats = std::vector<float>;

// A trainable leaf whose value is copied into the graph's arena.
Var variable(Graph& g, Shape s, const Floats& v) {
  Tensor t = g.alloc(s);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = v[i];
  return g.variable(t);
}
Var constant(Graph& g, Shape s, const Floats& v) { return g.constant(s, v.data()); }
// 0, 1, 2, ... in shape s.
Var iota(Graph& g, Shape s) {
  Floats v(s.numel());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return g.constant(s, v.data());
}
Floats values(Var v) { return Floats(v.data(), v.data() + v.numel()); }
Floats grads(Var v) { return v.grad() ? Floats(v.grad(), v.grad() + v.numel()) : Floats{}; }

// The message of the engram::Error `f` throws ("" and a test failure if it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const engram::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an engram::Error";
  return "";
}
// Expects `f` to throw an engram::Error whose message contains `text`.
template <class F>
void expect_error_has(F f, const std::string& text) {
  const std::string msg = error_of(f);
  EXPECT_NE(msg.find(text), std::string::npos) << "expected \"" << text << "\" in: " << msg;
}

// ---------------------------------------------------------------- reduce

TEST(Reduce, SumMeanMaxAlongEachAxisOfAMatrix) {
  Graph g;
  Var x = constant(g, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(sum(x, 0).shape(), Shape({3}));
  EXPECT_EQ(values(sum(x, 0)), Floats({5, 7, 9}));
  EXPECT_EQ(values(sum(x, 1)), Floats({6, 15}));
  EXPECT_EQ(values(sum(x, -1)), Floats({6, 15}));
  EXPECT_EQ(values(mean(x, 0)), Floats({2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(values(mean(x, -1)), Floats({2, 5}));
  EXPECT_EQ(values(max(x, 0)), Floats({4, 5, 6}));
  EXPECT_EQ(values(max(x, 1)), Floats({3, 6}));
}

TEST(Reduce, KeepdimKeepsAUnitAxis) {
  Graph g;
  Var x = iota(g, {2, 3, 4});
  EXPECT_EQ(sum(x, 1, true).shape(), Shape({2, 1, 4}));
  EXPECT_EQ(sum(x, 1).shape(), Shape({2, 4}));
  EXPECT_EQ(mean(x, -1, true).shape(), Shape({2, 3, 1}));
  EXPECT_EQ(max(x, 0, true).shape(), Shape({1, 3, 4}));
  EXPECT_EQ(values(mean(x, -1, true)), Floats({1.5f, 5.5f, 9.5f, 13.5f, 17.5f, 21.5f}));
}

TEST(Reduce, ThreeAndFourDimensional) {
  Graph g;
  Var x = iota(g, {2, 2, 2});  // [[0 1][2 3]], [[4 5][6 7]]
  EXPECT_EQ(values(sum(x, 1)), Floats({2, 4, 10, 12}));
  EXPECT_EQ(values(sum(x, 0)), Floats({4, 6, 8, 10}));
  EXPECT_EQ(values(max(x, 0)), Floats({4, 5, 6, 7}));
  EXPECT_EQ(values(max(x, -1)), Floats({1, 3, 5, 7}));
  Var y = iota(g, {2, 3, 2, 2});
  Var s = sum(y, 1);  // s[a, c, d] = sum_b y[a, b, c, d]
  ASSERT_EQ(s.shape(), Shape({2, 2, 2}));
  for (int a = 0; a < 2; ++a)
    for (int cd = 0; cd < 4; ++cd) {
      float want = 0;
      for (int b = 0; b < 3; ++b) want += static_cast<float>(a * 12 + b * 4 + cd);
      EXPECT_EQ(s.data()[a * 4 + cd], want) << a << "," << cd;
    }
}

TEST(Reduce, SumAllAndMeanAllAreScalars) {
  Graph g;
  Var x = constant(g, {2, 3}, {1, 2, 3, 4, 5, 6});
  Var s = sum_all(x), m = mean_all(x);
  EXPECT_EQ(s.shape().rank(), 0);
  EXPECT_EQ(values(s), Floats({21}));
  EXPECT_EQ(values(m), Floats({3.5f}));
  Var big = iota(g, {1000});
  EXPECT_EQ(values(sum_all(big)), Floats({499500}));
}

TEST(Reduce, MaxGradientGoesToTheFirstArgMax) {
  Graph g;
  Var x = variable(g, {2, 3}, {1, 5, 5, 7, 2, 7});
  g.backward(sum_all(max(x, 1)));  // along the last axis
  EXPECT_EQ(grads(x), Floats({0, 1, 0, 1, 0, 0}));
  Graph h;
  Var y = variable(h, {3, 2}, {5, 1, 5, 7, 2, 7});
  Var m = max(y, 0);  // along a strided axis
  EXPECT_EQ(values(m), Floats({5, 7}));
  h.backward(sum_all(m));
  EXPECT_EQ(grads(y), Floats({1, 0, 0, 1, 0, 0}));
}

TEST(Reduce, MeanBackwardSpreadsEvenly) {
  Graph g;
  Var x = variable(g, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  g.backward(sum_all(mean(x, -1)));
  EXPECT_EQ(grads(x), Floats(8, 0.25f));
}

TEST(Reduce, EmptyAxis) {
  Graph g;
  Var x = g.zeros({2, 0});
  EXPECT_EQ(values(sum(x, 1)), Floats({0, 0}));
  expect_error_has([&] { mean(x, 1); }, "empty");
  expect_error_has([&] { max(x, -1); }, "empty");
  expect_error_has([&] { mean_all(x); }, "empty");
}

TEST(Reduce, BadAxisThrows) {
  Graph g;
  Var x = iota(g, {2, 3});
  expect_error_has([&] { sum(x, 2); }, "axis 2 out of range");
  expect_error_has([&] { mean(x, -3); }, "axis -3 out of range");
  expect_error_has([&] { max(sum_all(x), 0); }, "axis 0 out of range");
}

// ---------------------------------------------------------------- reshape / transpose / permute

TEST(Shape, ReshapeIsAViewWhoseGradientAliasesItsInput) {
  Graph g;
  Var x = variable(g, {2, 3}, {1, 2, 3, 4, 5, 6});
  Var y = reshape(x, {3, 2});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(y.data(), x.data());
  Var w = constant(g, {3, 2}, {1, 2, 3, 4, 5, 6});
  g.backward(sum_all(mul(y, w)));
  ASSERT_NE(y.grad(), nullptr);
  EXPECT_EQ(y.grad(), x.grad());  // no copy and no backward pass for a view
  EXPECT_EQ(grads(x), Floats({1, 2, 3, 4, 5, 6}));
  // A slice along axis 0 of a reshape of x aliases x's gradient at its offset.
  Graph g2;
  Var x2 = variable(g2, {2, 3}, {1, 2, 3, 4, 5, 6});
  Var row = slice(reshape(x2, {3, 2}), 0, 1, 2);  // elements 2 and 3 of x2
  g2.backward(sum_all(mul(row, row)));
  EXPECT_EQ(row.grad(), x2.grad() + 2);
  EXPECT_EQ(grads(x2), Floats({0, 0, 6, 8, 0, 0}));
  expect_error_has([&] { reshape(x, {4, 2}); }, "cannot view");
}

TEST(Shape, TransposeMatrix) {
  Graph g;
  Var x = constant(g, {2, 3}, {1, 2, 3, 4, 5, 6});
  Var y = transpose(x);
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(values(y), Floats({1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values(transpose(x, 1, 0)), Floats({1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values(transpose(x, 0, 0)), Floats({1, 2, 3, 4, 5, 6}));
}

// Checks y = x permuted by order element by element (x is iota of its shape, rank 3 or 4).
void expect_permuted(Var x, Var y, std::vector<int> order) {
  const Shape& sx = x.shape();
  const int r = sx.rank();
  ASSERT_EQ(y.shape().rank(), r);
  for (int k = 0; k < r; ++k) ASSERT_EQ(y.shape()[k], sx[order[k]]);
  int64_t strides[4];
  int64_t step = 1;
  for (int i = r - 1; i >= 0; --i) {
    strides[i] = step;
    step *= sx[i];
  }
  int idx[4] = {0, 0, 0, 0};  // index into y
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    int64_t src = 0;
    for (int k = 0; k < r; ++k) src += idx[k] * strides[order[k]];
    ASSERT_EQ(y.data()[flat], x.data()[src]) << "flat index " << flat;
    for (int k = r - 1; k >= 0 && ++idx[k] == y.shape()[k]; --k) idx[k] = 0;
  }
}

TEST(Shape, TransposeAndPermuteMoveEveryElement) {
  Graph g;
  Var x = iota(g, {2, 3, 4});
  expect_permuted(x, transpose(x, 0, 2), {2, 1, 0});
  expect_permuted(x, transpose(x, -3, -2), {1, 0, 2});
  expect_permuted(x, permute(x, {2, 0, 1}), {2, 0, 1});
  expect_permuted(x, permute(x, {0, 2, 1}), {0, 2, 1});
  expect_permuted(x, permute(x, {-1, -2, -3}), {2, 1, 0});
  Var x4 = iota(g, {2, 3, 4, 5});
  expect_permuted(x4, permute(x4, {3, 1, 0, 2}), {3, 1, 0, 2});
  expect_permuted(x4, permute(x4, {1, 0, 2, 3}), {1, 0, 2, 3});
  expect_permuted(x4, transpose(x4), {0, 1, 3, 2});
  Var big = iota(g, {3, 70, 45});  // several full and partial tiles
  expect_permuted(big, transpose(big), {0, 2, 1});
  expect_permuted(big, permute(big, {2, 0, 1}), {2, 0, 1});
  Var unit = iota(g, {1, 3, 1, 2});
  expect_permuted(unit, permute(unit, {3, 2, 1, 0}), {3, 2, 1, 0});
}

TEST(Shape, PermuteBackwardIsTheInversePermutation) {
  Graph g;
  Var x = variable(g, {2, 3, 4}, Floats(24, 0.0f));
  Var y = permute(x, {2, 0, 1});
  Floats seed(24);
  for (int i = 0; i < 24; ++i) seed[i] = static_cast<float>(i);
  Var w = g.constant(y.shape(), seed.data());
  g.backward(sum_all(mul(y, w)));
  // dx[a, b, c] = w[c, a, b] = c * 6 + a * 3 + b
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(x.grad()[a * 12 + b * 4 + c], static_cast<float>(c * 6 + a * 3 + b));
}

TEST(Shape, PermuteErrors) {
  Graph g;
  Var x = iota(g, {2, 3, 4});
  expect_error_has([&] { permute(x, {0, 1}); }, "order of 2 axes");
  expect_error_has([&] { permute(x, {0, 1, 1}); }, "repeated");
  expect_error_has([&] { permute(x, {0, 1, 3}); }, "axis 3 out of range");
  expect_error_has([&] { transpose(x, 0, 5); }, "axis 5 out of range");
  expect_error_has([&] { transpose(iota(g, {4})); }, "axis -2 out of range");
}

// ---------------------------------------------------------------- concat / split / slice

TEST(Shape, ConcatAlongEachAxis) {
  Graph g;
  Var a = constant(g, {2, 2}, {1, 2, 3, 4});
  Var b = constant(g, {2, 1}, {5, 6});
  Var c = constant(g, {1, 2}, {7, 8});
  Var ab = concat({a, b}, -1);
  EXPECT_EQ(ab.shape(), Shape({2, 3}));
  EXPECT_EQ(values(ab), Floats({1, 2, 5, 3, 4, 6}));
  Var ac = concat({a, c}, 0);
  EXPECT_EQ(ac.shape(), Shape({3, 2}));
  EXPECT_EQ(values(ac), Floats({1, 2, 3, 4, 7, 8}));
  EXPECT_EQ(values(concat({a}, 1)), Floats({1, 2, 3, 4}));
  // Middle axis of [2, k, 2]; four inputs (more than Node::in holds).
  Var p = iota(g, {2, 1, 2}), q = iota(g, {2, 2, 2});
  Var m = concat({p, q, p, q}, 1);
  EXPECT_EQ(m.shape(), Shape({2, 6, 2}));
  EXPECT_EQ(values(m), Floats({0, 1, 0, 1, 2, 3, 0, 1, 0, 1, 2, 3,  //
                               2, 3, 4, 5, 6, 7, 2, 3, 4, 5, 6, 7}));
}

TEST(Shape, ConcatBackwardSplitsTheGradient) {
  Graph g;
  Var a = variable(g, {2, 1}, {0, 0});
  Var k = constant(g, {2, 1}, {0, 0});  // no gradient: must be skipped
  Var b = variable(g, {2, 2}, {0, 0, 0, 0});
  Var c = variable(g, {2, 1}, {0, 0});
  Var y = concat({a, k, b, c, a}, 1);  // [2, 6]
  Var w = constant(g, {2, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  g.backward(sum_all(mul(y, w)));
  EXPECT_EQ(grads(a), Floats({1 + 6, 7 + 12}));
  EXPECT_EQ(grads(b), Floats({3, 4, 9, 10}));
  EXPECT_EQ(grads(c), Floats({5, 11}));
  EXPECT_EQ(k.grad(), nullptr);
}

TEST(Shape, ConcatErrors) {
  Graph g;
  Var a = iota(g, {2, 2}), b = iota(g, {2, 1}), r3 = iota(g, {2, 2, 1});
  expect_error_has([&] { concat({a, b}, 0); }, "input 1 has shape [2, 1]");
  expect_error_has([&] { concat({a, r3}, 1); }, "input 1 has shape [2, 2, 1]");
  expect_error_has([&] { concat({}, 0); }, "zero tensors");
  expect_error_has([&] { concat({a, a}, 2); }, "axis 2 out of range");
  Graph other;
  Var o = iota(other, {2, 2});
  expect_error_has([&] { concat({a, o}, 0); }, "another graph");
}

TEST(Shape, SplitIntoPieces) {
  Graph g;
  Var x = iota(g, {5, 2});
  auto p = split(x, {2, 0, 3}, 0);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].shape(), Shape({2, 2}));
  EXPECT_EQ(p[1].shape(), Shape({0, 2}));
  EXPECT_EQ(values(p[0]), Floats({0, 1, 2, 3}));
  EXPECT_EQ(values(p[2]), Floats({4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(p[2].data(), x.data() + 4);  // axis-0 pieces are views
  Var y = iota(g, {2, 3});
  auto q = split(y, {1, 2}, -1);
  EXPECT_EQ(values(q[0]), Floats({0, 3}));
  EXPECT_EQ(values(q[1]), Floats({1, 2, 4, 5}));
  expect_error_has([&] { split(y, {1, 1}, 1); }, "sizes sum to 2");
  expect_error_has([&] { split(y, {4, -1}, 1); }, "negative size -1");
  expect_error_has([&] { split(y, {1, 1}, 2); }, "axis 2 out of range");
}

TEST(Shape, SliceValuesViewsAndGradients) {
  Graph g;
  Var x = iota(g, {4, 3});
  Var s0 = slice(x, 0, 1, 3);
  EXPECT_EQ(s0.shape(), Shape({2, 3}));
  EXPECT_EQ(s0.data(), x.data() + 3);
  EXPECT_EQ(values(s0), Floats({3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(values(slice(x, -1, 1, 3)), Floats({1, 2, 4, 5, 7, 8, 10, 11}));
  EXPECT_EQ(slice(x, 1, 2, 2).numel(), 0);
  Var y = iota(g, {2, 3, 2});
  EXPECT_EQ(values(slice(y, 1, 1, 2)), Floats({2, 3, 8, 9}));
  Var unit = iota(g, {1, 4, 2});  // every dim before axis 1 is 1: also a view
  EXPECT_EQ(slice(unit, 1, 2, 4).data(), unit.data() + 4);

  Graph h;
  Var v = variable(h, {3, 2}, {1, 2, 3, 4, 5, 6});
  Var s = slice(v, 0, 1, 3);
  h.backward(sum_all(add(s, slice(v, 0, 0, 2))));
  EXPECT_NE(s.grad(), v.grad());
  EXPECT_EQ(grads(v), Floats({1, 1, 2, 2, 1, 1}));
}

TEST(Shape, SliceErrors) {
  Graph g;
  Var x = iota(g, {4, 3});
  expect_error_has([&] { slice(x, 0, 2, 5); }, "slice [2, 5) out of range");
  expect_error_has([&] { slice(x, 1, 2, 1); }, "slice [2, 1) out of range");
  expect_error_has([&] { slice(x, 0, -1, 2); }, "out of range");
  expect_error_has([&] { slice(x, 2, 0, 1); }, "axis 2 out of range");
}

// ---------------------------------------------------------------- index ops

TEST(Index, GatherRowsLooksUpRows) {
  Graph g;
  Var table = constant(g, {4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  Var y = gather_rows(table, {2, 0, 2});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(values(y), Floats({20, 21, 0, 1, 20, 21}));
  const int32_t ids[] = {3};
  EXPECT_EQ(values(gather_rows(table, ids, 1)), Floats({30, 31}));
  EXPECT_EQ(gather_rows(table, std::vector<int32_t>{}).shape(), Shape({0, 2}));
}

TEST(Index, GatherBackwardAccumulatesOnlyIntoUsedRows) {
  Floats value = {0, 1, 10, 11, 20, 21, 30, 31};
  Floats grad(8, 5.0f);  // caller buffer holding earlier gradient: must be added to, not replaced
  Graph g;
  Var table = g.leaf(Tensor{value.data(), {4, 2}}, grad.data());
  Var y = gather_rows(table, {2, 0, 2});
  Var w = constant(g, {3, 2}, {1, 2, 3, 4, 5, 6});
  g.backward(sum_all(mul(y, w)));
  EXPECT_EQ(grad, Floats({5 + 3, 5 + 4, 5, 5, 5 + 1 + 5, 5 + 2 + 6, 5, 5}));
}

TEST(Index, OutOfRangeIdsNameTheIdAndTheTableSize) {
  Graph g;
  Var table = iota(g, {4, 2});
  expect_error_has([&] { gather_rows(table, {1, 7}); }, "id 7");
  expect_error_has([&] { gather_rows(table, {1, 7}); }, "4 rows");
  expect_error_has([&] { gather_rows(table, {-1}); }, "id -1");
  expect_error_has([&] { gather_rows(iota(g, {4, 2, 2}), {0}); }, "table must be [V, D]");
  expect_error_has([&] { select_rows(table, {4}); }, "id 4");
  expect_error_has([&] { scatter_add_rows(table, iota(g, {1, 2}), {9}); }, "id 9");
  EXPECT_EQ(g.size(), 3u) << "failed ops must not record nodes";
}

TEST(Index, ScatterAddRows) {
  Graph g;
  Var base = constant(g, {3, 2}, {1, 1, 1, 1, 1, 1});
  Var src = constant(g, {3, 2}, {1, 2, 10, 20, 100, 200});
  Var y = scatter_add_rows(base, src, {1, 1, 0});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(values(y), Floats({101, 201, 12, 23, 1, 1}));
  EXPECT_EQ(values(base), Floats(6, 1.0f)) << "base must not be modified";
  expect_error_has([&] { scatter_add_rows(base, src, {0, 1}); }, "2 ids for src [3, 2]");
  expect_error_has([&] { scatter_add_rows(base, iota(g, {1, 3}), {0}); }, "do not match");

  Graph h;
  Var b = variable(h, {3, 2}, Floats(6, 0.0f));
  Var s = variable(h, {2, 2}, Floats(4, 0.0f));
  Var w = constant(h, {3, 2}, {1, 2, 3, 4, 5, 6});
  h.backward(sum_all(mul(scatter_add_rows(b, s, {2, 0}), w)));
  EXPECT_EQ(grads(b), Floats({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(grads(s), Floats({5, 6, 1, 2}));
}

TEST(Index, PickOnePerRow) {
  Graph g;
  Var x = constant(g, {2, 3}, {1, 2, 3, 4, 5, 6});
  Var y = pick(x, {2, 0});
  EXPECT_EQ(y.shape(), Shape({2}));
  EXPECT_EQ(values(y), Floats({3, 4}));
  Var x3 = iota(g, {2, 2, 3});
  Var y3 = pick(x3, {0, 1, 2, 0});
  EXPECT_EQ(y3.shape(), Shape({2, 2}));
  EXPECT_EQ(values(y3), Floats({0, 4, 8, 9}));
  expect_error_has([&] { pick(x, {0}); }, "1 indices for 2 rows");
  expect_error_has([&] { pick(x, {0, 3}); }, "index 3 (row 1) out of range for 3 columns");
  expect_error_has([&] { pick(x, {-2, 0}); }, "index -2");

  Graph h;
  Var v = variable(h, {2, 3}, {1, 2, 3, 4, 5, 6});
  h.backward(sum_all(pick(v, {1, 1})));
  EXPECT_EQ(grads(v), Floats({0, 1, 0, 0, 1, 0}));
}

TEST(Index, SelectRowsOfAnyRank) {
  Graph g;
  Var x = iota(g, {3, 2, 2});
  Var y = select_rows(x, {2, 2, 0});
  EXPECT_EQ(y.shape(), Shape({3, 2, 2}));
  EXPECT_EQ(values(y), Floats({8, 9, 10, 11, 8, 9, 10, 11, 0, 1, 2, 3}));
  Var v = iota(g, {5});
  EXPECT_EQ(values(select_rows(v, {4, 1})), Floats({4, 1}));
  expect_error_has([&] { select_rows(sum_all(v), {0}); }, "scalar");
}

TEST(Index, InferenceModeRecordsNoBackwardAndKeepsNoIds) {
  Graph g(false);
  Floats value = {1, 2, 3, 4}, grad(4, 0.0f);
  Var table = g.leaf(Tensor{value.data(), {2, 2}}, grad.data());
  Var y = gather_rows(table, {1, 1});
  EXPECT_EQ(values(y), Floats({3, 4, 3, 4}));
  EXPECT_FALSE(y.needs_grad());
  EXPECT_EQ(g.node(y.id).backward, nullptr);
  EXPECT_EQ(g.node(y.id).aux, nullptr);
  Var c = concat({table, y}, 0);
  EXPECT_EQ(g.node(c.id).backward, nullptr);
  EXPECT_EQ(g.node(c.id).aux, nullptr);
}

}  // namespace ops_structure_test
}  // namespace engram::core
