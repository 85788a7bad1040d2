// CopyOutput: the pointer-generator's copy mixture (training log P(target) and the inference
// distribution over the extended vocabulary).
// Dims: N rows, V vocab, S source positions, X extra ids, D = Hc + Hs + Hx gate input width.
//
// A log-sum-exp over a subset is read off a masked log_softmax without -inf arithmetic: with
// y = log_softmax(x, m) and j any kept position, lse_m(x) = x_j − y_j. Taking j = the kept arg-max
// keeps y_j in [−log C, 0], so nothing cancels. Two uses:
//   log Σ_{held} α = log α_j − log_softmax(scores, held)_j    (j = arg-max score among held)
//   logaddexp(a, b) = pair_j − log_softmax(pair, keep)_j       (pair = [a, b], j = larger kept)
// where `keep` drops the vocabulary term of a target w >= V and the copy term of a target no
// attended position holds (constant per-row masks, so the unused term may hold any finite value).
#include "engram/nn/copy_output.h"

#include <cmath>
#include <limits>
#include <vector>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

double logaddexp(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  return std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
}

struct Dims {
  int n, v, s, x;
};

// Shapes and ids of one step (every id in [0, V + X), masked positions included).
Dims check_step(const CopyStep& st, const std::string& path) {
  ENGRAM_CHECK(st.vocab_logits.valid() && st.attn_scores.valid() && st.gate_logit.valid(),
               "copy output '{}': vocab_logits, attn_scores and gate_logit are all required", path);
  const Shape& sl = st.vocab_logits.shape();
  const Shape& ss = st.attn_scores.shape();
  ENGRAM_CHECK(sl.rank() == 2 && ss.rank() == 2 && sl[0] == ss[0],
               "copy output '{}': vocab logits {} and attention scores {} must be [N, V] and [N, S]", path, sl, ss);
  const Dims d{sl[0], sl[1], ss[1], st.source.extra};
  ENGRAM_CHECK(d.v > 0 && d.s > 0, "copy output '{}': empty vocabulary ({}) or source ({})", path, d.v, d.s);
  ENGRAM_CHECK(st.gate_logit.numel() == d.n, "copy output '{}': gate logit {} for {} rows", path,
               st.gate_logit.shape(), d.n);
  ENGRAM_CHECK(d.x >= 0, "copy output '{}': extra ids {} must be >= 0", path, d.x);
  const auto& ids = st.source.ids;
  ENGRAM_CHECK(static_cast<int64_t>(ids.size()) == int64_t{d.n} * d.s,
               "copy output '{}': {} source ids for [N={}, S={}]", path, ids.size(), d.n, d.s);
  for (size_t k = 0; k < ids.size(); ++k)
    ENGRAM_CHECK(ids[k] >= 0 && ids[k] < d.v + d.x,
                 "copy output '{}': source id {} (row {}, position {}) outside the extended vocabulary [0, {})",
                 path, ids[k], k / d.s, k % d.s, d.v + d.x);
  return d;
}

bool attends(const CopySource& src, int64_t k) { return !src.mask || src.mask[k] != 0.0f; }

}  // namespace

CopyOutput::CopyOutput(ParamStore& store, std::string path, const CopyOutputConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg) {
  ENGRAM_CHECK(cfg.context_dim >= 0 && cfg.state_dim >= 0 && cfg.input_dim >= 0 &&
                   cfg.context_dim + cfg.state_dim + cfg.input_dim > 0,
               "copy output '{}': gate widths {}, {}, {} must be >= 0 with a positive sum", this->path(),
               cfg.context_dim, cfg.state_dim, cfg.input_dim);
  w_ = add_param("w", {1, cfg.context_dim + cfg.state_dim + cfg.input_dim});
  b_ = add_param("b", {1});
  init::glorot_uniform(store, w_, rng);
}

Var CopyOutput::gate_logit(Graph& g, Var context, Var state, Var input) const {
  std::vector<Var> parts;  // each [N, width]
  int rows = -1;
  auto take = [&](Var v, int width, const char* what) {
    if (width == 0) {
      ENGRAM_CHECK(!v.valid(), "copy output '{}': {} given but its width is 0 in the config", path(), what);
      return;
    }
    ENGRAM_CHECK(v.valid(), "copy output '{}': {} [N, {}] missing", path(), what, width);
    ENGRAM_CHECK(v.shape().rank() == 2 && v.shape()[1] == width && (rows < 0 || v.shape()[0] == rows),
                 "copy output '{}': {} {} must be [N, {}] (N = {})", path(), what, v.shape(), width, rows);
    rows = v.shape()[0];
    parts.push_back(v);
  };
  take(context, cfg_.context_dim, "context");
  take(state, cfg_.state_dim, "state");
  take(input, cfg_.input_dim, "input");
  Var x = parts.size() == 1 ? parts[0] : core::concat(parts, 1);  // [N, D]
  return core::reshape(core::affine(x, param(g, w_), param(g, b_)), {rows});  // [N]
}

