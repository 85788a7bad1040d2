// PointerNet as a decode::StepModel: the decoder state and the per-row prefix (which positions
// each row has pointed at, for the task's rules) live in plain buffers owned by the state, so
// the search resets the graph every step. The encoded batch (pointer and glimpse keys, and the
// decoder's input projections) is copied out once; the keys are re-gathered only when the rows'
// instance mapping changes (beam expansion and compaction). The decoder's inputs are known before
// it runs (<go> and the embedded input elements): a step's input gates are its rows [x, is_go]
// times the folded input weights [G, F + 1] of the encoding (Encoded::input_weight, F + 1
// multiply-adds per gate), then the cell multiplies by W_hh only (nn::Rnn::step_projected).
// Dims: B instances, N rows, S positions, V = S + 1 classes, E embedding, H hidden, A attention,
// G gates (4H LSTM, 3H GRU).
#include <cmath>
#include <cstring>

#include "engram/core/ops.h"
#include "engram/decode/state_buffers.h"
#include "engram/models/pointer/model.h"

namespace engram::models {

namespace {

using decode::copy_of;
using decode::gather;
using decode::store;
using decode::view;

class PointerState final : public decode::DecodeState {
 public:
  int rows() const override { return n; }

  int n = 0;                       // N
  int instances = 0;               // B
  int s = 0;                       // S
  int key_dim = 0;                 // A
  std::vector<int32_t> lengths;    // [B] points per instance
  std::vector<float> h, c;         // [N, H] (c: LSTM only)
  std::vector<int32_t> mem_rows;   // [N] the instance each row decodes
  std::vector<uint8_t> used;       // [N, S] positions pointed at
  std::vector<PointerPrefix> prefix;  // [N]
  int features = 0;                // F
  std::vector<float> points;       // [S, B, F] the instances' features (time-major)
  std::vector<float> in_wt, in_b;  // [F + 1, G] (transposed), [G]: the decoder's folded input weights
  std::vector<float> keys0, gkeys0, gvalues0;  // [B, V, A], glimpse [B, V, A] and [B, V, H]
  std::vector<float> keys, gkeys, gvalues;     // the same for the current rows
};

PointerState& pointer_state(decode::DecodeState& s) { return decode::state_as<PointerState>(s, "pointer"); }

}  // namespace

std::unique_ptr<decode::DecodeState> PointerNet::encode(Graph& g, const decode::SourceBatch& src) const {
  core::NoGrad no_grad(g);
  Encoded enc = encode_batch(g, src);
  auto st = std::make_unique<PointerState>();
  st->n = st->instances = src.batch;
  st->s = src.steps;
  st->lengths = src.lengths;
  st->h = copy_of(enc.final_top);
  if (cfg_.cell == PointerCell::kLstm) st->c.assign(st->h.size(), 0.0f);
  st->mem_rows.resize(src.batch);
  for (int b = 0; b < src.batch; ++b) st->mem_rows[b] = b;
  st->used.assign(static_cast<size_t>(src.batch) * src.steps, 0);
  st->prefix.assign(src.batch, {});
  st->features = src.feature_dim;
  st->points = src.features;
  const int gates = enc.input_weight.shape()[0], fw = enc.input_weight.shape()[1];
  st->in_wt.resize(static_cast<size_t>(gates) * fw);
  for (int j = 0; j < gates; ++j)
    for (int k = 0; k < fw; ++k) st->in_wt[static_cast<size_t>(k) * gates + j] = enc.input_weight.data()[j * fw + k];
  st->in_b = copy_of(enc.input_bias);
  st->keys0 = copy_of(enc.pointer_mem.keys);
  st->key_dim = enc.pointer_mem.keys.shape()[2];
  if (glimpse_) {
    st->gkeys0 = copy_of(enc.glimpse_mem.keys);
    st->gvalues0 = copy_of(enc.glimpse_mem.values);
  }
  st->keys = st->keys0;
  st->gkeys = st->gkeys0;
  st->gvalues = st->gvalues0;
  return st;
}

decode::StepOutput PointerNet::step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const {
  core::NoGrad no_grad(g);
  PointerState& st = pointer_state(state);
  const int n = st.n, s = st.s, v = s + 1, h = cfg_.hidden;
  ENGRAM_CHECK(static_cast<int>(prev_ids.size()) == n, "pointer: {} previous classes for {} rows", prev_ids.size(), n);
  // The previous step's choices: the decoder's input rows, and the rows' prefixes for the rules.
  std::vector<int32_t> pos(n, -1);  // -1: <go>
  for (int r = 0; r < n; ++r) {
    const int32_t c = prev_ids[r], b = st.mem_rows[r];
    if (c != kPointerGo) {
      ENGRAM_CHECK(c >= 1 && c <= st.lengths[b], "pointer: row {} continues after class {} (instance of {} points; "
                   "0 = end)", r, c, st.lengths[b]);
      uint8_t& u = st.used[static_cast<int64_t>(r) * s + c - 1];
      ENGRAM_CHECK(!u, "pointer: row {} points at position {} twice", r, c - 1);
      u = 1;
      if (st.prefix[r].count++ == 0) st.prefix[r].first = c - 1;
      pos[r] = c - 1;
    }
  }
  // Input gates [N, G] = rows [x, is_go] times the folded weights, F + 1 multiply-adds per gate: a
  // loop, not a product call (a call costs more than the arithmetic at one row).
  const int fw = st.features + 1, gates = static_cast<int>(st.in_b.size());
  float* x = g.arena().floats(static_cast<size_t>(n) * fw);  // [N, F + 1]
  decoder_input_rows(st.points, st.instances, st.features, pos, st.mem_rows, x);
  core::Tensor xw = g.alloc({n, gates});
  for (int r = 0; r < n; ++r) {
    float* out = xw.data + static_cast<int64_t>(r) * gates;
    std::memcpy(out, st.in_b.data(), sizeof(float) * gates);
    for (int k = 0; k < fw; ++k) {
      const float a = x[static_cast<int64_t>(r) * fw + k];
      const float* w = st.in_wt.data() + static_cast<int64_t>(k) * gates;
      for (int j = 0; j < gates; ++j) out[j] += a * w[j];
    }
  }
  float* mask = g.arena().floats(static_cast<size_t>(n) * v);  // [N, V]
  for (int r = 0; r < n; ++r)
    pointer_allowed(cfg_.task, st.lengths[st.mem_rows[r]], s, st.prefix[r], st.used.data() + static_cast<int64_t>(r) * s,
                    mask + static_cast<int64_t>(r) * v);
  std::vector<nn::RnnState> prev = {
      {view(g, st.h, {n, h}), st.c.empty() ? Var{} : view(g, st.c, {n, h})}};
  const std::vector<nn::RnnState> next = decoder_->step_projected(g, g.input(xw), prev);
  nn::AttentionMemory pm;
  pm.keys = view(g, st.keys, {n, v, st.key_dim});
  pm.values = pm.keys;  // the pointer reads only the keys
  pm.batch = n;
  pm.src_len = v;
  nn::AttentionMemory gm;
  if (glimpse_) {
    gm.keys = view(g, st.gkeys, {n, v, static_cast<int>(st.gkeys0.size() / (int64_t{st.instances} * v))});
    gm.values = view(g, st.gvalues, {n, v, h});
    gm.batch = n;
    gm.src_len = v;
  }
  Var lp = point(g, pm, gm, next[0].h, mask);  // [N, V]
  store(st.h, next[0].h);
  if (!st.c.empty()) store(st.c, next[0].c);
  // The alignment: the pointer's distribution over the input positions (the end slot left out).
  core::Tensor align = g.alloc({n, s});
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < s; ++j) align.data[static_cast<int64_t>(r) * s + j] = std::exp(lp.data()[int64_t{r} * v + j + 1]);
  return {lp.value(), align};
}

