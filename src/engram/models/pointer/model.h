// PointerNet: the Pointer Network of Vinyals, Fortunato & Jaitly (2015) — the output at each step
// is a position in the input. Composed from the shared parts: an nn::RnnEncoder over feature
// vectors (a linear embedding of each element, then a 1-layer LSTM), an LSTM decoder (nn::Rnn)
// whose first input is a learned <go> vector and then the embedding of the element pointed at the
// previous step (the encoder's own embedding: the same weights), an optional glimpse (an
// additive attention read whose context becomes the pointer's query; Bello et al. 2016), and an
// nn::PointerOutput: u_j = v·tanh(W1 e_j + W2 d_i) (clipped to C tanh(u) when logit_clip > 0),
// masked log-softmax over the positions.
// The memory pointed into has one extra slot, the learned end-of-output vector, at class 0, so
// the classes are V = S + 1: 0 = end, j + 1 = input position j (rules.h). Every task ends with
// it; sorting and TSP may only end after all n (the step is then certain: log-prob 0), the hull
// when its rules allow. The task's rules (rules.h) mask every step in training and decoding.
// Training is teacher forcing over all T output steps: one whole-sequence recurrence, then the
// pointer per step. Inference implements decode::StepModel (step.cc).
// Parameters: encoder/input/{weight [E, F], bias [E]}, encoder/rnn/l0/*, decoder/go [1, E],
// decoder/end [1, H], decoder/rnn/l0/*, decoder/glimpse/* (glimpses = 1), decoder/pointer/*.
// Dims: B batch, S positions (largest n), V = S + 1 classes, T output steps (longest target + 1),
// F features, E embedding, H hidden, A attention width, N decoder rows, G decoder gates (4H LSTM,
// 3H GRU).
// The decoder's inputs are <go> and the embedded input elements, so the embedding and the decoder's
// W_ih are one chain of products: [W_emb | go - b_emb] folded once per batch through W_ih
// (nn::Rnn::fold_embedding) into input weights [G, F + 1] over a row [x, is_go], F + 1
// multiply-adds per gate instead of E; the encoder folds its input the same way (nn::RnnEncoder).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engram/core/rng.h"
#include "engram/data/tasks/pointer_tasks.h"
#include "engram/decode/step_model.h"
#include "engram/models/pointer/config.h"
#include "engram/models/pointer/rules.h"
#include "engram/models/registry.h"
#include "engram/nn/attention.h"
#include "engram/nn/encoder.h"
#include "engram/nn/output_layer.h"
#include "engram/nn/rnn.h"

namespace engram::models {

using core::Graph;
using core::Var;

// Teacher-forced results of a batch.
struct PointerForward {
  Var log_probs;                 // [T*B, V] row t*B + b: log p(class) at step t of instance b
  std::vector<int32_t> targets;  // [T*B] the target class, -1 past the instance's end
  int steps = 0;                 // T
};

class PointerNet final : public Model, public decode::StepModel {
 public:
  static constexpr const char* kName = "pointer";
  // Builds every parameter, initialised from `rng` (input_dim 0 is set from the task).
  PointerNet(const PointerConfig& cfg, core::Rng& rng);

  // ---- Model
  std::string name() const override { return kName; }
  nn::ParamStore& params() override { return store_; }
  const nn::ParamStore& params() const { return store_; }
  YAML::Node config() const override;
  const PointerConfig& cfg() const { return cfg_; }

  // ---- training; differentiable in every parameter
  // src: features [S, B, F] with lengths (decode::SourceBatch, see pointer_source); targets: per
  // instance its 0-based index list (the end class is appended). The step masks are the task's
  // rules, with the target class always allowed (so degenerate labels keep a finite loss).
  // If `alignments` is given it receives the pointer distribution of each step (T x [B, V]).
  PointerForward forward(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& targets,
                         std::vector<Var>* alignments = nullptr) const;
  // Σ over instances and steps of -log p(target) (a scalar): the teacher-forced NLL.
  Var loss(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& targets) const;

  // ---- decode::StepModel (step.cc): V = S + 1 classes, <go> = -1, end = 0. The alignment of a
  // step is the pointer's distribution over the input positions [N, S] (end slot left out).
  int32_t go_id() const override { return kPointerGo; }
  int32_t eos_id() const override { return kPointerEnd; }
  std::unique_ptr<decode::DecodeState> encode(Graph& g, const decode::SourceBatch& src) const override;
  decode::StepOutput step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const override;
  void reorder(decode::DecodeState& state, std::span<const int32_t> rows) const override;

  // ---- the parts
  // Everything decoding needs from the encoder, for one batch.
  struct Encoded {
    Var memory;                        // [S+1, B, H] slot 0 = the end vector, then the encoder outputs
    Var final_top;                     // [B, H] the encoder's last state (the decoder's h0)
    Var input_weight;                  // [G, F + 1] the decoder's input weights over [x, is_go]:
                                       // W_ih [W_emb | go - b_emb] (decoder_input_rows)
    Var input_bias;                    // [G] W_ih b_emb + b_ih
    nn::AttentionMemory pointer_mem;   // keys [B, S+1, A], masked past n + 1
    nn::AttentionMemory glimpse_mem;   // glimpses = 1
  };
  Encoded encode_batch(Graph& g, const decode::SourceBatch& src) const;
  // log p [N, V] of one step from decoder output d [N, H] with step mask [N, V] (1 = allowed);
  // `pointer_mem` and `glimpse_mem` have N rows.
  Var point(Graph& g, const nn::AttentionMemory& pointer_mem, const nn::AttentionMemory& glimpse_mem, Var d,
            const float* mask) const;
  // Decoder input rows [N, F + 1] for `input_weight`: row r = [features of position pos[r] of
  // instance inst[r], 0], or [0, ..., 0, 1] for <go> where pos[r] < 0; `features` as in
  // SourceBatch ([S, B, F], time-major, `batch` instances).
  static void decoder_input_rows(std::span<const float> features, int batch, int feature_dim,
                                 std::span<const int32_t> pos, std::span<const int32_t> inst, float* rows);
  const nn::RnnEncoder& encoder() const { return *encoder_; }
  const nn::Rnn& decoder() const { return *decoder_; }
  int hidden() const { return cfg_.hidden; }

 private:
  void check_source(const decode::SourceBatch& src) const;

  PointerConfig cfg_;
  mutable nn::ParamStore store_;  // mutable: graph leaves write gradients into it from const methods
  std::unique_ptr<nn::RnnEncoder> encoder_;    // encoder/input [E, F], encoder/rnn E -> H
  nn::ParamId embed_w_ = -1, embed_b_ = -1;    // encoder/input/{weight, bias}: the decoder's inputs too
  nn::ParamId go_ = -1;                        // decoder/go [1, E]
  nn::ParamId end_ = -1;                       // decoder/end [1, H]
  std::unique_ptr<nn::Rnn> decoder_;           // decoder/rnn E -> H
  std::unique_ptr<nn::Attention> glimpse_;     // decoder/glimpse (glimpses = 1)
  std::unique_ptr<nn::PointerOutput> pointer_; // decoder/pointer
};

// Time-major model input of a batch: features [S, B, F], lengths [B] = n of each instance.
decode::SourceBatch pointer_source(const data::tasks::PointerBatch& batch);
decode::SourceBatch pointer_source(std::span<const data::tasks::PointerInstance> instances);

}  // namespace engram::models
