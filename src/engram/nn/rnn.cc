// Rnn: parameters, the per-layer / per-direction unrolling with length masks, and the step API.
// Dims: T time, B batch, I input width, H hidden, D directions, L layers, G gates (4H | 3H).
//
// forward() runs each layer direction as ONE fused sequence node (core::lstm_sequence /
// gru_sequence: length masking inside, dW_hh by one GEMM over all steps); step() uses the fused
// cell (core::lstm_cell / gru_cell) on the same parameters.
#include "engram/nn/rnn.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

namespace {

int gates_of(CellKind k) { return k == CellKind::kLstm ? 4 : 3; }

}  // namespace

Rnn::Rnn(ParamStore& store, std::string path, const RnnConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg) {
  ENGRAM_CHECK(cfg.input_size > 0 && cfg.hidden_size > 0, "rnn '{}': input_size {} and hidden_size {} must be positive",
               this->path(), cfg.input_size, cfg.hidden_size);
  ENGRAM_CHECK(cfg.layers >= 1, "rnn '{}': layers = {}, needs at least 1", this->path(), cfg.layers);
  ENGRAM_CHECK(cfg.dropout >= 0.0f && cfg.dropout < 1.0f, "rnn '{}': dropout {} outside [0, 1)", this->path(),
               cfg.dropout);
  // The gate rows G = gates · H (at most 4 H) and a bidirectional layer's input 2 H are ints.
  ENGRAM_CHECK(cfg.hidden_size <= std::numeric_limits<int>::max() / 4, "rnn '{}': hidden_size {} is past {}",
               this->path(), cfg.hidden_size, std::numeric_limits<int>::max() / 4);
  const int hid = cfg.hidden_size, gw = gates_of(cfg.cell) * hid;
  const float a = 1.0f / std::sqrt(static_cast<float>(hid));
  for (int l = 0; l < cfg.layers; ++l) {
    const int in = l == 0 ? cfg.input_size : directions() * hid;  // I_l
    for (int d = 0; d < directions(); ++d) {
      const std::string dir = fmt::format("l{}{}/", l, d == 0 ? "" : "_reverse");
      LayerParams p;
      p.w_ih = add_param(dir + "w_ih", {gw, in});   // [G, I_l]
      p.w_hh = add_param(dir + "w_hh", {gw, hid});  // [G, H]
      p.b_ih = add_param(dir + "b_ih", {gw});       // [G]
      p.b_hh = add_param(dir + "b_hh", {gw});       // [G]
      for (ParamId id : {p.w_ih, p.w_hh, p.b_ih, p.b_hh}) init::uniform(store, id, rng, -a, a);
      params_.push_back(p);
    }
  }
}

RnnState Rnn::cell(Var xw, const RnnState& s, Var w_hh, Var b_hh) const {
  if (cfg_.cell == CellKind::kLstm) {
    core::LstmState n = core::lstm_cell(xw, s.h, s.c, w_hh, b_hh);
    return {n.h, n.c};
  }
  return {core::gru_cell(xw, s.h, w_hh, b_hh), Var{}};
}

void Rnn::check_state(const RnnState& s, int batch, const char* what, int index) const {
  const Shape want{batch, cfg_.hidden_size};
  ENGRAM_CHECK(s.h.valid() && s.h.shape() == want, "rnn '{}': {} state {} h must be {}, got {}", path(), what, index,
               want, s.h.valid() ? s.h.shape() : Shape{});
  if (cfg_.cell == CellKind::kLstm)
    ENGRAM_CHECK(s.c.valid() && s.c.shape() == want, "rnn '{}': {} state {} c must be {}, got {}", path(), what,
                 index, want, s.c.valid() ? s.c.shape() : Shape{});
}

std::vector<RnnState> Rnn::zero_state(Graph& g, int batch) const {
  ENGRAM_CHECK(batch >= 1, "rnn '{}': zero_state of batch {}", path(), batch);
  Var z = g.zeros({batch, cfg_.hidden_size});  // [B, H], shared: constants are never written
  const bool lstm = cfg_.cell == CellKind::kLstm;
  return std::vector<RnnState>(static_cast<size_t>(cfg_.layers) * directions(), RnnState{z, lstm ? z : Var{}});
}

Rnn::DirResult Rnn::run_direction(Graph& g, Var xw, const LayerParams& p, bool reverse, RnnState state,
                                  const std::vector<int>& lengths) const {
  const int b = state.h.shape()[0], hid = cfg_.hidden_size, gw = xw.shape()[1];
  const int steps = static_cast<int>(xw.shape()[0] / b);
  Var xw3 = core::reshape(xw, {steps, b, gw});            // [T, B, G]
  Var w_hh = param(g, p.w_hh), b_hh = param(g, p.b_hh);  // [G, H], [G]
  core::RnnSequence r = cfg_.cell == CellKind::kLstm
                            ? core::lstm_sequence(xw3, state.h, state.c, w_hh, b_hh, lengths, reverse)
                            : core::gru_sequence(xw3, state.h, w_hh, b_hh, lengths, reverse);
  return {core::reshape(r.out, {steps * b, hid}), {r.h, r.c}};
}