Var CopyOutput::log_prob(Graph& g, const CopyStep& st, std::span<const int32_t> targets) const {
  const Dims d = check_step(st, path());
  ENGRAM_CHECK(static_cast<int64_t>(targets.size()) == d.n, "copy output '{}': {} targets for {} rows", path(),
               targets.size(), d.n);
  const CopySource& src = st.source;
  const float* score = st.attn_scores.data();  // [N, S]
  // held [N, S]: attended positions holding the row's target; all attended ones in a row with none
  // (its copy term is then masked out below, and log Σ α = 0 is a finite placeholder).
  float* held = g.arena().floats(static_cast<size_t>(d.n) * d.s);
  float* keep = g.arena().floats(static_cast<size_t>(d.n) * 2);  // [N, 2] {vocabulary term, copy term}
  std::vector<int32_t> vocab_col(d.n), best_held(d.n);
  for (int r = 0; r < d.n; ++r) {
    const int32_t t = targets[r];
    ENGRAM_CHECK(t >= 0 && t < d.v + d.x, "copy output '{}': target {} (row {}) outside the extended vocabulary [0, {})",
                 path(), t, r, d.v + d.x);
    const int64_t row = int64_t{r} * d.s;
    bool any = false, has = false;
    for (int i = 0; i < d.s; ++i) {
      any |= attends(src, row + i);
      has |= attends(src, row + i) && src.ids[row + i] == t;
    }
    ENGRAM_CHECK(any, "copy output '{}': row {} attends no source position", path(), r);
    ENGRAM_CHECK(t < d.v || has, "copy output '{}': target {} (row {}) is outside the vocabulary ({}) and no attended source position holds it (P = 0)",
                 path(), t, r, d.v);
    int best = -1;
    for (int i = 0; i < d.s; ++i) {
      const bool h = attends(src, row + i) && (!has || src.ids[row + i] == t);
      held[row + i] = h ? 1.0f : 0.0f;
      if (h && (best < 0 || score[row + i] > score[row + best])) best = i;
    }
    best_held[r] = best;
    vocab_col[r] = t < d.v ? t : 0;
    keep[2 * r] = t < d.v ? 1.0f : 0.0f;
    keep[2 * r + 1] = has ? 1.0f : 0.0f;
  }
  using core::pick;
  Var log_alpha = src.mask ? core::log_softmax(st.attn_scores, src.mask) : core::log_softmax(st.attn_scores);
  Var copy = pick(log_alpha, best_held) - pick(core::log_softmax(st.attn_scores, held), best_held);  // [N]
  Var z = core::reshape(st.gate_logit, {d.n});                                                        // [N]
  Var gen_term = -core::softplus(-z) + pick(core::log_softmax(st.vocab_logits), vocab_col);          // [N] a
  Var copy_term = -core::softplus(z) + copy;                                                          // [N] b
  Var pair = core::concat({core::reshape(gen_term, {d.n, 1}), core::reshape(copy_term, {d.n, 1})}, 1);  // [N, 2]
  std::vector<int32_t> larger(d.n);
  for (int r = 0; r < d.n; ++r) {
    const bool gen_only = keep[2 * r + 1] == 0.0f, copy_only = keep[2 * r] == 0.0f;
    larger[r] = gen_only ? 0 : copy_only ? 1 : (pair.value().at(r, 1) > pair.value().at(r, 0) ? 1 : 0);
  }
  return pick(pair, larger) - pick(core::log_softmax(pair, keep), larger);  // [N] logaddexp over kept terms
}

CopyDistribution CopyOutput::distribution(Graph& g, const CopyStep& st) const {
  const Dims d = check_step(st, path());
  const CopySource& src = st.source;
  core::NoGrad ng(g);
  for (int r = 0; r < d.n; ++r) {
    bool any = false;
    for (int i = 0; i < d.s; ++i) any |= attends(src, int64_t{r} * d.s + i);
    ENGRAM_CHECK(any, "copy output '{}': row {} attends no source position", path(), r);
  }
  const Tensor log_vocab = core::log_softmax(st.vocab_logits).value();  // [N, V]
  const Tensor log_alpha =
      (src.mask ? core::log_softmax(st.attn_scores, src.mask) : core::log_softmax(st.attn_scores)).value();  // [N, S]
  const float* z = st.gate_logit.data();  // [N]
  const int w_all = d.v + d.x;
  CopyDistribution out{g.alloc({d.n, w_all}), g.alloc({d.n})};
  std::vector<double> copy_lse(w_all, kNegInf);  // per id: log Σ α over the row's positions holding it
  std::vector<int32_t> touched;
  for (int r = 0; r < d.n; ++r) {
    const double log_gen = -softplus(-double{z[r]}), log_copy = -softplus(double{z[r]});
    out.p_gen[r] = static_cast<float>(std::exp(log_gen));
    float* lp = out.log_probs.data + int64_t{r} * w_all;
    for (int w = 0; w < d.v; ++w) lp[w] = static_cast<float>(log_gen + log_vocab.at(r, w));
    for (int w = d.v; w < w_all; ++w) lp[w] = -std::numeric_limits<float>::infinity();
    const int64_t row = int64_t{r} * d.s;
    for (int i = 0; i < d.s; ++i) {
      if (!attends(src, row + i)) continue;
      const int32_t id = src.ids[row + i];
      if (copy_lse[id] == kNegInf) touched.push_back(id);
      copy_lse[id] = logaddexp(copy_lse[id], log_alpha[row + i]);
    }
    for (int32_t id : touched) {
      const double gen = id < d.v ? log_gen + log_vocab.at(r, id) : kNegInf;
      lp[id] = static_cast<float>(logaddexp(gen, log_copy + copy_lse[id]));
      copy_lse[id] = kNegInf;
    }
    touched.clear();
  }
  return out;
}

}  // namespace engram::nn
