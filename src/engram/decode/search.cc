// Greedy, sampling and beam search over a StepModel, batched across sentences.
// Dims: B sentences, K beam, N live rows, V classes, S padded source length, S_b sentence b's.
#include "engram/decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <utility>

#include "engram/core/error.h"
#include "engram/core/kernels/parallel.h"

namespace engram::decode {

namespace {

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
}

// The search's own masks on one step's log-probs [N, V] (min_length's <eos>, blocked n-grams),
// written into the step output in place as -inf. The values they replace are kept per row, so a
// row left with no class the model allows gets them back (lift).
class StepMasks {
 public:
  void start(int rows) {
    saved_.resize(rows);
    for (auto& row : saved_) row.clear();
  }
  void mask(float* lp, int row, int32_t cls) {
    saved_[row].push_back({cls, lp[cls]});
    lp[cls] = -std::numeric_limits<float>::infinity();
  }
  bool any(int row) const { return !saved_[row].empty(); }
  void lift(float* lp, int row) {  // last masked first: a class masked twice gets its first value
    for (auto it = saved_[row].rbegin(); it != saved_[row].rend(); ++it) lp[it->first] = it->second;
    saved_[row].clear();
  }

 private:
  std::vector<std::vector<std::pair<int32_t, float>>> saved_;  // [N] (class, replaced value)
};

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

// One pass of greedy decoding with a token chooser (arg-max or a sample) per row.
template <class Choose>
std::vector<Hypothesis> run_greedy(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                   const SearchOptions& options, Choose&& choose) {
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
  std::vector<int32_t> scratch;
  while (!row_sentence.empty()) {
    g.reset();
    const int n = static_cast<int>(row_sentence.size());
    StepOutput out = model.step(g, *state, prev);
    check_step(out, n, model, options);
    const int v = out.log_probs.shape[1];
    masks.start(n);
    std::vector<int32_t> keep, next_prev, next_sentence;
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
      bool done = tok == model.eos_id();
      if (done) {
        h.finished = true;
      } else {
        h.ids.push_back(tok);
        done = static_cast<int>(h.ids.size()) >=
               static_cast<int>(prefix_of(src, row_sentence[r]).size()) + max_output_length(h.src_len, options);
      }
      if (!done) {
        keep.push_back(r);
        next_prev.push_back(tok);
        next_sentence.push_back(row_sentence[r]);
      }
    }
    if (!keep.empty() && static_cast<int>(keep.size()) != n) model.reorder(*state, keep);
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

int32_t arg_max(const float* lp, int v) { return static_cast<int32_t>(std::max_element(lp, lp + v) - lp); }

// The prefix tree of a beam search: every prefix ever kept is a node (its last token, its parent
// prefix, and the α of the step that emitted the token when recorded).
struct PrefixTree {
  std::vector<int32_t> parent, token;  // per node; parent -1 = the empty prefix
  std::vector<float> align;            // [nodes, S] when alignments are recorded
};

struct Ended {
  double log_prob, score;
  int32_t node;                  // last token's node (-1: the empty prefix)
  bool finished;                 // ended with <eos>
  std::vector<float> eos_align;  // α of the <eos> step
};

struct Candidate {
  double log_prob;
  int32_t row, token;
};

}  // namespace

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
  return run_greedy(g, model, src, options, arg_max);
}

