// Greedy and sampling search over a StepModel, batched across sentences (beam search:
// beam_search.cc; the pieces both share: search_steps.h).
// Dims: B sentences, K beam, N live rows, V classes, S padded source length, S_b sentence b's.
#include "engram/decode/search.h"

#include <algorithm>
#include <bit>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <cmath>
#include <limits>
#include <span>
#include <utility>

#include "engram/core/error.h"
#include "engram/core/kernels/parallel.h"
#include "engram/decode/search_steps.h"

namespace engram::decode {

namespace detail {

void check_source(const SourceBatch& src, int32_t eos) {
  ENGRAM_CHECK(src.batch >= 1 && static_cast<int>(src.lengths.size()) == src.batch,
               "search: source batch of {} sentences with {} lengths", src.batch, src.lengths.size());
  ENGRAM_CHECK(src.prefixes.empty() || static_cast<int>(src.prefixes.size()) == src.batch,
               "search: {} target prefixes for {} sentences", src.prefixes.size(), src.batch);
  for (const auto& p : src.prefixes) {
    ENGRAM_CHECK(std::find(p.begin(), p.end(), eos) == p.end(), "search: a target prefix holds <eos>");
    ENGRAM_CHECK(static_cast<int>(p.size()) <= kMaxOutputTokens, "search: a target prefix of {} tokens (at most {})",
                 p.size(), kMaxOutputTokens);
  }
}

// Sentence s's target prefix (empty when the batch has none).
std::span<const int32_t> prefix_of(const SourceBatch& src, int s) {
  return src.prefixes.empty() ? std::span<const int32_t>() : std::span<const int32_t>(src.prefixes[s]);
}

// Forces class `cls` on row [V] at lp: every other class -inf, `cls` keeps the model's
// log-probability (which counts in the hypothesis' score). The model must allow it.
void force_row(float* lp, int v, int32_t cls, int sentence, int step) {
  ENGRAM_CHECK(cls >= 0 && cls < v && std::isfinite(lp[cls]), "decode: sentence {}, output step {}: the target "
               "prefix's token {} is not a class the model allows here", sentence, step + 1, cls);
  const float keep = lp[cls];
  std::fill(lp, lp + v, -std::numeric_limits<float>::infinity());
  lp[cls] = keep;
}

// Copies alignment row `row` [S] of a step into `out`, trimmed to the sentence's S_b columns.
void append_alignment(const core::Tensor& a, int row, int src_len, std::vector<float>& out) {
  if (!a.data) return;
  const int s = a.shape[1];
  const float* p = a.data + static_cast<int64_t>(row) * s;
  out.insert(out.end(), p, p + std::min(src_len, s));
}

// A step's output must have one log-probability row per state row, <eos> among its classes, and
// the attention weights coverage_penalty needs.
void check_step(const StepOutput& out, int rows, const StepModel& model, const SearchOptions& o) {
  const core::Shape& shape = out.log_probs.shape;
  ENGRAM_CHECK(out.log_probs.data && shape.rank() == 2 && shape[0] == rows && shape[1] >= 1,
               "search: the model's step returned log-probabilities of shape {} for {} rows", shape, rows);
  ENGRAM_CHECK(model.eos_id() >= 0 && model.eos_id() < shape[1], "search: the model's <eos> id {} is not one of its {} "
               "classes", model.eos_id(), shape[1]);
  ENGRAM_CHECK(o.coverage_penalty == 0.0f || out.alignment.data, "search: coverage_penalty {} needs attention weights, "
               "and this model's steps return none (a model without attention)", o.coverage_penalty);
  ENGRAM_CHECK(!out.alignment.data || (out.alignment.shape.rank() == 2 && out.alignment.shape[0] == rows),
               "search: the model's step returned alignments of shape {} for {} rows", out.alignment.shape, rows);
  ENGRAM_CHECK(!out.gate.data || (out.gate.shape.rank() == 1 && out.gate.shape[0] == rows),
               "search: the model's step returned a gate of shape {} for {} rows", out.gate.shape, rows);
}


// Tokens that would complete an n-gram (n >= 1) already in `ids`: those that follow an earlier
// occurrence of its last n - 1 tokens (n = 1: every token in `ids`).
void blocked_tokens(std::span<const int32_t> ids, int n, std::vector<int32_t>& out) {
  out.clear();
  const int len = static_cast<int>(ids.size());
  if (len < n) return;
  const int32_t* tail = ids.data() + (len - (n - 1));
  for (int j = 0; j + n <= len; ++j)  // the n-gram ids[j .. j + n - 1] lies inside ids
    if (std::equal(tail, tail + (n - 1), ids.data() + j)) out.push_back(ids[j + n - 1]);
}

// Masks row `row` of a step ([V] at lp) for a hypothesis of `tokens` tokens: <eos> before
// min_length tokens, and (block_ngram_repeat > 0) the tokens that would repeat an n-gram of its
// `prefix` (all its tokens; empty when not blocking). `scratch` is reused between calls.
void mask_row(float* lp, int v, int row, int tokens, std::span<const int32_t> prefix, const SearchOptions& o,
              int32_t eos, StepMasks& masks, std::vector<int32_t>& scratch) {
  if (tokens < o.min_length) masks.mask(lp, row, eos);
  if (o.block_ngram_repeat > 0) {
    blocked_tokens(prefix, o.block_ngram_repeat, scratch);
    for (int32_t c : scratch)
      if (c >= 0 && c < v && c != eos) masks.mask(lp, row, c);
  }
}

// Adds row `row` of a step's alignment [N, S'] to a coverage row [src_len] (Σ_j α_ji so far).
void add_coverage(const core::Tensor& a, int row, int src_len, double* cov) {
  ENGRAM_CHECK(a.shape[1] >= src_len, "search: the model's alignment has {} source positions for a source of {}",
               a.shape[1], src_len);
  const float* p = a.data + static_cast<int64_t>(row) * a.shape[1];
  for (int i = 0; i < src_len; ++i) cov[i] += p[i];
}

// GNMT's coverage penalty cp = β Σ_{i < src_len} log(min(c_i, 1)) of a coverage row c (0 when β = 0).
double coverage_term(const double* cov, int src_len, float beta) {
  if (beta == 0.0f) return 0.0;
  double sum = 0;
  for (int i = 0; i < src_len; ++i) sum += std::log(std::min(cov[i], 1.0));
  return beta * sum;
}

}  // namespace detail

namespace {

using namespace detail;

// The surviving rows `keep` (rising) of n, reordered so that the survivors past the new row count
// fill the gaps that finished rows leave below it: keep[i] >= i, and a state moves only those rows
// (decode::gather). Arg-max rows are independent, so their order is free; sampling draws from
// one generator in row order and keeps its rows in order (same seed, same samples).
void fill_gaps(std::vector<int32_t>& keep) {
  const int32_t m = static_cast<int32_t>(keep.size());
  const auto tail = std::lower_bound(keep.begin(), keep.end(), m);  // the survivors at rows >= m
  std::vector<int32_t> out(m);
  auto head = keep.begin(), next = tail;
  for (int32_t i = 0; i < m; ++i) out[i] = head != tail && *head == i ? *head++ : *next++;
  keep.swap(out);
}

// One pass of greedy decoding with a token chooser (arg-max or a sample) per row.
template <class Choose>
std::vector<Hypothesis> run_greedy(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                   const SearchOptions& options, bool fill_rows, Choose&& choose) {
  check_source(src, model.eos_id());
  options.validate();
  g.reset();
  std::unique_ptr<DecodeState> state = model.encode(g, src);
  const int b = src.batch;
  const bool masking = options.min_length > 0 || options.block_ngram_repeat > 0;
  const bool coverage = options.coverage_penalty > 0.0f;
  std::vector<Hypothesis> hyps(b);
  std::vector<std::vector<double>> cov(b);  // [B][S_b] Σ_j α_ji when coverage_penalty > 0
  std::vector<int32_t> row_sentence(b), prev(b, model.go_id());  // [N]
  for (int i = 0; i < b; ++i) {
    row_sentence[i] = i;
    hyps[i].src_len = src.lengths[i];
    if (coverage) cov[i].assign(std::max(0, src.lengths[i]), 0.0);
  }
  StepMasks masks;
  std::vector<int32_t> scratch, keep, chosen, next_prev, next_sentence;  // [N]
  while (!row_sentence.empty()) {
    g.reset();
    const int n = static_cast<int>(row_sentence.size());
    StepOutput out = model.step(g, *state, prev);
    check_step(out, n, model, options);
    const int v = out.log_probs.shape[1];
    masks.start(n);
    keep.clear();
    chosen.assign(n, 0);
    for (int r = 0; r < n; ++r) {
      Hypothesis& h = hyps[row_sentence[r]];
      float* lp = out.log_probs.data + static_cast<int64_t>(r) * v;
      const std::span<const int32_t> forced = prefix_of(src, row_sentence[r]);
      const int len = static_cast<int>(h.ids.size());
      if (len < static_cast<int>(forced.size())) force_row(lp, v, forced[len], row_sentence[r], len);
      else if (masking) mask_row(lp, v, r, len, h.ids, options, model.eos_id(), masks, scratch);
      int32_t tok = choose(lp, v);
      if (!std::isfinite(lp[tok]) && masks.any(r)) {  // the search's masks left nothing: lift them
        masks.lift(lp, r);
        tok = choose(lp, v);
      }
      // A model masks what it does not allow with -inf; it must allow something.
      ENGRAM_CHECK(std::isfinite(lp[tok]), "decode: sentence {}, output step {}: the model allows no class (every "
                   "log-probability is -inf or NaN)", row_sentence[r], h.ids.size() + 1);
      h.log_prob += lp[tok];
      if (options.on_token) {
        const int cols = out.alignment.data ? std::min(h.src_len, static_cast<int>(out.alignment.shape[1])) : 0;
        const float* a = out.alignment.data ? out.alignment.data + static_cast<int64_t>(r) * out.alignment.shape[1] : nullptr;
        options.on_token(row_sentence[r], tok, std::span<const float>(a, static_cast<size_t>(cols)));
      }
      if (coverage) add_coverage(out.alignment, r, h.src_len, cov[row_sentence[r]].data());
      if (options.alignments) append_alignment(out.alignment, r, h.src_len, h.alignment);
      if (options.alignments && out.gate.data) h.gate.push_back(out.gate.data[r]);
      bool done = tok == model.eos_id();
      if (done) {
        h.finished = true;
      } else {
        h.ids.push_back(tok);
        done = static_cast<int>(h.ids.size()) >=
               static_cast<int>(prefix_of(src, row_sentence[r]).size()) + max_output_length(h.src_len, options);
      }
      if (!done) keep.push_back(r);
      chosen[r] = tok;
    }
    if (!keep.empty() && static_cast<int>(keep.size()) != n) {
      if (fill_rows) fill_gaps(keep);
      model.reorder(*state, keep);
    }
    next_prev.clear();
    next_sentence.clear();
    for (int32_t r : keep) next_prev.push_back(chosen[r]), next_sentence.push_back(row_sentence[r]);
    prev.swap(next_prev);
    row_sentence.swap(next_sentence);
  }
  for (int i = 0; i < b; ++i) {
    Hypothesis& h = hyps[i];
    h.score = h.log_prob / length_penalty(static_cast<int>(h.ids.size()) + (h.finished ? 1 : 0), options.alpha) +
              coverage_term(cov[i].data(), coverage ? h.src_len : 0, options.coverage_penalty);
  }
  return hyps;
}





}  // namespace

// One pass: each lane keeps its largest value and the first index holding it (a later equal value
// does not replace it); the lanes' largest value, at the lowest of the indices that hold it, is the
// first index of the maximum. NaN entries never win (> is false), except lp[0], which every lane
// starts from. With AVX-512: 4 x 16 lanes, so that the compare-and-keep chains overlap.
int32_t arg_max(const float* lp, int v) {
  if (v <= 0 || std::isnan(lp[0])) return 0;
  int p = 0;
  float most = lp[0];
  int32_t first = 0;
  // Merges a lane's (value, index) into (most, first).
  auto merge = [&](float x, int32_t i) {
    if (x > most || (x == most && i < first)) most = x, first = i;
  };
#if defined(__AVX512F__)
  constexpr int kLanes = 16, kChains = 4;
  __m512 best[kChains];
  __m512i at[kChains], idx[kChains];
  for (int c = 0; c < kChains; ++c) {
    best[c] = _mm512_set1_ps(lp[0]);
    at[c] = _mm512_setzero_si512();
    idx[c] = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              _mm512_set1_epi32(c * kLanes));
  }
  const __m512i step = _mm512_set1_epi32(kChains * kLanes);
  for (; p + kChains * kLanes <= v; p += kChains * kLanes)
    for (int c = 0; c < kChains; ++c) {
      const __m512 x = _mm512_loadu_ps(lp + p + c * kLanes);
      const __mmask16 more = _mm512_cmp_ps_mask(x, best[c], _CMP_GT_OQ);
      best[c] = _mm512_mask_mov_ps(best[c], more, x);
      at[c] = _mm512_mask_mov_epi32(at[c], more, idx[c]);
      idx[c] = _mm512_add_epi32(idx[c], step);
    }
  for (int c = 0; c < kChains; ++c) {
    alignas(64) float value[kLanes];
    alignas(64) int32_t index[kLanes];
    _mm512_store_ps(value, best[c]);
    _mm512_store_si512(index, at[c]);
    for (int l = 0; l < kLanes; ++l) merge(value[l], index[l]);
  }
#endif
  for (; p < v; ++p) merge(lp[p], p);  // the tail's indices are above every lane's
  return first;
}

