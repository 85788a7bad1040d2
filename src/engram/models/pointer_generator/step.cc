// PgStepModel: the pointer-generator as a decode::StepModel. The decoder state, the coverage
// vector and the encoder memory live in plain buffers (decode/state_buffers.h), so the search
// resets the graph every step; the memory and the source's extended ids are re-gathered only when
// the rows' sentence mapping changes.
// Dims: B sentences, N rows, S source len, H hidden, C context, K key width, V vocabulary,
// X extra ids of the batch.
#include <algorithm>
#include <limits>

#include "engram/core/ops.h"
#include "engram/data/vocab.h"
#include "engram/decode/state_buffers.h"
#include "engram/models/encoded_memory.h"
#include "engram/models/pointer_generator/model.h"

namespace engram::models {

namespace {

using decode::copy_of;
using decode::gather;
using decode::store;
using decode::view;

class PgState final : public decode::DecodeState {
 public:
  int rows() const override { return n; }

  int n = 0;                             // N
  int src_len = 0;                       // S
  int extra = 0;                         // X
  std::vector<float> h, c;               // [N, H] (c: LSTM only)
  std::vector<float> coverage;           // [N, S] Σ of earlier α (coverage models)
  EncodedMemory mem;                     // the sentence each row reads and its memory
  std::vector<int32_t> ids, ids0;        // [N, S] extended source ids; [B, S] the batch's
};

PgState& pg_state(decode::DecodeState& s) { return decode::state_as<PgState>(s, "pointer_generator"); }

}  // namespace

int32_t PgStepModel::go_id() const { return data::kGoId; }
int32_t PgStepModel::eos_id() const { return data::kEosId; }

std::unique_ptr<decode::DecodeState> PgStepModel::encode(Graph& g, const decode::SourceBatch& src) const {
  core::NoGrad no_grad(g);
  const int b = src.batch, s = src.steps, v = model_.vocab();
  ENGRAM_CHECK(s >= 1 && b >= 1 && src.ids.size() == static_cast<size_t>(s) * b &&
                   src.lengths.size() == static_cast<size_t>(b),
               "pointer_generator: cannot encode a batch of S={}, B={} with {} ids", s, b, src.ids.size());
  auto st = std::make_unique<PgState>();
  for (int32_t id : src.ids) {
    ENGRAM_CHECK(id >= 0 && id < v + s, "pointer_generator: source id {} outside the extended vocabulary [0, {})", id,
                 v + s);
    st->extra = std::max(st->extra, id - v + 1);
  }
  const nn::EncodedSource enc = model_.encode(g, src.ids, s, b, src.lengths, nullptr);
  const nn::DecoderState init = model_.decoder().initial_state(g, enc.final_top);
  const nn::DecoderContext ctx = model_.decoder().prepare_context(g, enc.outputs, enc.final_top, src.lengths);
  st->n = b;
  st->src_len = s;
  st->h = copy_of(init.layers[0].h);
  if (init.layers[0].c.valid()) st->c = copy_of(init.layers[0].c);
  if (model_.cfg().coverage) st->coverage.assign(static_cast<size_t>(b) * s, 0.0f);
  st->mem.init(b, &ctx.memory);
  st->ids0.resize(static_cast<size_t>(b) * s);
  for (int j = 0; j < b; ++j)
    for (int i = 0; i < s; ++i) st->ids0[int64_t{j} * s + i] = src.ids[int64_t{i} * b + j];
  st->ids = st->ids0;
  return st;
}

decode::StepOutput PgStepModel::step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const {
  core::NoGrad no_grad(g);
  PgState& st = pg_state(state);
  const int n = st.n, s = st.src_len, h = model_.cfg().hidden;
  ENGRAM_CHECK(static_cast<int>(prev_ids.size()) == n, "pointer_generator: {} previous ids for {} rows",
               prev_ids.size(), n);
  Var emb = model_.embedding().forward(g, model_.to_vocab(prev_ids));  // [N, E]
  Var xw = model_.decoder().input_projection(g, emb);                 // [N, G]
  nn::DecoderState ds;
  ds.layers.push_back({view(g, st.h, {n, h}), st.c.empty() ? Var{} : view(g, st.c, {n, h})});
  nn::DecoderContext ctx;
  ctx.memory = st.mem.view(g);
  const bool cov_on = model_.cfg().coverage && options_.coverage_active;
  Var feature = !model_.cfg().coverage ? Var{}
                : cov_on               ? view(g, st.coverage, {n, s, 1})
                                       : g.zeros({n, s, 1});
  nn::DecoderStepOutput o = model_.decoder().step(g, ctx, xw, ds, nullptr, feature);
  Var logits = model_.output().logits(g, model_.decoder().readout(g, o.top, o.context, emb, {}));  // [N, V]
  core::Tensor lp;      // [N, V + X] with copy, [N, V] without
  core::Tensor p_gen;   // [N] with copy
  if (const nn::CopyOutput* copy = model_.copy()) {
    Var gate = copy->gate_logit(g, o.context, o.top, emb);  // [N]
    const nn::CopyDistribution d =
        copy->distribution(g, nn::CopyStep{logits, o.scores, gate, nn::CopySource{st.ids, st.extra, st.mem.mask_rows()}});
    lp = d.log_probs;
    p_gen = d.p_gen;
  } else {
    lp = core::log_softmax(logits).value();
  }
  const int width = lp.shape[1];
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int r = 0; r < n; ++r) {
    float* row = lp.data + int64_t{r} * width;
    row[data::kPadId] = kNegInf;
    row[data::kGoId] = kNegInf;
    if (options_.block_unk) row[data::kUnkId] = kNegInf;
    if (options_.oov_bonus != 0.0f)
      for (int k = model_.vocab(); k < width; ++k) row[k] += options_.oov_bonus;  // −inf stays −inf
  }
  store(st.h, o.state.layers[0].h);
  if (!st.c.empty()) store(st.c, o.state.layers[0].c);
  if (cov_on) {
    const float* a = o.alpha.data();
    for (size_t k = 0; k < st.coverage.size(); ++k) st.coverage[k] += a[k];
  }
  return {lp, o.alpha.value(), p_gen};
}

void PgStepModel::reorder(decode::DecodeState& state, std::span<const int32_t> rows) const {
  PgState& st = pg_state(state);
  for (int32_t r : rows)
    ENGRAM_CHECK(r >= 0 && r < st.n, "pointer_generator: reorder row {} outside [0, {})", r, st.n);
  const int64_t h = model_.cfg().hidden, s = st.src_len;
  gather(st.h, st.h, rows, h);
  gather(st.c, st.c, rows, h);
  gather(st.coverage, st.coverage, rows, s);
  st.n = static_cast<int>(rows.size());
  if (st.mem.reorder(rows)) gather(st.ids0, st.ids, st.mem.rows, s);
}

}  // namespace engram::models