RnnOutput Rnn::forward(Graph& g, Var x, const RnnOptions& opt) const {
  const Shape sx = x.shape();  // a copy: recording ops may move the node storage
  ENGRAM_CHECK(sx.rank() == 3 && sx[0] >= 1 && sx[1] >= 1 && sx[2] == cfg_.input_size,
               "rnn '{}': input {} must be [T, B, {}] with T, B >= 1", path(), sx, cfg_.input_size);
  return run(g, x, {}, sx[0], sx[1], opt);
}

RnnOutput Rnn::forward_projected(Graph& g, std::span<const Var> xw0, const RnnOptions& opt) const {
  const int dirs = directions(), gates = gates_of(cfg_.cell) * cfg_.hidden_size;
  ENGRAM_CHECK(static_cast<int>(xw0.size()) == dirs, "rnn '{}': forward_projected got {} projections, expected {} "
               "(one per direction)", path(), xw0.size(), dirs);
  const Shape s0 = xw0[0].shape();
  ENGRAM_CHECK(s0.rank() == 3 && s0[0] >= 1 && s0[1] >= 1 && s0[2] == gates,
               "rnn '{}': projection {} must be [T, B, {}] with T, B >= 1", path(), s0, gates);
  std::vector<Var> flat;
  for (const Var& xw : xw0) {
    ENGRAM_CHECK(xw.shape() == s0, "rnn '{}': projections {} and {} differ", path(), s0, xw.shape());
    flat.push_back(core::reshape(xw, {s0[0] * s0[1], gates}));
  }
  return run(g, Var{}, std::move(flat), s0[0], s0[1], opt);
}

RnnOutput Rnn::run(Graph& g, Var x, std::vector<Var> xw0, int steps, int b, const RnnOptions& opt) const {
  const int hid = cfg_.hidden_size, dirs = directions();
  const int n_states = cfg_.layers * dirs;
  if (!opt.lengths.empty()) {
    ENGRAM_CHECK(static_cast<int>(opt.lengths.size()) == b, "rnn '{}': {} lengths for a batch of {}", path(),
                 opt.lengths.size(), b);
    for (int i = 0; i < b; ++i) {
      ENGRAM_CHECK(opt.lengths[i] >= 0 && opt.lengths[i] <= steps, "rnn '{}': length {} of sequence {} outside [0, {}]",
                   path(), opt.lengths[i], i, steps);
    }
  }
  std::vector<RnnState> init = opt.initial;
  if (init.empty()) {
    init = zero_state(g, b);
  } else {
    ENGRAM_CHECK(static_cast<int>(init.size()) == n_states, "rnn '{}': {} initial states, expected {} (layers x dirs)",
                 path(), init.size(), n_states);
    for (int k = 0; k < n_states; ++k) check_state(init[k], b, "initial", k);
  }
  RnnOutput result;
  result.final.resize(n_states);
  Var layer_in = x;  // [T, B, I_l]; invalid for layer 0 when its projections are given
  for (int l = 0; l < cfg_.layers; ++l) {
    if (l > 0 && cfg_.dropout > 0.0f && opt.dropout_rng) layer_in = core::dropout(layer_in, cfg_.dropout, *opt.dropout_rng);
    const bool given = l == 0 && !xw0.empty();
    Var flat = given ? Var{} : core::reshape(layer_in, {steps * b, layer_in.shape()[2]});  // [T*B, I_l]
    std::vector<Var> dir_out(dirs);                                                         // D x [T, B, H]
    for (int d = 0; d < dirs; ++d) {
      const LayerParams& p = params(l, d);
      Var xw = given ? xw0[d] : core::affine(flat, param(g, p.w_ih), param(g, p.b_ih));  // [T*B, G], one GEMM
      DirResult r = run_direction(g, xw, p, d == 1, init[l * dirs + d], opt.lengths);
      dir_out[d] = core::reshape(r.outputs, {steps, b, hid});
      result.final[l * dirs + d] = r.last;
    }
    layer_in = dirs == 1 ? dir_out[0] : core::concat(dir_out, 2);  // [T, B, D*H]
  }
  result.outputs = layer_in;
  return result;
}

