// Neural Turing Machine: parameters, the unrolled forward with the NaN guard, and the trace of
// every row's weightings for plots and the server.
// Dims: T steps, B batch, I inputs, K outputs, H controller width, N slots, M slot width,
// R read heads, W write heads, P = M + S + 3 head parameters, F = H + R*M output features.
#include "engram/models/ntm/ntm.h"

#include <Eigen/Core>

#include <cmath>

#include "engram/core/ops.h"
#include "engram/nn/init.h"
#include "engram/nn/memory/addressing.h"

namespace engram::models {

namespace c = engram::core;

namespace {

bool all_finite(Var v) { return Eigen::Map<const Eigen::ArrayXf>(v.data(), v.numel()).allFinite(); }

// Appends v [B, n] to out.
void append_rows(std::vector<float>& out, Var v) { out.insert(out.end(), v.data(), v.data() + v.shape().numel()); }

}  // namespace

Ntm::Ntm(nn::ParamStore& store, std::string path, const NtmConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg) {
  ENGRAM_CHECK(cfg.input_size >= 1 && cfg.output_size >= 1 && cfg.controller_size >= 1 && cfg.controller_layers >= 1,
               "ntm: input_size {}, output_size {}, controller_size {} and controller_layers {} must be >= 1",
               cfg.input_size, cfg.output_size, cfg.controller_size, cfg.controller_layers);
  ENGRAM_CHECK(cfg.memory_slots >= 1 && cfg.memory_width >= 1 && cfg.read_heads >= 1 && cfg.write_heads >= 1 &&
                   cfg.shift_range >= 0,
               "ntm: memory {} x {}, {} read / {} write heads and shift range {}: need N, M, R, W >= 1, range >= 0",
               cfg.memory_slots, cfg.memory_width, cfg.read_heads, cfg.write_heads, cfg.shift_range);
  ENGRAM_CHECK(std::isfinite(cfg.memory_init_value), "ntm: memory_init_value {} must be finite", cfg.memory_init_value);
  const int h = cfg.controller_size, m = cfg.memory_width;
  const int in = cfg.input_size + cfg.read_heads * m;
  if (cfg.controller == NtmController::kLstm) {
    lstm_ = std::make_unique<nn::Rnn>(
        store, child("controller"),
        nn::RnnConfig{.cell = nn::CellKind::kLstm, .input_size = in, .hidden_size = h, .layers = cfg.controller_layers},
        rng);
  } else {
    for (int l = 0; l < cfg.controller_layers; ++l)
      feedforward_.emplace_back(store, child(fmt::format("controller/l{}", l)),
                                nn::LinearConfig{.in_dim = l == 0 ? in : h, .out_dim = h}, rng);
  }
  const int p = nn::HeadLayout{.memory_width = m, .shift_range = cfg.shift_range}.size();
  for (int r = 0; r < cfg.read_heads; ++r)
    read_address_.emplace_back(store, child(fmt::format("read{}/address", r)), nn::LinearConfig{.in_dim = h, .out_dim = p},
                               rng);
  for (int w = 0; w < cfg.write_heads; ++w) {
    write_address_.emplace_back(store, child(fmt::format("write{}/address", w)),
                                nn::LinearConfig{.in_dim = h, .out_dim = p}, rng);
    erase_.emplace_back(store, child(fmt::format("write{}/erase", w)), nn::LinearConfig{.in_dim = h, .out_dim = m}, rng);
    add_.emplace_back(store, child(fmt::format("write{}/add", w)), nn::LinearConfig{.in_dim = h, .out_dim = m}, rng);
  }
  read_init_ = add_param("read_init", {cfg.read_heads * m});
  nn::init::normal(store, read_init_, rng, 0.0f, 0.01f);
  if (cfg.memory_init == NtmMemoryInit::kLearned) {
    memory_init_ = add_param("memory_init", {cfg.memory_slots, m});
    const float a = 1.0f / std::sqrt(static_cast<float>(cfg.memory_slots + m));
    nn::init::uniform(store, memory_init_, rng, -a, a);
  }
  output_ = std::make_unique<nn::Linear>(store, child("output"),
                                         nn::LinearConfig{.in_dim = h + cfg.read_heads * m, .out_dim = cfg.output_size},
                                         rng);
}

Var Ntm::controller_step(Graph& g, Var in, std::vector<nn::RnnState>& state) const {
  if (lstm_) {
    state = lstm_->step(g, in, state);
    return state.back().h;  // [B, H]
  }
  Var h = in;
  for (const nn::Linear& layer : feedforward_) h = c::tanh(layer.forward(g, h));
  return h;  // [B, H]
}

SeqOutput Ntm::forward(Graph& g, Var x, const std::vector<int32_t>& rows, SeqTrace* trace) const {
  const c::Shape& sx = x.shape();
  ENGRAM_CHECK(sx.rank() == 3 && sx[2] == cfg_.input_size, "ntm: input {} must be [T, B, {}]", sx, cfg_.input_size);
  const int steps = sx[0], b = sx[1], n = cfg_.memory_slots, m = cfg_.memory_width;
  const int nr = cfg_.read_heads, nw = cfg_.write_heads;
  // Steps whose output is needed, and each one's position among them.
  std::vector<int> slot_of(steps, -1);
  int needed = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    ENGRAM_CHECK(rows[i] >= 0 && rows[i] < steps * b && (i == 0 || rows[i] > rows[i - 1]),
                 "ntm: output rows must be ascending in [0, {}), got {} at {}", steps * b, rows[i], i);
    int& s = slot_of[rows[i] / b];
    if (s < 0) s = needed++;
  }
  ENGRAM_CHECK(needed > 0, "ntm: no output row requested");

