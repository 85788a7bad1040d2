// The pieces of the search that greedy / sampling (search.cc) and beam search (beam_search.cc)
// share: source and step checks, forced prefix tokens, the search's masks (min_length, blocked
// n-grams), coverage, and the beam's prefix tree. Internal to decode/.
// Dims: N live rows, V classes, S padded source length, S_b sentence b's.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "engram/decode/search.h"

namespace engram::decode::detail {

// Errors on a source batch the search cannot run (lengths, ids, prefixes).
void check_source(const SourceBatch& src, int32_t eos);
// Sentence s's forced target prefix (empty when none).
std::span<const int32_t> prefix_of(const SourceBatch& src, int s);
// Row lp [V] allows only class `cls` (the prefix's token at `step` of `sentence`).
void force_row(float* lp, int v, int32_t cls, int sentence, int step);
// Appends row `row` of α [N, S] (its first src_len values) to out.
void append_alignment(const core::Tensor& a, int row, int src_len, std::vector<float>& out);
// Errors on a model step whose shapes or values the search cannot use.
void check_step(const StepOutput& out, int rows, const StepModel& model, const SearchOptions& o);
// The classes that would repeat an n-gram of ids (block_ngram_repeat = n) into out.
void blocked_tokens(std::span<const int32_t> ids, int n, std::vector<int32_t>& out);

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

// Masks row `row` of lp [V] (`tokens` tokens so far, `prefix` them when n-grams are blocked) with
// the search's min_length and block_ngram_repeat; masks records what it took.
void mask_row(float* lp, int v, int row, int tokens, std::span<const int32_t> prefix, const SearchOptions& o,
              int32_t eos, StepMasks& masks, std::vector<int32_t>& scratch);
// cov [S_b] += row `row` of α [N, S].
void add_coverage(const core::Tensor& a, int row, int src_len, double* cov);
// The GNMT coverage penalty β Σ_i log(min(cov_i, 1)) of sentence coverage cov [S_b].
double coverage_term(const double* cov, int src_len, float beta);

// The prefix tree of a beam search: every prefix ever kept is a node (its last token, its parent
// prefix, and the α of the step that emitted the token when recorded).
struct PrefixTree {
  std::vector<int32_t> parent, token;  // per node; parent -1 = the empty prefix
  std::vector<float> align;            // [nodes, S] when alignments are recorded
  std::vector<float> gate;             // [nodes] when alignments are recorded and the model has a gate
};

struct Ended {
  double log_prob, score;
  int32_t node;                  // last token's node (-1: the empty prefix)
  bool finished;                 // ended with <eos>
  std::vector<float> eos_align;  // α of the <eos> step
  std::vector<float> eos_gate{};   // the <eos> step's gate (one value), when recorded
};

struct Candidate {
  double log_prob;
  int32_t row, token;
};

}  // namespace engram::decode::detail
