// Output layers: a decoder's readout -> log-probabilities over what the model emits next.
//   VocabOutput:   logits W r + b over a vocabulary (W may be the target embedding table: tying).
//   PointerOutput: a distribution over the input positions themselves (Vinyals et al. 2015):
//                  u_j = vᵀ tanh(W1 e_j + W2 d) for encoder state e_j and decoder state d,
//                  optionally clipped to C tanh(u) (Bello et al. 2016), masked (padding, or
//                  positions a task forbids at this step), then log-softmax over positions.
// The third, the copy mixture over an extended vocabulary (See et al. 2017), is nn/copy_output.h.
// All differentiable in the readout / query, the memory and every parameter.
// Dims: R rows, P readout width, V vocabulary, N decoder rows, S input positions, H memory width,
// Hq query width, A attention width.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/attention.h"
#include "engram/nn/linear.h"

namespace engram::nn {

class VocabOutput {
 public:
  // `<path>/weight` [V, P] and `<path>/bias` [V].
  VocabOutput(ParamStore& store, const std::string& path, int readout_dim, int vocab, core::Rng& rng);
  // Tied: the weight is the existing table [V, P] (e.g. the target embedding); adds `<path>/bias`.
  VocabOutput(ParamStore& store, const std::string& path, ParamId table);

  Var logits(Graph& g, Var readout) const { return linear_->forward(g, readout); }  // [R, P] -> [R, V]
  Var log_probs(Graph& g, Var readout) const;                                        // [R, V], rows normalised
  const Linear& linear() const { return *linear_; }  // weight [V, P], bias [V]

 private:
  std::unique_ptr<Linear> linear_;
};

struct PointerOutputConfig {
  int query_dim = 0;         // Hq: the decoder state
  int memory_dim = 0;        // H: the encoder states pointed at
  int attn_dim = 0;          // A (0 = H)
  float logit_clip = 0.0f;   // C > 0: scores C tanh(u); 0 = raw u
};

class PointerOutput : public Module {
 public:
  // The additive scorer's parameters under `path` (`w_query` = W2, `w_key` = W1, `v`).
  PointerOutput(ParamStore& store, std::string path, const PointerOutputConfig& cfg, core::Rng& rng);

  // Once per batch: memory [S, B, H] (time-major), positions >= lengths[b] masked.
  AttentionMemory prepare(Graph& g, Var memory, const std::vector<int32_t>& lengths) const;
  // Scores [N, S] (clipped when logit_clip > 0) of query [N, Hq] against the prepared memory.
  Var scores(Graph& g, const AttentionMemory& mem, Var query) const;
  // log p(position) [N, S]: log-softmax of the scores over the positions allowed by `mask`
  // ([N, S], 1 = allowed) and the memory's own mask. Every row must allow some position.
  Var log_probs(Graph& g, const AttentionMemory& mem, Var query, const float* mask = nullptr) const;

  const PointerOutputConfig& config() const { return cfg_; }

 private:
  PointerOutputConfig cfg_;
  Attention scorer_;
};

}  // namespace engram::nn