void SearchOptions::validate() const {
  ENGRAM_CHECK(beam >= 1 && beam <= kMaxBeam, "search: beam {} must be in [1, {}]", beam, kMaxBeam);
  ENGRAM_CHECK(n_best >= 1 && n_best <= beam, "search: n_best {} must be in [1, beam = {}]", n_best, beam);
  ENGRAM_CHECK(max_length >= 1 && max_length <= kMaxOutputTokens, "search: max_length {} must be in [1, {}]",
               max_length, kMaxOutputTokens);
  ENGRAM_CHECK(std::isfinite(max_length_ratio) && max_length_ratio >= 0.0f && max_length_ratio <= 100.0f,
               "search: max_length_ratio {} must be in [0, 100]", max_length_ratio);
  ENGRAM_CHECK(max_length_offset >= 0 && max_length_offset <= kMaxOutputTokens,
               "search: max_length_offset {} must be in [0, {}]", max_length_offset, kMaxOutputTokens);
  ENGRAM_CHECK(std::isfinite(alpha) && alpha >= 0.0f && alpha <= 10.0f, "search: alpha {} must be in [0, 10]", alpha);
  ENGRAM_CHECK(min_length >= 0 && min_length <= kMaxOutputTokens, "search: min_length {} must be in [0, {}]",
               min_length, kMaxOutputTokens);
  ENGRAM_CHECK(block_ngram_repeat >= 0 && block_ngram_repeat <= kMaxOutputTokens,
               "search: block_ngram_repeat {} must be in [0, {}]", block_ngram_repeat, kMaxOutputTokens);
  ENGRAM_CHECK(std::isfinite(coverage_penalty) && coverage_penalty >= 0.0f && coverage_penalty <= 10.0f,
               "search: coverage_penalty {} must be in [0, 10]", coverage_penalty);
  ENGRAM_CHECK(sampling_topk >= 0, "search: sampling_topk {} must be >= 0 (0 = every token)", sampling_topk);
  ENGRAM_CHECK(std::isfinite(sampling_topp) && sampling_topp > 0.0f && sampling_topp <= 1.0f,
               "search: sampling_topp {} must be in (0, 1]", sampling_topp);
  ENGRAM_CHECK(std::isfinite(temperature) && temperature > 0.0f && temperature <= 100.0f,
               "search: temperature {} must be in (0, 100]", temperature);
  ENGRAM_CHECK(sampling_topk == 1 || (beam == 1 && n_best == 1),
               "search: sampling (sampling_topk {}) draws one output: beam and n_best must be 1", sampling_topk);
}

