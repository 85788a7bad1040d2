// NTM addressing, read and write (nn/memory/addressing.h): the fused ops equal their composed
// references in value and gradient (generic inputs and the edge cases: zero key, zero memory rows,
// gamma near 1, near one-hot weightings, shift kernels wider than the memory), every variant
// passes the finite-difference check, and the chain does what the paper says on hand-made inputs.
// Dims: B batch, N slots, M slot width, S shift-kernel size, P = M + S + 3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "engram/core/grad_check.h"
#include "engram/core/ops.h"
#include "engram/nn/memory/addressing.h"

namespace engram::nn {
namespace {

using core::Graph;
using core::Shape;
using core::Tensor;

// f(g, inputs, fused) -> output; inputs are leaves over the given buffers.
using Build = std::function<Var(Graph&, const std::vector<Var>&, bool)>;

struct Input {
  Shape shape;
  float lo = -1.0f, hi = 1.0f;
};

// One row: random inputs (uniform in [lo, hi]) and the function of them, fused or composed.
struct Case {
  std::string name;
  std::vector<Input> inputs;
  Build build;
  double grad_tol = 1e-2;
  float fd_eps = 1e-2f;
};

std::vector<std::vector<float>> random_inputs(const std::vector<Input>& ins, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<std::vector<float>> out;
  for (const Input& in : ins) {
    std::vector<float> v(in.shape.numel());
    for (float& x : v) x = rng.uniform(in.lo, in.hi);
    out.push_back(std::move(v));
  }
  return out;
}

// Output value and input gradients of L = sum(seed * out), for the fused or composed build.
struct RunResult {
  std::vector<float> out;
  std::vector<std::vector<float>> grads;
};
RunResult run(const Case& c, std::vector<std::vector<float>>& values, bool fused) {
  Graph g;
  std::vector<Var> leaves;
  for (size_t k = 0; k < c.inputs.size(); ++k) leaves.push_back(g.variable(Tensor{values[k].data(), c.inputs[k].shape}));
  Var y = c.build(g, leaves, fused);
  RunResult r;
  r.out.assign(y.data(), y.data() + y.numel());
  core::Rng rng(99);
  std::vector<float> seed(y.numel());
  for (float& s : seed) s = rng.uniform(-1.0f, 1.0f);
  g.backward(y, seed.data());
  for (const Var& v : leaves) {
    const float* gr = v.grad();
    r.grads.emplace_back(v.numel(), 0.0f);
    if (gr) std::copy(gr, gr + v.numel(), r.grads.back().begin());
  }
  return r;
}

// |a - b| <= tol * max(1, |a|, |b|)
void expect_close(const std::vector<float>& a, const std::vector<float>& b, double tol, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i]) && std::isfinite(b[i])) << what << "[" << i << "]: " << a[i] << " vs " << b[i];
    const double scale = std::max({1.0, std::fabs(double(a[i])), std::fabs(double(b[i]))});
    ASSERT_LE(std::fabs(double(a[i]) - b[i]), tol * scale) << what << "[" << i << "]: " << a[i] << " vs " << b[i];
  }
}

constexpr int kB = 2, kN = 6, kM = 4;

// Head [B, P] built from a random leaf x: x * scale + shift per column (constants).
Var tweak(Graph& g, Var x, const std::vector<float>& scale, const std::vector<float>& shift) {
  const int b = x.shape()[0], p = x.shape()[1];
  std::vector<float> sc, sh;
  for (int r = 0; r < b; ++r) sc.insert(sc.end(), scale.begin(), scale.end()), sh.insert(sh.end(), shift.begin(), shift.end());
  return core::add(core::mul(x, g.constant({b, p}, sc.data())), g.constant({b, p}, sh.data()));
}

// Column vectors of a head with shift size s: [key (M) | beta | g | s (S) | gamma].
std::vector<float> cols(int s, float fill) { return std::vector<float>(kM + s + 3, fill); }

