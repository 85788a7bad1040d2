// CopyOutput: the copy mixture output of the pointer-generator (See, Liu & Manning 2017).
// One decoder step mixes generating from the vocabulary with copying a source word:
//   p_gen  = σ(z),  z = w · [c_t; s_t; x_t] + b                (context, decoder state, input)
//   P(w)   = p_gen P_vocab(w) + (1 − p_gen) Σ_{i: src_ext_i = w} α_i
// over the extended vocabulary of the batch: ids [0, V) are the vocabulary, and source words
// outside it get temporary ids V, V+1, ..., V+X−1 (the caller numbers them, per batch, and passes
// src_ext [N, S] and X). P_vocab = softmax of the vocabulary logits (0 for w >= V); α = softmax of
// the attention scores over the attended positions.
//
// Dims: N decoder rows (batch, or batch × beams), V vocabulary, S source positions, X extra ids
// of the batch, Hc context width, Hs decoder state width, Hx decoder input width.
//
// Masking: `mask` [N, S] (1 = attend, 0 = masked; nullptr = all attended) is the attention mask of
// the scores. Masked positions have α_i = 0 exactly: they copy nothing, whatever id they hold.
// Every row must attend at least one position (else an engram::Error).
//
// Training, log_prob(): log P(target) [N], all in log space, so nothing underflows while the true
// value is a float (log P = −200 is returned as such):
//   log P(w) = logaddexp(log p_gen + log P_vocab(w), log(1 − p_gen) + log Σ_{i: src_ext_i = w} α_i)
// with log p_gen = −softplus(−z), log(1 − p_gen) = −softplus(z), log P_vocab = log_softmax(logits),
// and the copy term a log-sum-exp of the scores over the attended positions holding w minus the
// one over all attended positions. A target w >= V takes only the copy term, a target no attended
// position holds only the vocabulary term; a target w >= V that no attended position holds has
// P = 0 and is an engram::Error. Composed from differentiable ops (log_softmax with masks, pick,
// softplus, concat): differentiable in the vocabulary logits, the attention scores, the gate logit
// z (so in c_t, s_t, x_t and the parameters `<path>/w`, `<path>/b`). Targets, ids and masks are
// constants.
//
// Inference, distribution(): the full log P [N, V + X] of one step and p_gen [N], for beam search
// over the extended vocabulary and for marking each output token generated or copied. Computed
// from the same pieces (the two log_softmax results and z) in log space as well, in double per
// element: ids of the batch that the row neither generates (w >= V) nor copies have P = 0 exactly,
// log P = −inf. Not differentiable (plain tensors in the graph's arena, valid until it is reset).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

struct CopyOutputConfig {
  int context_dim = 0;  // Hc: attention context c_t (0 = not an input of p_gen)
  int state_dim = 0;    // Hs: decoder state s_t (0 = not an input)
  int input_dim = 0;    // Hx: decoder input x_t (0 = not an input)
  // Hc + Hs + Hx must be > 0.
};

// The source side of a step, as the caller numbered it over the extended vocabulary.
struct CopySource {
  std::span<const int32_t> ids;  // [N, S] src_ext, each in [0, V + X) (ids of masked positions
                                 //         are checked but never copied)
  int extra = 0;                 // X >= 0: extended ids V .. V+X−1 of the batch
  const float* mask = nullptr;   // [N, S] 1 = attend, 0 = masked; nullptr = all attended
};

// The three pieces of one step's mixture.
struct CopyStep {
  Var vocab_logits;  // [N, V] before the softmax
  Var attn_scores;   // [N, S] before the (masked) softmax, e.g. AttentionOutput::scores
  Var gate_logit;    // [N] z of p_gen = σ(z), from CopyOutput::gate_logit
  CopySource source;
};

struct CopyDistribution {
  core::Tensor log_probs;  // [N, V + X] log P(w), rows normalised over V + X; −inf where P = 0
  core::Tensor p_gen;      // [N] σ(z): the weight of generating (vs copying) in each row
};

class CopyOutput : public Module {
 public:
  // Adds `<path>/w` [1, Hc + Hs + Hx] (Glorot uniform from rng) and `<path>/b` [1] (zero).
  CopyOutput(ParamStore& store, std::string path, const CopyOutputConfig& cfg, core::Rng& rng);

  // z [N] = w · [context; state; input] + b: context [N, Hc], state [N, Hs], input [N, Hx]; a part
  // whose width is 0 in the config must be an invalid Var ({}). Differentiable in all three and
  // in w, b. log p_gen = −softplus(−z) and log(1 − p_gen) = −softplus(z) stay finite for any z.
  Var gate_logit(Graph& g, Var context, Var state, Var input) const;

  // log P(targets[n]) [N] (see the top of the file): targets [N], each in [0, V + X).
  // Differentiable in step.vocab_logits, step.attn_scores and step.gate_logit.
  Var log_prob(Graph& g, const CopyStep& step, std::span<const int32_t> targets) const;

  // log P [N, V + X] and p_gen [N] of one decoder step. Not differentiable.
  CopyDistribution distribution(Graph& g, const CopyStep& step) const;

  const CopyOutputConfig& config() const { return cfg_; }
  ParamId weight() const { return w_; }  // [1, Hc + Hs + Hx]
  ParamId bias() const { return b_; }    // [1]

 private:
  CopyOutputConfig cfg_;
  ParamId w_;
  ParamId b_;
};

}  // namespace engram::nn