double length_penalty(int length, float alpha) {
  return alpha == 0.0f ? 1.0 : std::pow((5.0 + length) / 6.0, static_cast<double>(alpha));
}

// The k best classes of one row, best first, ties to the lower index: one pass that keeps the best
// k so far in order (most classes fail the first comparison with the k-th best). Once k are kept,
// blocks of 16 classes none of which beats the k-th best are skipped with one vectorised test.
void top_k(const float* lp, int v, int k, std::vector<int32_t>& best) {
  best.clear();
  auto consider = [&](int32_t i) {
    if (static_cast<int>(best.size()) == k && !(lp[i] > lp[best.back()])) return;  // not better than the k-th
    if (static_cast<int>(best.size()) == k) best.pop_back();
    auto pos = best.end();  // after every kept class at least as good (they have lower indices)
    while (pos != best.begin() && lp[*(pos - 1)] < lp[i]) --pos;
    best.insert(pos, i);
  };
  int32_t i = 0;
  for (; i < v && static_cast<int>(best.size()) < k; ++i) consider(i);
#if defined(__AVX512F__)
  // 64 classes at a time: skipped when none beats the k-th best; else only the classes that beat
  // it are considered, in order (a class that does not beat the k-th best now cannot after an
  // insertion, which only raises it).
  for (; i + 64 <= v; i += 64) {
    const __m512 kth = _mm512_set1_ps(lp[best.back()]);
    __mmask16 beats[4];
    for (int q = 0; q < 4; ++q) beats[q] = _mm512_cmp_ps_mask(_mm512_loadu_ps(lp + i + 16 * q), kth, _CMP_GT_OQ);
    if (!(beats[0] | beats[1] | beats[2] | beats[3])) continue;
    for (int q = 0; q < 4; ++q)
      for (uint32_t bits = beats[q]; bits != 0; bits &= bits - 1) consider(i + 16 * q + std::countr_zero(bits));
  }
#endif
  constexpr int kBlock = 16;
  for (; i + kBlock <= v; i += kBlock) {
    const float kth = lp[best.back()];
    int any = 0;
    for (int j = 0; j < kBlock; ++j) any |= lp[i + j] > kth ? 1 : 0;
    if (!any) continue;
    for (int j = 0; j < kBlock; ++j) consider(i + j);
  }
  for (; i < v; ++i) consider(i);
}