std::vector<Case> cases() {
  const int p3 = kM + 6, p5 = kM + 8;
  auto addr = [](Graph&, const std::vector<Var>& x, bool fused) { return address(x[0], x[1], x[2], fused); };
  std::vector<Case> out = {
      {"address/S3", {{{kB, kN, kM}}, {{kB, p3}, -2.0f, 2.0f}, {{kB, kN}, 0.05f, 1.0f}}, addr},
      {"address/S5", {{{kB, kN, kM}}, {{kB, p5}, -2.0f, 2.0f}, {{kB, kN}, 0.05f, 1.0f}}, addr},
      {"address/S5>N", {{{kB, 3, kM}}, {{kB, p5}, -2.0f, 2.0f}, {{kB, 3}, 0.05f, 1.0f}}, addr},
      {"address/S1 (no shift)", {{{kB, kN, kM}}, {{kB, kM + 4}, -2.0f, 2.0f}, {{kB, kN}, 0.05f, 1.0f}}, addr},
  };
  {  // zero key: the key columns scaled by 0
    std::vector<float> sc = cols(3, 1.0f);
    for (int j = 0; j < kM; ++j) sc[j] = 0.0f;
    out.push_back({"address/zero-key", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
                   [sc](Graph& g, const std::vector<Var>& x, bool fused) {
                     return address(x[0], tweak(g, x[1], sc, cols(3, 0.0f)), x[2], fused);
                   }});
  }
  {  // zero memory rows (slot 1 of row 0, slot 4 of row 1)
    std::vector<float> mask(kB * kN * kM, 1.0f);
    for (int j = 0; j < kM; ++j) mask[(0 * kN + 1) * kM + j] = 0.0f, mask[(1 * kN + 4) * kM + j] = 0.0f;
    out.push_back({"address/zero-memory-rows", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
                   [mask](Graph& g, const std::vector<Var>& x, bool fused) {
                     return address(core::mul(x[0], g.constant({kB, kN, kM}, mask.data())), x[1], x[2], fused);
                   }});
  }
  {  // gamma ~ 1 + 3e-4
    std::vector<float> sh = cols(3, 0.0f);
    sh.back() = -8.0f;
    out.push_back({"address/gamma~1", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
                   [sh](Graph& g, const std::vector<Var>& x, bool fused) {
                     return address(x[0], tweak(g, x[1], cols(3, 1.0f), sh), x[2], fused);
                   }});
  }
  {  // near one-hot: peaked previous weighting, strong +1 shift, beta ~ 5, gamma ~ 3
    std::vector<float> sh = cols(3, 0.0f);
    sh[kM] = 5.0f, sh[kM + 2 + 2] = 5.0f, sh.back() = 2.0f;
    std::vector<float> peak(kB * kN, 0.0f);
    peak[2] = peak[kN + 5] = 0.9f;
    out.push_back({"address/near-one-hot", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.02f, 0.05f}},
                   [sh, peak](Graph& g, const std::vector<Var>& x, bool fused) {
                     return address(x[0], tweak(g, x[1], cols(3, 1.0f), sh),
                                    core::add(x[2], g.constant({kB, kN}, peak.data())), fused);
                   },
                   1e-2, 1e-3f});
  }
  out.push_back({"read", {{{kB, kN}, 0.0f, 1.0f}, {{kB, kN, kM}}},
                 [](Graph&, const std::vector<Var>& x, bool fused) { return read(x[0], x[1], fused); }});
  out.push_back({"write/erase+add", {{{kB, kN, kM}}, {{kB, kN}, 0.0f, 1.0f}, {{kB, kM}, 0.0f, 1.0f}, {{kB, kM}}},
                 [](Graph&, const std::vector<Var>& x, bool fused) { return write(x[0], x[1], x[2], x[3], fused); }});
  out.push_back({"write/erase-only", {{{kB, kN, kM}}, {{kB, kN}, 0.0f, 1.0f}, {{kB, kM}, 0.0f, 1.0f}},
                 [](Graph&, const std::vector<Var>& x, bool fused) { return write(x[0], x[1], x[2], Var{}, fused); }});
  out.push_back({"write/add-only", {{{kB, kN, kM}}, {{kB, kN}, 0.0f, 1.0f}, {{kB, kM}}},
                 [](Graph&, const std::vector<Var>& x, bool fused) { return write(x[0], x[1], Var{}, x[2], fused); }});
  return out;
}

TEST(Addressing, FusedMatchesComposedInValueAndGradient) {
  for (const Case& c : cases()) {
    for (uint64_t seed : {1, 2, 3}) {
      auto values = random_inputs(c.inputs, seed);
      RunResult fused = run(c, values, true), composed = run(c, values, false);
      expect_close(fused.out, composed.out, 1e-5, c.name + " value");
      for (size_t k = 0; k < c.inputs.size(); ++k)
        expect_close(fused.grads[k], composed.grads[k], 2e-4, c.name + " grad of input " + std::to_string(k));
    }
  }
}

