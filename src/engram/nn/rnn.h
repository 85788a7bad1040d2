// Rnn: a multi-layer, optionally bidirectional LSTM or GRU over time-major sequences, with
// padding by per-sequence lengths, and a single-step API (for decoders) over the same parameters.
// Parameters follow torch.nn.LSTM / torch.nn.GRU one to one, named by layer and direction:
// `<path>/l{k}/w_ih` [G, I_k], `w_hh` [G, H], `b_ih` [G], `b_hh` [G]; the reverse direction of a
// bidirectional layer under `<path>/l{k}_reverse/`. Gate order i, f, g, o (LSTM), r, z, n (GRU).
// Initialisation as PyTorch: every weight and bias U(-1/sqrt(H), 1/sqrt(H)).
// Dims: T time, B batch, I input width, H hidden, D directions (1 or 2), L layers,
// G gates (4H LSTM, 3H GRU), I_k layer k's input width (I for k = 0, D*H above).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

enum class CellKind { kLstm, kGru };

struct RnnConfig {
  CellKind cell = CellKind::kLstm;
  int input_size = 0;          // I
  int hidden_size = 0;         // H
  int layers = 1;              // L
  bool bidirectional = false;  // D = 2 when set
  float dropout = 0.0f;        // on every layer's output but the last (as PyTorch), in [0, 1)
};

// The recurrent state of one layer and direction.
struct RnnState {
  Var h;  // [B, H]
  Var c;  // [B, H] for LSTM; invalid (Var{}) for GRU
};

struct RnnOptions {
  // Real length of each sequence, B values in [0, T]; empty = every sequence is T steps long.
  // At a padded step (t >= length) the state is carried unchanged and the output is zero, so the
  // final state is the one after the sequence's last real step and the reverse direction starts
  // at each sequence's real end.
  std::vector<int> lengths = {};
  // Initial states, L*D of them, index l*D + d (PyTorch's h_0 order); empty = zeros.
  std::vector<RnnState> initial = {};
  // Draws the between-layer dropout masks: give it when training. nullptr = no dropout
  // (evaluation); this, not the graph's grad mode, decides whether dropout is applied.
  core::Rng* dropout_rng = nullptr;
};

struct RnnOutput {
  Var outputs;                  // [T, B, D*H]: forward | reverse on the last axis; 0 at padded steps
  std::vector<RnnState> final;  // L*D states, index l*D + d (PyTorch's h_n / c_n order)
};

class Rnn : public Module {
 public:
  // Adds the parameters of every layer and direction, initialised from `rng`.
  Rnn(ParamStore& store, std::string path, const RnnConfig& cfg, core::Rng& rng);

  // x [T, B, I] -> outputs [T, B, D*H] and final states. Per layer and direction: one affine
  // [T*B, I_k] x W_ih^T for the whole sequence, then one fused whole-sequence recurrence node.
  // Differentiable in x, the initial states and every parameter.
  RnnOutput forward(Graph& g, Var x, const RnnOptions& opt = {}) const;

  // One time step through the whole stack (unidirectional only): x [B, I], state (L entries) ->
  // new state (L entries); the layer output is the last entry's h [B, H]. Same parameters and the
  // same maths as forward, so a decoder can step what forward runs in one go. Dropout between
  // layers as in forward when `dropout_rng` is given (training), none when nullptr.
  std::vector<RnnState> step(Graph& g, Var x, const std::vector<RnnState>& state,
                             core::Rng* dropout_rng = nullptr) const;

  // Layer 0's input projection x [R, I] -> x W_ih^T + b_ih [R, G] (G = 4H LSTM, 3H GRU): the first
  // product of step(), for inputs known before the recurrence runs (a pointer decoder's inputs are
  // the embedded input elements: projected once per batch, not once per step). Differentiable.
  Var project_input(Graph& g, Var x) const;
  // step() of a one-layer unidirectional rnn from its input projection xw [B, G] (rows of
  // project_input): the same maths and parameters. Differentiable in xw, the state and W_hh, b_hh.
  std::vector<RnnState> step_projected(Graph& g, Var xw, const std::vector<RnnState>& state) const;

  // Layer 0's input projection (direction `dir`) of linearly embedded inputs: x [R, F] embedded as
  // x W^T + b (w [I, F], b [I]), then (x W^T + b) W_ih^T + b_ih -> [R, G]. Where F < I the chain is
  // multiplied in the cheaper order, x (W_ih W)^T + (W_ih b + b_ih): R F G multiply-adds after a
  // G I F fold, instead of R F I + R I G, and the backward likewise (the gradients of W_ih, W and b
  // come from the [G, F] gradient of the folded matrix). The same function with other rounding:
  // a pointer network's 1- or 2-D points under a 128-wide embedding. Differentiable in x, w, b and
  // the layer's W_ih, b_ih.
  Var project_embedded(Graph& g, Var x, Var w, Var b, int dir = 0) const;
  // The fold itself: layer 0's input weights (direction `dir`) through the embedding w [I, F], b [I]:
  // weight = W_ih w [G, F], bias = W_ih b + b_ih [G], so x W^T... = x weight^T + bias. Differentiable
  // in w, b, W_ih and b_ih.
  struct Folded {
    Var weight;  // [G, F]
    Var bias;    // [G]
  };
  Folded fold_embedding(Graph& g, Var w, Var b, int dir = 0) const;
  // forward() from layer 0's input projections, one [T, B, G] per direction (project_input or
  // project_embedded rows): the same recurrence, minus layer 0's first product.
  RnnOutput forward_projected(Graph& g, std::span<const Var> xw0, const RnnOptions& opt = {}) const;

  // L*D zero states [B, H] (constants) to start a recurrence.
  std::vector<RnnState> zero_state(Graph& g, int batch) const;

  const RnnConfig& config() const { return cfg_; }
  int directions() const { return cfg_.bidirectional ? 2 : 1; }  // D
  int output_size() const { return directions() * cfg_.hidden_size; }  // D*H

  // Parameter handles of layer l, direction d (0 forward, 1 reverse).
  struct LayerParams {
    ParamId w_ih;  // [G, I_k]
    ParamId w_hh;  // [G, H]
    ParamId b_ih;  // [G]
    ParamId b_hh;  // [G]
  };
  const LayerParams& params(int layer, int dir) const { return params_[layer * directions() + dir]; }

 private:
  // Output for every step of one direction of one layer, and its final state.
  struct DirResult {
    Var outputs;    // [T*B, H]
    RnnState last;  // [B, H] each
  };
  DirResult run_direction(Graph& g, Var xw, const LayerParams& p, bool reverse, RnnState state,
                          const std::vector<int>& lengths) const;
  RnnState cell(Var xw, const RnnState& s, Var w_hh, Var b_hh) const;
  // The layers over x [T, B, I], or from layer 0's projections xw0 (D of [T*B, G]) when x is invalid.
  RnnOutput run(Graph& g, Var x, std::vector<Var> xw0, int steps, int batch, const RnnOptions& opt) const;
  void check_state(const RnnState& s, int batch, const char* what, int index) const;

  RnnConfig cfg_;
  std::vector<LayerParams> params_;  // L*D, index l*D + d
};

}  // namespace engram::nn