int max_output_length(int src_len, const SearchOptions& o) {
  const int by_ratio = static_cast<int>(std::floor(o.max_length_ratio * src_len)) + o.max_length_offset;
  return std::max(1, std::min(o.max_length, by_ratio));
}

std::vector<Hypothesis> greedy_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options) {
  return run_greedy(g, model, src, options, true, arg_max);
}

std::vector<Hypothesis> sample_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options, float temperature, core::Rng& rng, int topk,
                                      float topp) {
  ENGRAM_CHECK(temperature > 0.0f, "search: sampling temperature {} must be > 0", temperature);
  ENGRAM_CHECK(topk >= 0, "search: sampling top_k {} must be >= 0", topk);
  ENGRAM_CHECK(topp > 0.0f && topp <= 1.0f, "search: sampling top_p {} must be in (0, 1]", topp);
  std::vector<double> p;
  std::vector<int32_t> cand;  // candidate classes, most likely first when cut by top_k / top_p
  return run_greedy(g, model, src, options, false, [&](const float* lp, int v) {
    const double mx = *std::max_element(lp, lp + v);
    if (topk > 0 && topk < v) {
      top_k(lp, v, topk, cand);
    } else {
      cand.resize(v);
      for (int i = 0; i < v; ++i) cand[i] = i;
      if (topp < 1.0f) std::stable_sort(cand.begin(), cand.end(), [&](int32_t a, int32_t b) { return lp[a] > lp[b]; });
    }
    const size_t n = cand.size();
    p.resize(n);
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += p[i] = std::exp((lp[cand[i]] - mx) / temperature);
    size_t keep = n;
    if (topp < 1.0f && total > 0) {  // the nucleus: the first classes whose mass reaches top_p
      double mass = 0;
      for (keep = 0; keep < n;) {
        mass += p[keep++];
        if (mass >= topp * total) break;
      }
      total = mass;
    }
    double u = rng.uniform() * total;
    for (size_t i = 0; i < keep; ++i)
      if ((u -= p[i]) < 0) return cand[i];
    return static_cast<int32_t>(arg_max(lp, v));
  });
}


std::vector<std::vector<Hypothesis>> search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                            const SearchOptions& options) {
  if (options.sampling_topk != 1) {
    options.validate();  // beam 1
    core::Rng rng(options.seed);
    std::vector<std::vector<Hypothesis>> out;
    for (Hypothesis& h : sample_search(g, model, src, options, options.temperature, rng,
                                       std::max(0, options.sampling_topk), options.sampling_topp))
      out.push_back({std::move(h)});
    return out;
  }
  if (options.beam == 1 && options.n_best == 1) {
    std::vector<std::vector<Hypothesis>> out;
    for (Hypothesis& h : greedy_search(g, model, src, options)) out.push_back({std::move(h)});
    return out;
  }
  return beam_search(g, model, src, options);
}

}  // namespace engram::decode
