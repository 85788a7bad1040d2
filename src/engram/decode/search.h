// Search over a StepModel: greedy, beam search with the GNMT length penalty and n-best lists,
// and ancestral sampling. Every search decodes a whole batch of sentences at once: all live rows
// (B greedy rows, up to B*K beams) go through one model step, and sentences that are done are
// dropped from the state (reorder) so they cost nothing afterwards.
// Dims: B sentences, K beam size, N live rows, V next-token classes, S source length of a sentence.
#pragma once

#include <cstdint>
#include <vector>

#include "engram/core/graph.h"
#include "engram/core/rng.h"
#include "engram/decode/step_model.h"

namespace engram::decode {

// Limits (docs/limits.md): a beam of at most kMaxBeam rows per sentence, at most kMaxOutputTokens
// tokens per hypothesis.
constexpr int kMaxBeam = 1024;
constexpr int kMaxOutputTokens = 1024;

struct SearchOptions {
  int beam = 1;                   // K; 1 with n_best 1 = greedy
  int n_best = 1;                 // hypotheses returned per sentence, best first (<= beam)
  float alpha = 0.0f;             // length penalty lp(n) = ((5 + n) / 6)^alpha; score = log p / lp
  float max_length_ratio = 2.0f;  // a hypothesis has at most ratio * S + max_length_offset tokens
  int max_length_offset = 10;
  int max_length = 256;           // and never more than this
  bool alignments = false;        // record α (one row per output token)

  template <class V>
  void visit(V& v) {
    v("beam", beam, "beam size (1 = greedy)");
    v("n_best", n_best, "hypotheses per sentence (<= beam)");
    v("alpha", alpha, "GNMT length penalty exponent (0 = raw log-probability)");
    v("max_length_ratio", max_length_ratio, "max output tokens per source token");
    v("max_length_offset", max_length_offset, "max output tokens added to ratio * source length");
    v("max_length", max_length, "absolute max output tokens");
  }
  void validate() const;
};

struct Hypothesis {
  std::vector<int32_t> ids;      // output tokens, without <go> and <eos>
  double log_prob = 0;           // Σ log p of the tokens, <eos> included when finished
  double score = 0;              // log_prob / lp(length), length = ids + (finished ? 1 : 0)
  bool finished = false;         // ended with <eos> (false: stopped at the max length)
  int src_len = 0;               // S of this sentence
  std::vector<float> alignment;  // [R, S], R = length (ids, then <eos> if finished); empty unless
                                 // alignments were requested and the model has attention
};

// GNMT: ((5 + length) / 6)^alpha.
double length_penalty(int length, float alpha);
// Max output tokens for a source of `src_len` tokens (at least 1).
int max_output_length(int src_len, const SearchOptions& options);
// The k best of the v scores in `lp` (k <= v), best first, ties to the lower index, into `best`.
void top_k(const float* lp, int v, int k, std::vector<int32_t>& best);

// Picks the arg-max token per row until <eos> or the max length. Returns one hypothesis per
// sentence. `g` is reset before encoding and between steps (pass a grad-disabled graph).
std::vector<Hypothesis> greedy_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options);

// Beam search: per sentence, the K best live prefixes by total log-probability; candidates that
// end in <eos> within the top K are kept as finished hypotheses. A sentence is done when it has
// K finished hypotheses and its best live prefix, scored at its current length, does not beat
// the K-th best of them (exact for alpha = 0), or at the max length (live prefixes are then
// returned unfinished). Returns, per sentence, min(n_best, found) hypotheses, best score first.
// beam = 1 gives exactly greedy_search's output.
std::vector<std::vector<Hypothesis>> beam_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                                 const SearchOptions& options);

// Ancestral sampling from p^(1/temperature) (temperature > 0), one hypothesis per sentence.
std::vector<Hypothesis> sample_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                      const SearchOptions& options, float temperature, core::Rng& rng);

// greedy_search when beam == 1 and n_best == 1 (as one-element lists), else beam_search.
std::vector<std::vector<Hypothesis>> search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                            const SearchOptions& options);

}  // namespace engram::decode
