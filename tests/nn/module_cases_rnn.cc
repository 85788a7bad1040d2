// Module gradient-check rows: Rnn (LSTM / GRU), 1 and 2 layers, bidirectional, padded batches
// (different lengths, one of them 0), given initial states, between-layer dropout, and the step
// API. Each row's output is the flattened outputs followed by every final h (and c), so the check
// covers both; every parameter and the input sequence are checked. The projected step rows
// (project_input, then step_projected) output every step's h (and the last c); the embedded rows
// run linearly embedded inputs through project_embedded and forward_projected.
// Dims: T time, B batch, I input width, H hidden, D directions, L layers.
#include <memory>

#include "engram/core/ops.h"
#include "engram/nn/rnn.h"
#include "nn/module_cases.h"

namespace engram::nn {

namespace module_cases_rnn {

using Forward = std::function<Var(Graph&, const std::vector<Var>&)>;

constexpr int kT = 4, kB = 3, kI = 3, kH = 4;

struct RowSpec {
  CellKind cell = CellKind::kLstm;
  int layers = 1;
  bool bidirectional = false;
  std::vector<int> lengths = {};  // empty = unpadded
  bool initial_inputs = false;   // initial states are differentiable inputs in1..
  float dropout = 0.0f;          // drawn from a fixed-seed Rng inside the forward
};

// [outputs..., h_0..., c_0..., ...] as one flat vector.
Var flatten_all(const RnnOutput& out) {
  std::vector<Var> parts = {core::reshape(out.outputs, {static_cast<int>(out.outputs.numel())})};
  for (const RnnState& s : out.final) {
    parts.push_back(core::reshape(s.h, {static_cast<int>(s.h.numel())}));
    if (s.c.valid()) parts.push_back(core::reshape(s.c, {static_cast<int>(s.c.numel())}));
  }
  return core::concat(parts, 0);
}

ModuleCase rnn_case(std::string name, RowSpec spec) {
  ModuleCase c;
  c.name = std::move(name);
  const bool lstm = spec.cell == CellKind::kLstm;
  const int n_states = spec.layers * (spec.bidirectional ? 2 : 1);
  c.inputs = {{{kT, kB, kI}}};  // x [T, B, I]
  if (spec.initial_inputs)
    for (int k = 0; k < n_states * (lstm ? 2 : 1); ++k) c.inputs.push_back({{kB, kH}});  // h (, c) per state
  c.build = [spec, n_states, lstm](ParamStore& store, core::Rng& rng) -> Forward {
    const RnnConfig cfg{.cell = spec.cell, .input_size = kI, .hidden_size = kH, .layers = spec.layers,
                        .bidirectional = spec.bidirectional, .dropout = spec.dropout};
    auto rnn = std::make_shared<Rnn>(store, "rnn", cfg, rng);
    return [rnn, spec, n_states, lstm](Graph& g, const std::vector<Var>& in) {
      core::Rng drop_rng(3);  // same masks on every call of the check
      RnnOptions opt{.lengths = spec.lengths, .dropout_rng = spec.dropout > 0 ? &drop_rng : nullptr};
      if (spec.initial_inputs)
        for (int k = 0; k < n_states; ++k)
          opt.initial.push_back(lstm ? RnnState{in[1 + 2 * k], in[2 + 2 * k]} : RnnState{in[1 + k], Var{}});
      return flatten_all(rnn->forward(g, in[0], opt));
    };
  };
  return c;
}

// Two steps through a 2-layer stack with the step API, from given initial states.
ModuleCase step_case(std::string name, CellKind cell) {
  ModuleCase c;
  c.name = std::move(name);
  const bool lstm = cell == CellKind::kLstm;
  c.inputs = {{{2, kB, kI}}};  // x [2, B, I], then h, c per layer (LSTM) or h per layer (GRU)
  for (int k = 0; k < (lstm ? 4 : 2); ++k) c.inputs.push_back({{kB, kH}});
  c.build = [cell, lstm](ParamStore& store, core::Rng& rng) -> Forward {
    const RnnConfig cfg{.cell = cell, .input_size = kI, .hidden_size = kH, .layers = 2};
    auto rnn = std::make_shared<Rnn>(store, "rnn", cfg, rng);
    return [rnn, lstm](Graph& g, const std::vector<Var>& in) {
      std::vector<RnnState> s = lstm ? std::vector<RnnState>{{in[1], in[2]}, {in[3], in[4]}}
                                     : std::vector<RnnState>{{in[1], Var{}}, {in[2], Var{}}};
      std::vector<Var> outs;
      for (int t = 0; t < 2; ++t) {
        Var xt = core::reshape(core::slice(in[0], 0, t, t + 1), {kB, kI});  // [B, I]
        s = rnn->step(g, xt, s);
        outs.push_back(s[1].h);
      }
      outs.push_back(s[0].h);
      if (lstm) outs.push_back(s[1].c);
      return core::concat(outs, 0);
    };
  };
  return c;
}

// Two steps of a 1-layer rnn from its input projections (project_input once for both steps, then
// step_projected), from given initial states: differentiable in x, the states and every parameter.
ModuleCase projected_step_case(std::string name, CellKind cell) {
  ModuleCase c;
  c.name = std::move(name);
  const bool lstm = cell == CellKind::kLstm;
  c.inputs = {{{2 * kB, kI}}, {{kB, kH}}};  // x [2*B, I] (row t*B + b), h0, then c0 (LSTM)
  if (lstm) c.inputs.push_back({{kB, kH}});
  c.build = [cell, lstm](ParamStore& store, core::Rng& rng) -> Forward {
    const RnnConfig cfg{.cell = cell, .input_size = kI, .hidden_size = kH, .layers = 1};
    auto rnn = std::make_shared<Rnn>(store, "rnn", cfg, rng);
    return [rnn, lstm](Graph& g, const std::vector<Var>& in) {
      Var xw = rnn->project_input(g, in[0]);  // [2*B, G]
      std::vector<RnnState> s = {{in[1], lstm ? in[2] : Var{}}};
      std::vector<Var> outs;
      for (int t = 0; t < 2; ++t) {
        s = rnn->step_projected(g, core::slice(xw, 0, t * kB, (t + 1) * kB), s);
        outs.push_back(s[0].h);
      }
      if (lstm) outs.push_back(s[0].c);
      return core::concat(outs, 0);
    };
  };
  return c;
}

// Linearly embedded inputs through project_embedded (the chain folded when F < I, in order when
// F >= I) and forward_projected, every direction, padded: differentiable in x, the embedding's w and b
// and every parameter of the rnn.
ModuleCase embedded_case(std::string name, CellKind cell, int features, bool bidirectional) {
  ModuleCase c;
  c.name = std::move(name);
  c.inputs = {{{kT * kB, features}}, {{kI, features}}, {{kI}}};  // x [T*B, F] row t*B + b, w [I, F], b [I]
  c.build = [cell, bidirectional](ParamStore& store, core::Rng& rng) -> Forward {
    const RnnConfig cfg{.cell = cell, .input_size = kI, .hidden_size = kH, .bidirectional = bidirectional};
    auto rnn = std::make_shared<Rnn>(store, "rnn", cfg, rng);
    return [rnn](Graph& g, const std::vector<Var>& in) {
      std::vector<Var> xw;
      for (int d = 0; d < rnn->directions(); ++d) {
        Var p = rnn->project_embedded(g, in[0], in[1], in[2], d);  // [T*B, G]
        xw.push_back(core::reshape(p, {kT, kB, p.shape()[1]}));
      }
      return flatten_all(rnn->forward_projected(g, xw, RnnOptions{.lengths = {4, 2, 3}}));
    };
  };
  return c;
}

}  // namespace module_cases_rnn

std::vector<ModuleCase> rnn_module_cases() {
  using namespace module_cases_rnn;  // this file's cases
  const auto kLstm = CellKind::kLstm, kGru = CellKind::kGru;
  return {
      rnn_case("lstm", {.cell = kLstm}),
      rnn_case("gru", {.cell = kGru}),
      rnn_case("lstm/2layers", {.cell = kLstm, .layers = 2}),
      rnn_case("gru/2layers", {.cell = kGru, .layers = 2}),
      rnn_case("lstm/bidirectional", {.cell = kLstm, .bidirectional = true}),
      rnn_case("gru/bidirectional", {.cell = kGru, .bidirectional = true}),
      rnn_case("lstm/padded", {.cell = kLstm, .lengths = {4, 1, 3}}),
      rnn_case("gru/padded", {.cell = kGru, .lengths = {2, 4, 0}}),
      rnn_case("lstm/bidirectional/2layers/padded", {.cell = kLstm, .layers = 2, .bidirectional = true,
                                                     .lengths = {3, 4, 1}}),
      rnn_case("gru/bidirectional/2layers/padded", {.cell = kGru, .layers = 2, .bidirectional = true,
                                                    .lengths = {2, 3, 1}}),
      rnn_case("lstm/bidirectional/initial_state", {.cell = kLstm, .bidirectional = true, .lengths = {4, 2, 3},
                                                    .initial_inputs = true}),
      rnn_case("gru/2layers/initial_state", {.cell = kGru, .layers = 2, .lengths = {1, 4, 2},
                                             .initial_inputs = true}),
      rnn_case("lstm/2layers/dropout", {.cell = kLstm, .layers = 2, .dropout = 0.3f}),
      rnn_case("gru/bidirectional/2layers/dropout", {.cell = kGru, .layers = 2, .bidirectional = true,
                                                     .dropout = 0.3f}),
      step_case("lstm/step/2layers", kLstm),
      step_case("gru/step/2layers", kGru),
      projected_step_case("lstm/step_projected", kLstm),
      projected_step_case("gru/step_projected", kGru),
      embedded_case("lstm/embedded/folded/bidirectional", kLstm, 2, true),
      embedded_case("gru/embedded/folded", kGru, 1, false),
      embedded_case("lstm/embedded/in_order", kLstm, 5, false),
  };
}

}  // namespace engram::nn
