// IBM Model 1 (Brown et al. 1993, "The Mathematics of Statistical Machine Translation"): lexical
// translation probabilities t(e | f) of target token e given source token f, learnt by EM from
// sentence pairs of ids alone, and the alignment posterior they give each target token of a pair
// over its source positions:
//   P(a_j = i | f, e) = t(e_j | f_i) / Σ_k t(e_j | f_k).
// No NULL source word: every target token is explained by a source token, which is what attention
// does. With a diagonal tension λ > 0 the alignment prior is fast_align's (Dyer et al. 2013, "A
// Simple, Fast, and Effective Reparameterization of IBM Model 2", without its NULL word): target
// token j of n aligns to source position i of S with prior ∝ exp(-λ |(i+½)/S - (j+½)/n|), so
//   P(a_j = i | f, e) = t(e_j | f_i) d(i, j) / Σ_k t(e_j | f_k) d(k, j),
// in EM as in the posterior; λ = 0 is Model 1. Guided alignment training (seq2seq
// data.guided_alignment, data.guided_alignment_diagonal = λ) asks attention to follow it.
// EM (Koehn 2010, "Statistical Machine Translation", Figure 4.3): start from uniform t; each
// iteration counts c(e, f) += P(a_j = i | f, e) over every target token e = e_j and source
// position i (f = f_i) of every pair, then t(e | f) = c(e, f) / Σ_e' c(e', f). λ is fixed (fast_align
// also learns it).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engram/data/batching.h"

namespace engram::data {

class Ibm1 {
 public:
  Ibm1() = default;
  // EM from a uniform start over the pairs (ids >= 0; pairs with an empty side are skipped);
  // iterations >= 1; diagonal = λ, finite, >= 0.
  static Ibm1 train(std::span<const Example> pairs, int iterations, double diagonal = 0);

  // t(e | f); 0 for tokens never seen in one pair.
  double prob(int32_t f, int32_t e) const;
  // The posterior of each target token over the source positions: [n x S] row-major, n =
  // tgt.size(), S = src.size(); each row sums to 1 (uniform where no source token was ever seen
  // with the target token).
  std::vector<float> posterior(std::span<const int32_t> src, std::span<const int32_t> tgt) const;
  int64_t pairs() const { return static_cast<int64_t>(keys_.size()); }  // distinct (f, e) seen together
  double diagonal() const { return diagonal_; }

 private:
  static uint64_t key(int32_t f, int32_t e) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(f)) << 32) | static_cast<uint32_t>(e);
  }
  std::vector<uint64_t> keys_;  // sorted distinct (f, e) seen in one pair
  std::vector<float> t_;        // t(e | f) for keys_
  double diagonal_ = 0;         // λ
};

}  // namespace engram::data