TEST(Addressing, EveryVariantMatchesFiniteDifferences) {
  std::printf("%-34s %8s %12s %8s\n", "row", "fused", "worst err", "checked");
  for (const Case& c : cases()) {
    for (bool fused : {true, false}) {
      core::GradCheckOptions opt;
      opt.eps = c.fd_eps;
      std::vector<core::OpInput> ins;
      for (const Input& in : c.inputs) ins.push_back({in.shape, in.lo, in.hi});
      core::GradCheckResult r = core::grad_check_op(
          [&](Graph& g, const std::vector<Var>& x) { return c.build(g, x, fused); }, ins, opt);
      std::printf("%-34s %8s %12.3e %8lld  %s\n", c.name.c_str(), fused ? "fused" : "composed", r.max_error,
                  static_cast<long long>(r.checked), r.worst.c_str());
      EXPECT_GT(r.checked, 0) << c.name;
      EXPECT_LE(r.max_error, c.grad_tol) << c.name << (fused ? " fused: " : " composed: ") << r.worst;
    }
  }
}

// ---- behaviour on hand-made inputs (B = 1)

// Raw head for key k, with beta^, g^, s^ (3 entries), gamma^.
std::vector<float> head(const std::vector<float>& key, float beta, float gate, std::vector<float> shift, float gamma) {
  std::vector<float> h = key;
  h.push_back(beta);
  h.push_back(gate);
  h.insert(h.end(), shift.begin(), shift.end());
  h.push_back(gamma);
  return h;
}

std::vector<float> address_values(const std::vector<float>& mem, int n, int m, const std::vector<float>& h,
                                  const std::vector<float>& prev, bool fused) {
  Graph g(false);
  Var w = address(g.constant({1, n, m}, mem.data()), g.constant({1, static_cast<int>(h.size())}, h.data()),
                  g.constant({1, n}, prev.data()), fused);
  return {w.data(), w.data() + w.numel()};
}

// The addressing chain of addressing.h in double, written out for B = 1: beta = softplus,
// g = sigmoid, s = softmax, gamma = 1 + softplus of the raw values;
// w = sharpen(circular_conv(g softmax(beta cos(M, key)) + (1 - g) w_prev, s), gamma), where the
// conv moves weight from slot i to slot i + (j - S/2) for kernel entry j.
std::vector<double> address_reference(const std::vector<float>& mem, int n, int m, const std::vector<float>& h,
                                      const std::vector<float>& prev) {
  const int s = static_cast<int>(h.size()) - m - 3;
  auto softplus = [](double x) { return std::log1p(std::exp(x)); };
  const double beta = softplus(h[m]), gate = 1.0 / (1.0 + std::exp(-double{h[m + 1]})),
               gamma = 1.0 + softplus(h[m + 2 + s]);
  std::vector<double> content(n), shift(s), wg(n), conv(n, 0.0), w(n);
  double nk = 0, z = 0, zs = 0, zw = 0;
  for (int j = 0; j < m; ++j) nk += double{h[j]} * h[j];
  for (int i = 0; i < n; ++i) {
    double dot = 0, nm = 0;
    for (int j = 0; j < m; ++j) dot += double{mem[i * m + j]} * h[j], nm += double{mem[i * m + j]} * mem[i * m + j];
    z += content[i] = std::exp(beta * dot / (std::sqrt(nm) * std::sqrt(nk)));
  }
  for (int j = 0; j < s; ++j) zs += shift[j] = std::exp(double{h[m + 2 + j]});
  for (int i = 0; i < n; ++i) wg[i] = gate * content[i] / z + (1 - gate) * prev[i];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < s; ++j) conv[((i + j - s / 2) % n + n) % n] += wg[i] * shift[j] / zs;
  for (int i = 0; i < n; ++i) zw += w[i] = std::pow(conv[i], gamma);
  for (double& x : w) x /= zw;
  return w;
}

void expect_reference(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << what << " slot " << i;
}

TEST(Addressing, ContentAddressingFocusesOnTheMatchingRow) {
  const std::vector<float> mem = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0};  // N = 4, M = 3
  const std::vector<float> prev = {0.25f, 0.25f, 0.25f, 0.25f};
  // Strong key match on row 2, gate = 1 (content only), no shift, gamma = 1 + softplus(0).
  for (bool fused : {true, false}) {
    const auto h = head({0, 0, 3}, 20.0f, 20.0f, {-20, 20, -20}, -20.0f);
    auto w = address_values(mem, 4, 3, h, prev, fused);
    EXPECT_GT(w[2], 0.99f) << fused;
    expect_reference(w, address_reference(mem, 4, 3, h, prev), fused ? "fused" : "composed");
    float sum = 0;
    for (float v : w) sum += v;
    EXPECT_NEAR(sum, 1.0f, 1e-5f);
  }
}

