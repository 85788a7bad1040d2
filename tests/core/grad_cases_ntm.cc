// Gradient-check rows: the fused NTM ops (ntm_address, memory_read, memory_write), including the
// edge cases of the addressing chain: zero key / zero memory rows in the cosine, gamma near 1,
// weightings near one-hot, a shift kernel wider than the memory.
// Dims: B batch, N slots, M slot width, S shift-kernel size, P = M + S + 3.
#include "core/grad_cases.h"
#include "engram/core/ops/ntm_ops.h"

namespace engram::core {

namespace {

constexpr int kB = 2, kN = 5, kM = 4;

// Column-wise affine tweak of a raw head [B, P]: head * scale + shift, both per column (constants).
Var tweak_head(Graph& g, Var head, const std::vector<float>& scale, const std::vector<float>& shift) {
  const int p = head.shape()[1];
  std::vector<float> sc(kB * p), sh(kB * p);
  for (int b = 0; b < kB; ++b)
    for (int j = 0; j < p; ++j) sc[b * p + j] = scale[j], sh[b * p + j] = shift[j];
  return add(mul(head, g.constant({kB, p}, sc.data())), g.constant({kB, p}, sh.data()));
}

// Per-column vectors for a head of shift size s: key columns first, then beta, g, s (S), gamma.
struct Cols {
  std::vector<float> v;
  explicit Cols(int s, float fill) : v(kM + s + 3, fill) {}
  Cols& key(float x) { for (int j = 0; j < kM; ++j) v[j] = x; return *this; }
  Cols& beta(float x) { v[kM] = x; return *this; }
  Cols& shift(int j, float x) { v[kM + 2 + j] = x; return *this; }
  Cols& gamma(float x) { v.back() = x; return *this; }
};

}  // namespace

std::vector<GradCase> ntm_cases() {
  using V = const std::vector<Var>&;
  GradCheckOptions small_step;
  small_step.eps = 1e-3f;
  const int p3 = kM + 6, p5 = kM + 8;
  // [B, N] = 0.9 on one slot per row (added to small positive weights: near one-hot).
  const std::vector<float> peak = {0, 0, 0.9f, 0, 0, 0.9f, 0, 0, 0, 0};
  // [B, N, M] row mask: slot 1 of row 0 and slot 3 of row 1 are zero vectors.
  std::vector<float> rowmask(kB * kN * kM, 1.0f);
  for (int j = 0; j < kM; ++j) rowmask[(0 * kN + 1) * kM + j] = 0.0f, rowmask[(1 * kN + 3) * kM + j] = 0.0f;
  return {
      {"ntm_address/S3", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
       [](Graph&, V x) { return ntm_address(x[0], x[1], x[2]); }},
      {"ntm_address/S5", {{{kB, kN, kM}}, {{kB, p5}}, {{kB, kN}, 0.05f, 1.0f}},
       [](Graph&, V x) { return ntm_address(x[0], x[1], x[2]); }},
      {"ntm_address/S5>N", {{{kB, 3, kM}}, {{kB, p5}}, {{kB, 3}, 0.05f, 1.0f}},
       [](Graph&, V x) { return ntm_address(x[0], x[1], x[2]); }},
      // The key is exactly zero (content weighting uniform): every other parameter still checks.
      {"ntm_address/zero-key", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
       [](Graph& g, V x) {
         return ntm_address(x[0], tweak_head(g, x[1], Cols(3, 1.0f).key(0.0f).v, Cols(3, 0.0f).v), x[2]);
       }},
      // Two memory rows are zero vectors (similarity 0 there).
      {"ntm_address/zero-memory-rows", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
       [rowmask](Graph& g, V x) {
         return ntm_address(mul(x[0], g.constant({kB, kN, kM}, rowmask.data())), x[1], x[2]);
       }},
      // gamma^ ~ -8: gamma = 1 + 3e-4.
      {"ntm_address/gamma~1", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.05f, 1.0f}},
       [](Graph& g, V x) {
         return ntm_address(x[0], tweak_head(g, x[1], Cols(3, 1.0f).v, Cols(3, 0.0f).gamma(-8.0f).v), x[2]);
       }},
      // Near one-hot everywhere: peaked w_prev, strong shift to +1, beta ~ 5, gamma ~ 3.
      {"ntm_address/near-one-hot", {{{kB, kN, kM}}, {{kB, p3}}, {{kB, kN}, 0.02f, 0.05f}},
       [peak](Graph& g, V x) {
         Var head = tweak_head(g, x[1], Cols(3, 1.0f).v, Cols(3, 0.0f).beta(5.0f).shift(2, 5.0f).gamma(2.0f).v);
         return ntm_address(x[0], head, add(x[2], g.constant({kB, kN}, peak.data())));
       },
       1e-2, small_step},
      {"memory_read", {{{kB, kN}, 0.0f, 1.0f}, {{kB, kN, kM}}},
       [](Graph&, V x) { return memory_read(x[0], x[1]); }},
      {"memory_write/erase+add", {{{kB, kN, kM}}, {{kB, kN}, 0.0f, 1.0f}, {{kB, kM}, 0.0f, 1.0f}, {{kB, kM}}},
       [](Graph&, V x) { return memory_write(x[0], x[1], x[2], x[3]); }},
      {"memory_write/erase-only", {{{kB, kN, kM}}, {{kB, kN}, 0.0f, 1.0f}, {{kB, kM}, 0.0f, 1.0f}},
       [](Graph&, V x) { return memory_write(x[0], x[1], x[2], Var{}); }},
      {"memory_write/add-only", {{{kB, kN, kM}}, {{kB, kN}, 0.0f, 1.0f}, {{kB, kM}}},
       [](Graph&, V x) { return memory_write(x[0], x[1], Var{}, x[2]); }},
  };
}

}  // namespace engram::core
