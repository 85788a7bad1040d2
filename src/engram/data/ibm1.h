// IBM Model 1 (Brown et al. 1993, "The Mathematics of Statistical Machine Translation"): lexical
// translation probabilities t(e | f) of target token e given source token f, learnt by EM from
// sentence pairs of ids alone, and the alignment posterior they give each target token of a pair
// over its source positions:
//   P(a_j = i | f, e) = t(e_j | f_i) / Σ_k t(e_j | f_k).
// No NULL source word: every target token is explained by a source token, which is what attention
// does. Guided alignment training (seq2seq data.guided_alignment) asks attention to follow it.
// EM (Koehn 2010, "Statistical Machine Translation", Figure 4.3): start from uniform t; each
// iteration counts c(e, f) += t(e | f) / Σ_k t(e | f_k) over every target token e and source
// position of every pair, then t(e | f) = c(e, f) / Σ_e' c(e', f).
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
  // iterations >= 1.
  static Ibm1 train(std::span<const Example> pairs, int iterations);

  // t(e | f); 0 for tokens never seen in one pair.
  double prob(int32_t f, int32_t e) const;
  // The posterior of each target token over the source positions: [n x S] row-major, n =
  // tgt.size(), S = src.size(); each row sums to 1 (uniform where no source token was ever seen
  // with the target token).
  std::vector<float> posterior(std::span<const int32_t> src, std::span<const int32_t> tgt) const;
  int64_t pairs() const { return static_cast<int64_t>(keys_.size()); }  // distinct (f, e) seen together

 private:
  static uint64_t key(int32_t f, int32_t e) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(f)) << 32) | static_cast<uint32_t>(e);
  }
  std::vector<uint64_t> keys_;  // sorted distinct (f, e) seen in one pair
  std::vector<float> t_;        // t(e | f) for keys_
};

}  // namespace engram::data
