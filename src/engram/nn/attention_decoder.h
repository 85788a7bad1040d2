// The attention decoder step shared by the sequence-to-sequence families: an RNN whose every step
// reads the encoder memory through nn::Attention (or, without attention, the fixed context C of
// the "traditional" encoder-decoder), in two styles:
//   Bahdanau: score with the previous state s_{t-1}; c_t enters the RNN with the input embedding;
//             readout tanh(W_p [s_t; c_t; e_{t-1}]).
//   Luong:    the RNN runs first; score with the current h_t; attentional state
//             h~_t = tanh(W_c [c_t; h_t]) is the readout and (input feeding) the next step's input.
// The layer-0 input projection is split: the embedding part W_ih (the Rnn's own weight, applied
// to a whole target sequence in one GEMM by embed_projection) plus `w_ctx` for what is fed per
// step (c_t, C or h~_{t-1}); together they are the usual W_ih over [e; ctx]. The initial state is
// tanh(bridge(final_top)) (c0 = 0 for LSTM). What the decoder emits is the readout [N, P]; an
// output layer (nn/output_layer.h) maps it to classes. Differentiable in every input and parameter.
// Dims: B batch, S source len, N decoder rows, E input width, H hidden, C context (encoder) width,
// G gates (4H LSTM, 3H GRU), X per-step fed width (C, P or 0), P readout width, L layers,
// F extra score features per source position.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/attention.h"
#include "engram/nn/linear.h"
#include "engram/nn/rnn.h"

namespace engram::nn {

struct AttentionDecoderConfig {
  CellKind cell = CellKind::kGru;
  int input_dim = 0;            // E: per-step input (target embedding, pointed-to element, ...)
  int hidden = 0;               // H
  int layers = 1;               // L
  int context_dim = 0;          // C
  bool attention = true;        // false: the fixed context C at every step
  AttentionScore score = AttentionScore::kAdditive;
  bool luong = false;           // style (with attention)
  bool input_feeding = true;    // luong: feed h~_{t-1} into the next step
  int attn_dim = 0;             // A (additive; 0 = C)
  int readout_dim = 0;          // P
  float dropout = 0.0f;         // between layers (training only)
  int score_features = 0;       // F: per-position features of the attention score (nn/attention.h)
};

// Parameter paths (so a model keeps the names its checkpoints were written with).
struct AttentionDecoderNames {
  std::string bridge = "bridge";
  std::string rnn = "decoder/rnn";
  std::string w_ctx = "decoder/w_ctx";
  std::string attention = "decoder/attention";
  std::string combine = "decoder/combine";  // luong W_c
  std::string readout = "decoder/readout";  // bahdanau / none W_p
};

// Decoder recurrent state of one step.
struct DecoderState {
  std::vector<RnnState> layers;  // L x {h [N, H], c [N, H] (LSTM)}
  Var feed;                      // [N, P] luong with input feeding: h~_{t-1}; else invalid
};

// What the decoder reads every step, prepared once per batch (training) or per step (inference).
struct DecoderContext {
  AttentionMemory memory;  // attention over the encoder outputs (with attention)
  Var fixed;               // [N, C] no attention: the fixed context C
  Var fixed_proj;          // [N, G] no attention: C w_ctx^T
};

// One decoder step's results.
struct DecoderStepOutput {
  DecoderState state;  // after the step
  Var top;             // [N, H] s_t / h_t, the top layer's output
  Var context;         // [N, C] c_t (C without attention)
  Var scores;          // [N, S] attention scores before the softmax; invalid without attention
  Var alpha;           // [N, S] attention weights; invalid without attention
  Var attentional;     // [N, P] luong: h~_t; else invalid
};

class AttentionDecoder {
 public:
  // Adds, in this order (which fixes the draws from `rng`): bridge [L*H, C], the RNN, w_ctx
  // [G, X], the attention scorer, the combine (luong) or readout (bahdanau / none) layer.
  AttentionDecoder(ParamStore& store, const AttentionDecoderConfig& cfg, core::Rng& rng,
                   const AttentionDecoderNames& names = {});

  // Decoder initial state from final_top [B, C]: h0 = tanh(bridge(final_top)), c0 = 0.
  DecoderState initial_state(Graph& g, Var final_top) const;
  // The memory of encoder outputs [S, B, C] (masked by lengths), or the fixed context final_top.
  DecoderContext prepare_context(Graph& g, Var outputs, Var final_top, const std::vector<int32_t>& lengths) const;
  // Per-step inputs [R, E] -> their layer-0 input projection [R, G] (W_ih x + b_ih).
  Var input_projection(Graph& g, Var x) const;
  // One step from the input projection xw [N, G]; `score_features` [N, S, F] when F > 0.
  DecoderStepOutput step(Graph& g, const DecoderContext& ctx, Var xw, const DecoderState& state,
                         core::Rng* dropout_rng, Var score_features = {}) const;
  // The readout [R, P] of collected step outputs: luong h~ (attentional [R, P]); else
  // tanh(W_p [top; context; input]) with top [R, H], context [R, C], input [R, E] = x_{t-1}.
  Var readout(Graph& g, Var top, Var context, Var input, Var attentional) const;

  const AttentionDecoderConfig& config() const { return cfg_; }
  bool has_attention() const { return attention_ != nullptr; }
  bool luong() const { return attention_ != nullptr && cfg_.luong; }
  int feed_width() const { return feed_dim_; }  // X
  const Rnn& rnn() const { return *rnn_; }
  const Attention* attention() const { return attention_.get(); }

 private:
  Var dropout(Var x, core::Rng* rng) const;
  Var param(Graph& g, ParamId id) const { return store_.var(g, id); }

  ParamStore& store_;
  AttentionDecoderConfig cfg_;
  int feed_dim_ = 0;                      // X
  std::unique_ptr<Linear> bridge_;        // [L*H, C]
  std::unique_ptr<Rnn> rnn_;              // E -> H, L layers (layer 0's fed part in w_ctx_)
  ParamId w_ctx_ = -1;                    // [G, X]
  std::unique_ptr<Attention> attention_;  // query H, memory C
  std::unique_ptr<Linear> combine_;       // luong W_c [P, C + H]; bahdanau / none W_p [P, H + C + E]
};

}  // namespace engram::nn
