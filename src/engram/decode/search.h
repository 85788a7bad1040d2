// Search over a StepModel: greedy, beam search with the GNMT length and coverage penalties and
// n-best lists, and ancestral sampling; all three honour a minimum length and n-gram blocking.
// Every search decodes a whole batch of sentences at once: all live rows (B greedy rows, up to B*K
// beams) go through one model step, and sentences that are done are dropped from the state
// (reorder) so they cost nothing afterwards.
// Dims: B sentences, K beam size, N live rows, V next-token classes (read from every step's
// output, so it may differ from batch to batch: a copy model's V + X), S source length of a sentence.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engram/core/graph.h"
#include "engram/core/rng.h"
#include "engram/decode/step_model.h"

namespace engram::decode {

// Limits (docs/limits.md): a beam of at most kMaxBeam rows per sentence, at most kMaxOutputTokens
// tokens per hypothesis.
constexpr int kMaxBeam = 1024;
constexpr int kMaxOutputTokens = 1024;

// How the options act together (every search; "tokens" are output tokens, <eos> not counted):
// - The max length L = min(max_length, floor(max_length_ratio * S) + max_length_offset), at least
//   1, bounds every hypothesis: it stops, unfinished, at L tokens.
// - min_length: <eos> is masked (-inf) while a hypothesis has fewer than min_length tokens. It
//   never lengthens a hypothesis past L: with min_length >= L every hypothesis stops unfinished at L.
// - block_ngram_repeat N: a token that would complete an N-gram already in the hypothesis is masked
//   (N = 1: no token twice). <eos> is never blocked.
//   These two masks remove classes; the other log-probabilities are not renormalised, so log_prob
//   stays the model's. Where they would leave a row no class the model allows (a pointer model
//   whose only allowed class is <eos>), that row's masks are lifted for that step, so the
//   hypothesis still ends as the model requires. A row where the model itself allows nothing is an error
//   in greedy and sampling and drops out of the beam, as before.
// - Score of a hypothesis of n = tokens + (finished ? 1 : 0) steps, source length S:
//     score = log p / lp(n) + cp,  lp(n) = ((5 + n) / 6)^alpha,
//     cp = coverage_penalty * Σ_{i < S} log(min(Σ_j α_ji, 1))   (GNMT, Wu et al. 2016, eq. 14)
//   over the α rows of all n steps (the <eos> step included); padded source positions (>= S)
//   never count. cp <= 0, and is -inf when a source position got no attention at all.
//   As in the paper, the normalised score (lp and cp) ranks finished hypotheses only: the beam keeps
//   its K live prefixes by raw log-probability, the n-best list is ordered by score, and a sentence
//   stops when its K-th best ended score is at least its best live prefix's log p / lp(n) + 0 (cp
//   can still rise to 0 as the prefix covers more source), which is exact for alpha = 0 at any β.
//   Greedy and sampling report the same score; cp does not change their choices.
//   coverage_penalty > 0 needs a model whose steps return alignments (an error otherwise).
// - Target prefix (SourceBatch::prefixes, CTranslate2's target_prefix): sentence b's first
//   |P_b| output tokens are P_b, each at the model's own log-probability (which counts in
//   log_prob and the score; a token the model does not allow is an error), then decoding is free;
//   the max length L counts the free tokens, so a hypothesis holds at most |P_b| + L. A beam holds
//   one live prefix while the target prefix is forced. The prefix is part of Hypothesis::ids.
// Defaults (0) switch min_length, block_ngram_repeat and coverage_penalty off.
struct SearchOptions {
  int beam = 1;                   // K; 1 with n_best 1 = greedy
  int n_best = 1;                 // hypotheses returned per sentence, best first (<= beam)
  float alpha = 0.0f;             // length penalty lp(n) = ((5 + n) / 6)^alpha; score = log p / lp + cp
  float max_length_ratio = 2.0f;  // a hypothesis has at most ratio * S + max_length_offset tokens
  int max_length_offset = 10;
  int max_length = 256;           // and never more than this
  int min_length = 0;             // <eos> masked before this many tokens (never past the max length)
  int block_ngram_repeat = 0;     // N: no N-gram twice in a hypothesis (0 = off)
  float coverage_penalty = 0.0f;  // β of GNMT's coverage penalty cp (0 = off)
  bool alignments = false;        // record α (one row per output token)
  // Random sampling instead of the arg-max (search() then runs sample_search; beam 1 only):
  // sampling_topk != 1 turns it on (0 = every token), sampling_topp cuts the candidates to the
  // smallest most-likely set whose probability reaches it, temperature sharpens / flattens p,
  // seed seeds each search() call.
  int sampling_topk = 1;
  float sampling_topp = 1.0f;
  float temperature = 1.0f;
  uint64_t seed = 1;
  // Token streaming (greedy and sampling only; CTranslate2's token streaming): called as each
  // sentence's next token is chosen, <eos> included, with that step's α over the sentence's
  // source [S_b] (empty for a model without attention). Not a visited option; null = off.
  std::function<void(int sentence, int32_t token, std::span<const float> alpha)> on_token{};