void PointerNet::reorder(decode::DecodeState& state, std::span<const int32_t> rows) const {
  PointerState& st = pointer_state(state);
  for (int32_t r : rows) ENGRAM_CHECK(r >= 0 && r < st.n, "pointer: reorder row {} outside [0, {})", r, st.n);
  const int64_t h = cfg_.hidden, s = st.s, v = s + 1;
  gather(st.h, st.h, rows, h);
  gather(st.c, st.c, rows, h);
  gather(st.used, st.used, rows, s);
  std::vector<PointerPrefix> prefix(rows.size());
  std::vector<int32_t> mem_rows(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    prefix[i] = st.prefix[rows[i]];
    mem_rows[i] = st.mem_rows[rows[i]];
  }
  st.prefix.swap(prefix);
  st.n = static_cast<int>(rows.size());
  if (mem_rows == st.mem_rows) return;  // rows reordered within their instances: keys unchanged
  st.mem_rows = mem_rows;
  gather(st.keys0, st.keys, mem_rows, v * st.key_dim);
  if (glimpse_) {
    gather(st.gkeys0, st.gkeys, mem_rows, static_cast<int64_t>(st.gkeys0.size()) / st.instances);
    gather(st.gvalues0, st.gvalues, mem_rows, v * h);
  }
}

}  // namespace engram::models