  // ---- initial state
  Var memory = cfg_.memory_init == NtmMemoryInit::kLearned
                   ? c::add(g.zeros({b, n, m}), param(g, memory_init_))  // [B, N, M]
                   : g.full({b, n, m}, cfg_.memory_init_value);
  c::Tensor onehot = g.alloc_zero({b, n});  // [B, N] every head starts on slot 0
  for (int r = 0; r < b; ++r) onehot.data[static_cast<int64_t>(r) * n] = 1.0f;
  Var w0 = g.input(onehot);
  std::vector<Var> w_read(nr, w0), w_write(nw, w0);                  // [B, N] each
  Var reads = c::add(g.zeros({b, nr * m}), param(g, read_init_));    // [B, R*M]
  std::vector<nn::RnnState> state = lstm_ ? lstm_->zero_state(g, b) : std::vector<nn::RnnState>{};
  if (trace) {
    *trace = SeqTrace{};
    trace->steps = steps, trace->batch = b, trace->slots = n, trace->width = m, trace->read_heads = nr, trace->write_heads = nw;
  }

  std::vector<Var> feats;  // needed steps x [B, F]
  std::vector<Var> read_vecs(nr), erase(nw), add(nw);
  for (int t = 0; t < steps; ++t) {
    Var xt = c::reshape(c::slice(x, 0, t, t + 1), {b, cfg_.input_size});  // [B, I]
    Var h = controller_step(g, c::concat({xt, reads}, 1), state);        // [B, H]
    for (int r = 0; r < nr; ++r) {
      Var w = nn::address(memory, read_address_[r].forward(g, h), w_read[r], cfg_.fused);  // [B, N]
      if (!all_finite(w)) return {Var{}, NonFinite{t, fmt::format("read{}", r)}};
      w_read[r] = w;
      read_vecs[r] = nn::read(w, memory, cfg_.fused);  // [B, M]
    }
    for (int q = 0; q < nw; ++q) {
      Var w = nn::address(memory, write_address_[q].forward(g, h), w_write[q], cfg_.fused);  // [B, N]
      if (!all_finite(w)) return {Var{}, NonFinite{t, fmt::format("write{}", q)}};
      w_write[q] = w;
      erase[q] = c::sigmoid(erase_[q].forward(g, h));  // [B, M]
      add[q] = add_[q].forward(g, h);                  // [B, M]
    }
    // All erases, then all adds (a single head: one fused write).
    for (int q = 0; q + 1 < nw; ++q) memory = nn::write(memory, w_write[q], erase[q], Var{}, cfg_.fused);
    memory = nn::write(memory, w_write[nw - 1], erase[nw - 1], add[nw - 1], cfg_.fused);
    for (int q = 0; q + 1 < nw; ++q) memory = nn::write(memory, w_write[q], Var{}, add[q], cfg_.fused);
    reads = nr == 1 ? read_vecs[0] : c::concat(read_vecs, 1);  // [B, R*M]
    if (slot_of[t] >= 0) feats.push_back(c::concat({h, reads}, 1));  // [B, F]
    if (trace) {
      for (int r = 0; r < nr; ++r) append_rows(trace->read_w, w_read[r]), append_rows(trace->reads, read_vecs[r]);
      for (int q = 0; q < nw; ++q) append_rows(trace->write_w, w_write[q]), append_rows(trace->adds, add[q]);
    }
  }
  Var features = feats.size() == 1 ? feats[0] : c::concat(feats, 0);  // [needed * B, F]
  if (static_cast<int64_t>(rows.size()) != features.shape()[0]) {
    std::vector<int32_t> idx(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) idx[i] = slot_of[rows[i] / b] * b + rows[i] % b;
    features = c::select_rows(features, idx);  // [R, F]
  }
  return {output_->forward(g, features), std::nullopt};  // [R, K]
}

}  // namespace engram::models