std::vector<Hypothesis> sample_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options, float temperature, core::Rng& rng, int topk,
                                      float topp) {
  ENGRAM_CHECK(temperature > 0.0f, "search: sampling temperature {} must be > 0", temperature);
  ENGRAM_CHECK(topk >= 0, "search: sampling top_k {} must be >= 0", topk);
  ENGRAM_CHECK(topp > 0.0f && topp <= 1.0f, "search: sampling top_p {} must be in (0, 1]", topp);
  std::vector<double> p;
  std::vector<int32_t> cand;  // candidate classes, most likely first when cut by top_k / top_p
  return run_greedy(g, model, src, options, [&](const float* lp, int v) {
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

namespace {

// Beam search over a batch of sentences, one step at a time. Live rows of sentence s are
// [begin, begin + count[s]) in the model's state, sentences in `active_` order. The first step
// runs one row per sentence (the empty prefix: the state as encoded) and expands it into up to K
// prefixes; from then on each sentence has up to K rows. A step: the model's log-probabilities,
// then forced prefix tokens and the search's masks (prepare_rows), coverage (add_step_coverage),
// each row's 2K best classes (best_classes), each sentence's K best extensions and its ended
// hypotheses (select), and the state reordered to the surviving rows (advance).
// Dims: B sentences, N live rows, K beam, V classes, W = max S_b (coverage), S α width.
class BeamSearch {
 public:
  BeamSearch(const StepModel& model, const SourceBatch& src, const SearchOptions& options);
  std::vector<std::vector<Hypothesis>> run(core::Graph& g);

 private:
  void prepare_rows(StepOutput& out, int t, int rows, int v);
  void add_step_coverage(const StepOutput& out, int rows);
  void best_classes(StepOutput& out, int rows, int v);
  void select(const StepOutput& out, int t, int v);
  // The state reordered to the rows select() kept; false when no sentence is left.
  bool advance(DecodeState& state);
  std::vector<std::vector<Hypothesis>> results() const;

  const StepModel& model_;
  const SourceBatch& src_;
  const SearchOptions& o_;
  const int k_, b_;
  const bool masking_, coverage_;
  std::vector<int> active_, count_, max_len_;
  std::vector<double> row_lp_;      // [N] prefix log-probability
  std::vector<int32_t> row_node_;   // [N] prefix node
  std::vector<int32_t> prev_;       // [N] each row's last token
  std::vector<std::vector<Ended>> ended_;  // [B]
  int cov_width_ = 0;               // W: coverage rows are [W], sentence s using its first S_s
  std::vector<double> row_cov_;     // [N, W] Σ_j α_ji of each prefix
  std::vector<double> step_cov_;    // [N, W] ... and this step's α
  PrefixTree tree_;
  int align_width_ = 0;             // S of the recorded α rows
  std::vector<Candidate> cands_;
  std::vector<int32_t> row_best_;   // [N, per_row] each live row's best classes, best first
  int per_row_ = 0;
  std::vector<double> scores_;
  std::vector<int32_t> row_sentence_, prefix_, scratch_;  // [N]; one prefix's tokens
  StepMasks masks_;
  // select()'s survivors: rows, their tokens, nodes, log-probabilities and coverage.
  std::vector<int32_t> live_rows_, live_prev_, live_node_;
  std::vector<double> live_lp_, live_cov_;
  std::vector<int> next_active_, next_count_;
};

BeamSearch::BeamSearch(const StepModel& model, const SourceBatch& src, const SearchOptions& options)
    : model_(model),
      src_(src),
      o_(options),
      k_(options.beam),
      b_(src.batch),
      masking_(options.min_length > 0 || options.block_ngram_repeat > 0),
      coverage_(options.coverage_penalty > 0.0f),
      active_(b_),
      count_(b_, 1),
      max_len_(b_),
      row_lp_(b_, 0.0),
      row_node_(b_, -1),
      prev_(b_, model.go_id()),
      ended_(b_) {
  for (int s = 0; s < b_; ++s) {
    active_[s] = s;
    max_len_[s] = static_cast<int>(prefix_of(src, s).size()) + max_output_length(src.lengths[s], options);
    cov_width_ = std::max(cov_width_, src.lengths[s]);
  }
  if (!coverage_) cov_width_ = 0;
  row_cov_.assign(static_cast<size_t>(b_) * cov_width_, 0.0);
}

// Every live prefix has t tokens: a target prefix's token is forced while t is inside it; the
// search's masks (min_length, blocked n-grams) go in first otherwise.
void BeamSearch::prepare_rows(StepOutput& out, int t, int rows, int v) {
  row_sentence_.clear();
  for (int s : active_) row_sentence_.insert(row_sentence_.end(), count_[s], s);
  masks_.start(rows);
  for (int r = 0; r < rows; ++r) {
    const std::span<const int32_t> forced = prefix_of(src_, row_sentence_[r]);
    if (t < static_cast<int>(forced.size()))
      force_row(out.log_probs.data + static_cast<int64_t>(r) * v, v, forced[t], row_sentence_[r], t);
  }
  if (!masking_) return;
  for (int r = 0; r < rows; ++r) {
    if (t < static_cast<int>(prefix_of(src_, row_sentence_[r]).size())) continue;
    prefix_.clear();
    if (o_.block_ngram_repeat > 0) {
      for (int32_t node = row_node_[r]; node >= 0; node = tree_.parent[node]) prefix_.push_back(tree_.token[node]);
      std::reverse(prefix_.begin(), prefix_.end());
    }
    mask_row(out.log_probs.data + static_cast<int64_t>(r) * v, v, r, t, prefix_, o_, model_.eos_id(), masks_,
             scratch_);
  }
}

void BeamSearch::add_step_coverage(const StepOutput& out, int rows) {
  if (!coverage_) return;
  step_cov_.assign(row_cov_.begin(), row_cov_.end());
  for (int r = 0; r < rows; ++r) {
    double* cov = step_cov_.data() + static_cast<int64_t>(r) * cov_width_;
    add_coverage(out.alignment, r, src_.lengths[row_sentence_[r]], cov);
  }
}

// Every live row's 2K best classes, rows split over the threads (each row independent, so the
// result does not depend on the split).
void BeamSearch::best_classes(StepOutput& out, int rows, int v) {
  per_row_ = std::min(2 * k_, v);
  row_best_.resize(static_cast<size_t>(rows) * per_row_);
  auto best_of_row = [&](int64_t r, std::vector<int32_t>& order) {
    top_k(out.log_probs.data + r * v, v, per_row_, order);
    std::copy(order.begin(), order.end(), row_best_.begin() + r * per_row_);
  };
  core::kernels::parallel_for(rows, 1, [&](int64_t r0, int64_t r1) {
    std::vector<int32_t> order;
    for (int64_t r = r0; r < r1; ++r) best_of_row(r, order);
  });
  if (!masking_) return;
  for (int r = 0; r < rows; ++r) {  // a row the search's masks left no allowed class gets them lifted
    float* lp = out.log_probs.data + static_cast<int64_t>(r) * v;
    if (masks_.any(r) && !std::isfinite(lp[row_best_[static_cast<size_t>(r) * per_row_]])) {
      masks_.lift(lp, r);
      best_of_row(r, scratch_);
    }
  }
}

void BeamSearch::select(const StepOutput& out, int t, int v) {
  const int level = t + 1;  // tokens of a prefix made now
  const double lp_level = length_penalty(level, o_.alpha);
  const bool record_align = o_.alignments && out.alignment.data;
  const int s_pad = record_align ? out.alignment.shape[1] : 0;
  if (record_align) align_width_ = s_pad;
  live_rows_.clear(), live_prev_.clear(), live_node_.clear(), live_lp_.clear(), live_cov_.clear();
  next_active_.clear(), next_count_.clear();
  int begin = 0;
  for (size_t a = 0; a < active_.size(); ++a) {
    const int s = active_[a];
    // The 2K best (row, token) extensions of this sentence's live prefixes.
    cands_.clear();
    for (int r = begin; r < begin + count_[s]; ++r) {
      const float* lp = out.log_probs.data + static_cast<int64_t>(r) * v;
      const int32_t* best = row_best_.data() + static_cast<int64_t>(r) * per_row_;
      for (int i = 0; i < per_row_; ++i)  // classes the model masks (-inf) or broke (NaN) never enter a beam
        if (std::isfinite(lp[best[i]])) cands_.push_back({row_lp_[r] + lp[best[i]], r, best[i]});
    }
    begin += count_[s];
    std::stable_sort(cands_.begin(), cands_.end(),
                     [](const Candidate& x, const Candidate& y) { return x.log_prob > y.log_prob; });
    const size_t first_new = live_rows_.size();
    int alive = 0;
    for (size_t rank = 0; rank < cands_.size() && alive < k_; ++rank) {
      const Candidate& c = cands_[rank];
      const double* cov = step_cov_.data() + static_cast<int64_t>(c.row) * cov_width_;
      if (c.token == model_.eos_id()) {  // a finished hypothesis, if it ranks within the beam
        if (static_cast<int>(rank) >= k_) continue;
        const double score = c.log_prob / lp_level + coverage_term(cov, src_.lengths[s], o_.coverage_penalty);
        Ended e{c.log_prob, score, row_node_[c.row], true, {}};
        if (o_.alignments) append_alignment(out.alignment, c.row, src_.lengths[s], e.eos_align);
        ended_[s].push_back(std::move(e));
        continue;
      }
      tree_.parent.push_back(row_node_[c.row]);
      tree_.token.push_back(c.token);
      if (record_align) {
        const float* al = out.alignment.data + static_cast<int64_t>(c.row) * s_pad;
        tree_.align.insert(tree_.align.end(), al, al + s_pad);
      }
      live_rows_.push_back(c.row);
      live_prev_.push_back(c.token);
      live_node_.push_back(static_cast<int32_t>(tree_.token.size()) - 1);
      live_lp_.push_back(c.log_prob);
      if (coverage_) live_cov_.insert(live_cov_.end(), cov, cov + cov_width_);
      ++alive;
    }
    bool done = alive == 0;
    if (!done && level >= max_len_[s]) {  // out of length: the live prefixes end unfinished
      for (size_t i = first_new; i < live_rows_.size(); ++i) {
        const double cp = coverage_term(live_cov_.data() + i * cov_width_, src_.lengths[s], o_.coverage_penalty);
        ended_[s].push_back({live_lp_[i], live_lp_[i] / lp_level + cp, live_node_[i], false, {}});
      }
      done = true;
    }
    if (!done && static_cast<int>(ended_[s].size()) >= k_) {
      scores_.clear();
      for (const Ended& e : ended_[s]) scores_.push_back(e.score);
      std::nth_element(scores_.begin(), scores_.begin() + (k_ - 1), scores_.end(), std::greater<double>());
      done = live_lp_[first_new] / lp_level <= scores_[k_ - 1];  // + cp's bound, 0
    }
    if (done) {  // the sentence leaves the state
      live_rows_.resize(first_new);
      live_prev_.resize(first_new);
      live_node_.resize(first_new);
      live_lp_.resize(first_new);
      live_cov_.resize(first_new * cov_width_);
    } else {
      next_active_.push_back(s);
      next_count_.push_back(alive);
    }
  }
}

bool BeamSearch::advance(DecodeState& state) {
  std::vector<int> next_count_by_sentence(b_, 0);
  for (size_t a = 0; a < next_active_.size(); ++a) next_count_by_sentence[next_active_[a]] = next_count_[a];
  active_.swap(next_active_);
  count_.swap(next_count_by_sentence);
  if (active_.empty()) return false;
  model_.reorder(state, live_rows_);
  prev_.swap(live_prev_);
  row_lp_.swap(live_lp_);
  row_node_.swap(live_node_);
  row_cov_.swap(live_cov_);
  return true;
}

// n-best lists: best score first (stable: earlier-ended first among equal scores).
std::vector<std::vector<Hypothesis>> BeamSearch::results() const {
  std::vector<std::vector<Hypothesis>> result(b_);
  for (int s = 0; s < b_; ++s) {
    std::vector<Ended> es = ended_[s];
    std::stable_sort(es.begin(), es.end(), [](const Ended& x, const Ended& y) { return x.score > y.score; });
    const int n = std::min<int>(o_.n_best, static_cast<int>(es.size()));
    for (int i = 0; i < n; ++i) {
      const Ended& e = es[i];
      Hypothesis h;
      h.log_prob = e.log_prob;
      h.score = e.score;
      h.finished = e.finished;
      h.src_len = src_.lengths[s];
      std::vector<int32_t> nodes;
      for (int32_t node = e.node; node >= 0; node = tree_.parent[node]) nodes.push_back(node);
      std::reverse(nodes.begin(), nodes.end());
      for (int32_t node : nodes) {
        h.ids.push_back(tree_.token[node]);
        if (!tree_.align.empty()) {
          const float* al = tree_.align.data() + static_cast<int64_t>(node) * align_width_;
          h.alignment.insert(h.alignment.end(), al, al + std::min(h.src_len, align_width_));
        }
      }
      h.alignment.insert(h.alignment.end(), e.eos_align.begin(), e.eos_align.end());
      result[s].push_back(std::move(h));
    }
  }
  return result;
}

std::vector<std::vector<Hypothesis>> BeamSearch::run(core::Graph& g) {
  g.reset();
  std::unique_ptr<DecodeState> state = model_.encode(g, src_);
  for (int t = 0; !active_.empty(); ++t) {
    g.reset();
    const int rows = static_cast<int>(prev_.size());
    StepOutput out = model_.step(g, *state, prev_);
    check_step(out, rows, model_, o_);
    const int v = out.log_probs.shape[1];
    prepare_rows(out, t, rows, v);
    add_step_coverage(out, rows);
    best_classes(out, rows, v);
    select(out, t, v);
    if (!advance(*state)) break;
  }
  return results();
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                                 const SearchOptions& options) {
  check_source(src, model.eos_id());
  options.validate();
  ENGRAM_CHECK(!options.on_token, "search: token streaming is greedy or sampling only, not beam search");
  return BeamSearch(model, src, options).run(g);
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