  template <class V>
  void visit(V& v) {
    v("beam", beam, "beam size (1 = greedy)");
    v("n_best", n_best, "hypotheses per sentence (<= beam)");
    v("alpha", alpha, "GNMT length penalty exponent (0 = raw log-probability)");
    v("max_length_ratio", max_length_ratio, "max output tokens per source token");
    v("max_length_offset", max_length_offset, "max output tokens added to ratio * source length");
    v("max_length", max_length, "absolute max output tokens");
    v("min_length", min_length, "min output tokens before <eos> (never past the max length; 0 = off)");
    v("block_ngram_repeat", block_ngram_repeat, "forbid repeating any n-gram of this size in a hypothesis (0 = off)");
    v("coverage_penalty", coverage_penalty,
      "GNMT coverage penalty beta: score += beta * sum_i log(min(attention to source token i, 1)) (0 = off)");
  }
  void validate() const;
};

struct Hypothesis {
  std::vector<int32_t> ids;      // output tokens, without <go> and <eos>
  double log_prob = 0;           // Σ log p of the tokens, <eos> included when finished
  double score = 0;              // log_prob / lp(length) + cp, length = ids + (finished ? 1 : 0)
  bool finished = false;         // ended with <eos> (false: stopped at the max length)
  int src_len = 0;               // S of this sentence
  std::vector<float> alignment;  // [R, S], R = length (ids, then <eos> if finished); empty unless
                                 // alignments were requested and the model has attention
  std::vector<float> gate;       // [R] the steps' StepOutput::gate, recorded as the alignment; empty
                                 // unless alignments were requested and the model has a gate
};

// GNMT: ((5 + length) / 6)^alpha.
double length_penalty(int length, float alpha);
// Max output tokens for a source of `src_len` tokens (at least 1).
int max_output_length(int src_len, const SearchOptions& options);
// The k best of the v scores in `lp` (k <= v), best first, ties to the lower index, into `best`.
void top_k(const float* lp, int v, int k, std::vector<int32_t>& best);
// std::max_element's index over the v scores in `lp`: the first index of the largest value (a NaN
// never compares larger; a NaN at index 0 is kept, as std::max_element keeps it).
int32_t arg_max(const float* lp, int v);

// Picks the arg-max token per row until <eos> or the max length. Returns one hypothesis per
// sentence. `g` is reset before encoding and between steps (pass a grad-disabled graph).
std::vector<Hypothesis> greedy_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options);

// Beam search: per sentence, the K best live prefixes by total log-probability; candidates that
// end in <eos> within the top K are kept as finished hypotheses. A sentence is done when it has
// K finished hypotheses and its best live prefix, scored at its current length (cp taken as 0, its
// most), does not beat the K-th best of them (exact for alpha = 0), or at the max length (live
// prefixes are then returned unfinished). Returns, per sentence, min(n_best, found) hypotheses,
// best score first. beam = 1 gives exactly greedy_search's output when coverage_penalty is 0 (with
// β > 0 a single beam may go on past an <eos> that a better-covering longer hypothesis outscores).
std::vector<std::vector<Hypothesis>> beam_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                                 const SearchOptions& options);

// Ancestral sampling from p^(1/temperature) (temperature > 0) over the classes left after the
// masks above, one hypothesis per sentence. With topk > 0 only the k most likely classes are
// drawn from; with topp < 1 only the smallest most-likely set whose probability (after the
// temperature) reaches topp (Holtzman et al. 2020's nucleus sampling); both renormalised.
std::vector<Hypothesis> sample_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options, float temperature, core::Rng& rng,
                                      int topk = 0, float topp = 1.0f);

// sample_search when options.sampling_topk != 1 (rng seeded by options.seed), else greedy_search
// when beam == 1 and n_best == 1 (as one-element lists), else beam_search (which refuses
// on_token: a beam's best prefix can change until the end).
std::vector<std::vector<Hypothesis>> search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                            const SearchOptions& options);

}  // namespace engram::decode