TEST(Addressing, LocationShiftMovesTheWeightingOneSlot) {
  const std::vector<float> mem(5 * 2, 0.5f);
  const std::vector<float> prev = {0, 1, 0, 0, 0};
  for (bool fused : {true, false}) {
    // gate = 0 (keep w_prev), shift +1 (kernel entry 2), gamma large.
    const auto h = head({1, 0}, 0.0f, -30.0f, {-30, -30, 30}, 5.0f);
    auto w = address_values(mem, 5, 2, h, prev, fused);
    EXPECT_GT(w[2], 0.999f) << fused;
    expect_reference(w, address_reference(mem, 5, 2, h, prev), "shift +1");
    // shift -1, with wrap-around from slot 0 to slot 4
    const auto h2 = head({1, 0}, 0.0f, -30.0f, {30, -30, -30}, 5.0f);
    auto w2 = address_values(mem, 5, 2, h2, {1, 0, 0, 0, 0}, fused);
    EXPECT_GT(w2[4], 0.999f) << fused;
    expect_reference(w2, address_reference(mem, 5, 2, h2, {1, 0, 0, 0, 0}), "shift -1");
  }
}

TEST(Addressing, SharpeningUndoesTheBlurOfAFractionalShift) {
  const std::vector<float> mem(6 * 2, 0.5f);
  const std::vector<float> prev = {0, 0, 1, 0, 0, 0};
  // Half the shift mass on 0 and half on +1: blurred over slots 2 and 3. gamma ~ 1 keeps the blur,
  // a large gamma with a slight bias towards slot 3 picks it.
  const auto hb = head({1, 0}, 0.0f, -30.0f, {-30, 0, 0}, -20.0f);
  auto blurred = address_values(mem, 6, 2, hb, prev, true);
  EXPECT_NEAR(blurred[2], 0.5f, 1e-5f);
  EXPECT_NEAR(blurred[3], 0.5f, 1e-5f);
  expect_reference(blurred, address_reference(mem, 6, 2, hb, prev), "blurred");
  // Slots 2 and 3 hold the kernel's entries 0 and +1, whose ratio is e^0.1; sharpening by
  // gamma = 1 + softplus(60) = 61 makes it e^6.1: slot 3 gets 1 / (1 + e^-6.1).
  const auto hs = head({1, 0}, 0.0f, -30.0f, {-30, 0, 0.1f}, 60.0f);
  auto sharp = address_values(mem, 6, 2, hs, prev, true);
  EXPECT_GT(sharp[3], 0.99f);
  EXPECT_NEAR(sharp[3], 1.0 / (1.0 + std::exp(-6.1)), 1e-5);
  expect_reference(sharp, address_reference(mem, 6, 2, hs, prev), "sharp");
}

TEST(Addressing, WriteThenReadReturnsTheAddedVector) {
  Graph g(false);
  const int n = 4, m = 3;
  std::vector<float> mem(n * m, 0.7f), w = {0, 0, 1, 0}, erase = {1, 1, 1}, add = {0.1f, -0.2f, 0.3f};
  for (bool fused : {true, false}) {
    Var m1 = write(g.constant({1, n, m}, mem.data()), g.constant({1, n}, w.data()), g.constant({1, m}, erase.data()),
                   g.constant({1, m}, add.data()), fused);
    Var r = read(g.constant({1, n}, w.data()), m1, fused);
    for (int j = 0; j < m; ++j) EXPECT_NEAR(r.data()[j], add[j], 1e-6f);
    for (int i = 0; i < n; ++i) {  // untouched rows keep their content
      if (i == 2) continue;
      for (int j = 0; j < m; ++j) EXPECT_FLOAT_EQ(m1.data()[i * m + j], 0.7f);
    }
  }
}

TEST(Addressing, BadShapesAreOneLineErrors) {
  Graph g(false);
  Var mem = g.zeros({1, 4, 3});
  EXPECT_THROW(address(mem, g.zeros({1, 3 + 5}), g.zeros({1, 4})), Error);  // even shift kernel
  EXPECT_THROW(address(mem, g.zeros({1, 3 + 6}), g.zeros({1, 5})), Error);  // w_prev width
  EXPECT_THROW(read(g.zeros({1, 5}), mem), Error);
  EXPECT_THROW(write(mem, g.zeros({1, 4}), Var{}, Var{}), Error);
  EXPECT_THROW(write(mem, g.zeros({1, 4}), g.zeros({1, 2}), Var{}), Error);
}

}  // namespace
}  // namespace engram::nn
