// Attention over a memory of encoder states: scores e_i = score(q, h_i), weights α = softmax(e)
// over unmasked positions (masked ones get exactly α_i = 0), context c = Σ_i α_i h_i.
// Scorers: dot q·h_i (Luong), general q·W h_i (Luong), additive vᵀ tanh(W_q q + W_k h_i)
// (Bahdanau; Luong calls it "concat"). Keys (W_k h_i, W h_i) are projected once per batch by
// prepare(); each decoder step then costs one query projection and two batched products.
// Dims: B batch, S source len, H memory width, Hq query width, A attention dim (additive).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

enum class AttentionScore {
  kDot,       // q · h_i                      (needs Hq == H, no parameters)
  kGeneral,   // q · W h_i                    W = `<path>/w_key` [Hq, H]
  kAdditive,  // vᵀ tanh(W_q q + W_k h_i)     `<path>/w_query` [A, Hq], `w_key` [A, H], `v` [1, A]
  kConcat = kAdditive,  // Luong's name for the additive scorer
};
// "dot" | "general" | "additive" | "concat" (alias of additive); anything else is an error.
AttentionScore attention_score_from_name(std::string_view name);
const char* attention_score_name(AttentionScore score);  // "dot" | "general" | "additive"

// Layout of the memory passed to prepare(). Time-major [S, B, H] is what the RNN layers produce
// (transposed once per batch inside prepare); batch-major [B, S, H] is used as is.
enum class MemoryLayout { kTimeMajor, kBatchMajor };

struct AttentionConfig {
  AttentionScore score = AttentionScore::kAdditive;
  int query_dim = 0;   // Hq
  int memory_dim = 0;  // H
  int attn_dim = 0;    // A, additive only; 0 = H
  MemoryLayout layout = MemoryLayout::kTimeMajor;
  // F: extra per-position features f_i [B, S, F] of each step's score (additive only; 0 = none):
  // e_i = vᵀ tanh(W_q q + W_k h_i + W_f f_i) with `<path>/w_feature` [A, F]. Coverage (the sum of
  // earlier α, F = 1; See et al. 2017) and location-aware attention (the previous α convolved,
  // Chorowski et al. 2015) enter the score this way.
  int feature_dim = 0;
};

// The memory after the once-per-batch work: batch-major values, projected keys and the mask.
// Holds Vars of one graph: valid until that graph is reset.
struct AttentionMemory {
  Var values;                    // [B, S, H]  the h_i that the context averages
  Var keys;                      // [B, S, A] additive, [B, S, Hq] general, = values for dot
  const float* mask = nullptr;   // [B, S] 1 = attend, 0 = masked (graph arena); nullptr = none
  int batch = 0;                 // B: the query rows
  int src_len = 0;               // S
  // Decoding only: query row b reads row rows[b] of values and keys [Bm, S, ·] (the beams of a
  // source share its memory); nullptr: row b reads row b (Bm = B). The mask is per query row.
  const int32_t* rows = nullptr;
};

struct AttentionOutput {
  Var scores;   // [B, S]  e_i before the softmax (masked positions hold their raw score: read
                //         them through the mask, e.g. core::log_softmax(scores, mask))
  Var context;  // [B, H]  c = Σ_i α_i h_i
  Var alpha;    // [B, S]  rows sum to 1 over unmasked positions (0 if all masked); read the
                //         weights for visualisation as alpha.value() (valid until graph reset)
};

class Attention : public Module {
 public:
  // Adds the scorer's parameters (see AttentionScore) under `path`, Glorot-uniform from `rng`.
  Attention(ParamStore& store, std::string path, const AttentionConfig& cfg, core::Rng& rng);

  // memory: [S, B, H] (time-major) or [B, S, H] (batch-major), per config().layout.
  // Differentiable in memory and the key projection. Mask variants:
  //   lengths [B]: position i of row b is attended iff i < lengths[b] (0 <= lengths[b] <= S);
  //   mask [B, S] (batch-major, whatever the memory layout): 1 = attend, 0 = masked.
  // A row with every position masked gets α = 0 and a zero context.
  AttentionMemory prepare(Graph& g, Var memory) const;
  AttentionMemory prepare(Graph& g, Var memory, const std::vector<int32_t>& lengths) const;
  AttentionMemory prepare(Graph& g, Var memory, const float* mask) const;

  // One attention read: query [B, Hq] (and, with feature_dim > 0, features [B, S, F]) ->
  // {scores [B, S], context [B, H], alpha [B, S]}. Differentiable in the query, the features,
  // the memory and every parameter.
  AttentionOutput step(Graph& g, const AttentionMemory& mem, Var query, Var features = {}) const;
  // The scores alone, [B, 1, S] (no softmax, no context): what a pointer output needs.
  Var scores(Graph& g, const AttentionMemory& mem, Var query, Var features = {}) const;

  const AttentionConfig& config() const { return cfg_; }
  // Ids of the scorer's parameters (-1 where the scorer has none).
  ParamId w_query() const { return w_query_; }  // [A, Hq]           additive
  ParamId w_key() const { return w_key_; }      // [A, H] / [Hq, H]  additive / general
  ParamId v() const { return v_; }              // [1, A]            additive
  ParamId w_feature() const { return w_feature_; }  // [A, F]        additive with feature_dim

 private:
  AttentionMemory prepare_impl(Graph& g, Var memory, const float* mask_or_null,
                               const std::vector<int32_t>* lengths) const;

  AttentionConfig cfg_;
  ParamId w_query_ = -1;
  ParamId w_key_ = -1;
  ParamId v_ = -1;
  ParamId w_feature_ = -1;
};

}  // namespace engram::nn