std::vector<RnnState> Rnn::step(Graph& g, Var x, const std::vector<RnnState>& state, core::Rng* dropout_rng) const {
  ENGRAM_CHECK(!cfg_.bidirectional, "rnn '{}': step() needs a unidirectional rnn (a reverse direction cannot step)",
               path());
  ENGRAM_CHECK(x.shape().rank() == 2 && x.shape()[0] >= 1 && x.shape()[1] == cfg_.input_size,
               "rnn '{}': step input {} must be [B, {}]", path(), x.shape(), cfg_.input_size);
  ENGRAM_CHECK(static_cast<int>(state.size()) == cfg_.layers, "rnn '{}': step got {} states, expected {} (one per layer)",
               path(), state.size(), cfg_.layers);
  const int b = x.shape()[0];
  std::vector<RnnState> next(cfg_.layers);
  Var in = x;  // [B, I_l]
  for (int l = 0; l < cfg_.layers; ++l) {
    check_state(state[l], b, "step", l);
    if (l > 0 && cfg_.dropout > 0.0f && dropout_rng) in = core::dropout(in, cfg_.dropout, *dropout_rng);
    const LayerParams& p = params(l, 0);
    Var xw = core::affine(in, param(g, p.w_ih), param(g, p.b_ih));  // [B, G]
    next[l] = cell(xw, state[l], param(g, p.w_hh), param(g, p.b_hh));
    in = next[l].h;
  }
  return next;
}

Var Rnn::project_input(Graph& g, Var x) const {
  ENGRAM_CHECK(x.shape().rank() == 2 && x.shape()[1] == cfg_.input_size, "rnn '{}': project_input of {} (need [R, {}])",
               path(), x.shape(), cfg_.input_size);
  const LayerParams& p = params(0, 0);
  return core::affine(x, param(g, p.w_ih), param(g, p.b_ih));  // [R, G]
}

Var Rnn::project_embedded(Graph& g, Var x, Var w, Var b, int dir) const {
  ENGRAM_CHECK(dir >= 0 && dir < directions(), "rnn '{}': project_embedded of direction {} (has {})", path(), dir,
               directions());
  const int in = cfg_.input_size;
  const Shape sx = x.shape(), sw = w.shape();
  ENGRAM_CHECK(sx.rank() == 2 && sw.rank() == 2 && sw[0] == in && sw[1] == sx[1] && b.shape() == Shape{in},
               "rnn '{}': project_embedded of x {} through w {} and b {} (need [R, F], [{}, F], [{}])", path(), sx, sw,
               b.shape(), in, in);
  if (sx[1] >= in) {
    const LayerParams& p = params(0, dir);
    return core::affine(core::affine(x, w, b), param(g, p.w_ih), param(g, p.b_ih));
  }
  const Folded f = fold_embedding(g, w, b, dir);
  return core::affine(x, f.weight, f.bias);  // [R, G]
}

Rnn::Folded Rnn::fold_embedding(Graph& g, Var w, Var b, int dir) const {
  ENGRAM_CHECK(dir >= 0 && dir < directions(), "rnn '{}': fold_embedding of direction {} (has {})", path(), dir,
               directions());
  const int in = cfg_.input_size;
  ENGRAM_CHECK(w.shape().rank() == 2 && w.shape()[0] == in && b.shape() == Shape{in},
               "rnn '{}': fold_embedding through w {} and b {} (need [{}, F] and [{}])", path(), w.shape(), b.shape(),
               in, in);
  const LayerParams& p = params(0, dir);
  const Var w_ih = param(g, p.w_ih), b_ih = param(g, p.b_ih);  // [G, I], [G]
  const int gates = w_ih.shape()[0];
  // (W_ih w)^T = w^T W_ih^T: F rows through W_ih, the few-row weight product (packed weights
  // serve it at inference), then the small transposes.
  return {core::transpose(core::affine(core::transpose(w), w_ih)),                         // [G, F]
          core::reshape(core::affine(core::reshape(b, {1, in}), w_ih, b_ih), {gates})};  // [G]
}

std::vector<RnnState> Rnn::step_projected(Graph& g, Var xw, const std::vector<RnnState>& state) const {
  ENGRAM_CHECK(!cfg_.bidirectional && cfg_.layers == 1, "rnn '{}': step_projected needs one unidirectional layer",
               path());
  ENGRAM_CHECK(static_cast<int>(state.size()) == 1, "rnn '{}': step_projected got {} states, expected 1", path(),
               state.size());
  const LayerParams& p = params(0, 0);
  const Var w_hh = param(g, p.w_hh);  // [G, H]
  const int gates = w_hh.shape()[0];
  ENGRAM_CHECK(xw.shape().rank() == 2 && xw.shape()[0] >= 1 && xw.shape()[1] == gates,
               "rnn '{}': step_projected input {} must be [B, {}]", path(), xw.shape(), gates);
  check_state(state[0], xw.shape()[0], "step", 0);
  return {cell(xw, state[0], w_hh, param(g, p.b_hh))};
}

}  // namespace engram::nn
