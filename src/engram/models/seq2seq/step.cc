// Seq2Seq as a decode::StepModel: the decoder state lives in plain buffers owned by the state
// object (so the search resets the graph every step); the encoder memory is copied out once per
// batch and re-gathered only when the rows' sentence mapping changes (beam expansion and
// compaction), not when beams of one sentence are reordered.
// Dims: B sentences, N rows, S source len, H hidden, C context, K key width, G gates, P readout.
#include <algorithm>
#include <cstring>
#include <limits>

#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/gemm_int8.h"
#include "engram/core/ops.h"
#include "engram/decode/state_buffers.h"
#include "engram/data/vocab.h"
#include "engram/models/encoded_memory.h"
#include "engram/models/seq2seq/model.h"

namespace engram::models {

namespace {

using decode::copy_of;
using decode::gather;
using decode::store;
using decode::view;

constexpr int kShortlistRows = 256;  // a shortlisted int8 or bf16 output product has a multiple of this many rows

class Seq2SeqState final : public decode::DecodeState {
 public:
  int rows() const override { return n; }

  int n = 0;                               // N
  int sentences = 0;                       // B
  std::vector<std::vector<float>> h, c;    // L x [N, H] (c: LSTM only)
  std::vector<float> feed;                 // [N, P] luong input feeding
  EncodedMemory mem;                       // the sentence each row reads and its memory (attention)
  std::vector<float> fixed, fixed_proj;    // [N, C], [N, G] attention none
  // A restricted output layer (SourceBatch::output_ids): the V' classes, their rows of W_o [V', P]
  // and b_o [V'], and the full [N, V] log-probabilities the step returns: -inf outside the V',
  // written once per batch (N only shrinks after the first step of a greedy search; a beam's
  // expansion fills it again), the V' entries at every step. W_o's rows and these go back to the
  // thread's spares (decode/state_buffers.h) when the batch ends.
  ~Seq2SeqState() override {
    for (std::vector<float>* v : {&out_w, &out_f, &full_lp}) decode::give_buffer(*v);
    decode::give_buffer(out_q);
    decode::give_buffer(out_h);
  }
  std::vector<int32_t> out_ids;
  std::vector<float> out_w, out_b, full_lp;
  // With int8 or bf16 decoding weights (the graph has an int8 or bf16 copy of W_o): the V' rows and
  // zero rows up to a multiple of kShortlistRows (at most V), quantized and packed
  // (kernels::pack_int8), or rounded to bf16 [V'pad, P] and packed (kernels::pack_bf16_pairs, where
  // packed_bf16_kernel()), once per batch at its first step (storage from the spares); b_o then has
  // as many entries.
  std::vector<int8_t> out_q;
  std::vector<uint16_t> out_h;
  // With packed fp32 decoding weights (Graph::f32_packed): the V' rows packed (kernels::pack_f32).
  std::vector<float> out_f;
  // The encoded batch (row b = sentence b), source of every re-gather.
  std::vector<float> fixed0, fixed_proj0;
};

Seq2SeqState& seq2seq_state(decode::DecodeState& s) { return decode::state_as<Seq2SeqState>(s, "seq2seq"); }

// W_o's shortlisted rows [V', P] and their biases [V'] extended with zeros to v_pad rows.
void pad_output_rows(Seq2SeqState& st, int v_pad, int p) {
  st.out_w.resize(static_cast<size_t>(v_pad) * p, 0.0f);
  st.out_b.resize(v_pad, 0.0f);
}

// The logits [N, V'] of the batch's V' shortlisted classes from the readout pre [N, P], on the
// kernel W_o's own product would use: int8 or bf16 where the graph has such a copy of W_o (w_o
// [V, P]), the packed fp32 kernel up to kPackedRows rows, else sgemm. The int8 and bf16 products
// run over V' rounded up to kShortlistRows, at most V (zero rows, bias 0, outputs dropped): oneDNN
// builds a primitive per product shape, and batches of like V' share theirs.
Var shortlist_logits(core::Graph& g, Seq2SeqState& st, Var pre, const float* w_o, int v) {
  const int n = st.n, v_sub = static_cast<int>(st.out_ids.size()), p = pre.shape()[1];
  const int v_pad = std::min(v, (v_sub + kShortlistRows - 1) / kShortlistRows * kShortlistRows);
  const core::Tensor x = pre.value();
  core::Tensor y;  // [N, V'pad]
  if (g.int8_packed(w_o, v, p)) {
    if (st.out_q.empty()) {
      const size_t bytes = static_cast<size_t>(core::kernels::packed_int8_size(v_pad, p));
      decode::reserve_buffer(st.out_q, bytes);
      st.out_q.resize(bytes);
      pad_output_rows(st, v_pad, p);
      core::kernels::pack_int8(st.out_w.data(), v_pad, p, st.out_q.data());
      st.out_w.resize(static_cast<size_t>(v_sub) * p);
    }
    y = g.alloc({n, v_pad});
    core::kernels::gemm_int8_packed(n, v_pad, p, x.data, p, st.out_q.data(), 0.0f, y.data, v_pad, st.out_b.data());
  } else if (g.bf16_weight(w_o)) {
    const size_t plain = static_cast<size_t>(v_pad) * p;
    const bool packs = core::kernels::packed_bf16_kernel();
    if (st.out_h.empty()) {
      const size_t size = plain + (packs ? static_cast<size_t>(core::kernels::packed_bf16_size(v_pad, p)) : 0);
      decode::reserve_buffer(st.out_h, size);
      st.out_h.resize(size);
      pad_output_rows(st, v_pad, p);
      core::kernels::to_bf16(st.out_w.data(), st.out_h.data(), static_cast<int64_t>(plain));
      if (packs) core::kernels::pack_bf16_pairs(st.out_w.data(), v_pad, p, st.out_h.data() + plain);
      st.out_w.resize(static_cast<size_t>(v_sub) * p);
    }
    y = g.alloc({n, v_pad});
    core::bf16_weight_product(n, v_pad, p, x.data, st.out_h.data(), packs ? st.out_h.data() + plain : nullptr, 0.0f,
                              y.data, st.out_b.data());
  }
  if (y.data) {
    for (int r = 1; r < n; ++r)  // [N, V'pad] -> [N, V'] in place (each row moves down)
      std::memmove(y.data + int64_t{r} * v_sub, y.data + int64_t{r} * v_pad, sizeof(float) * v_sub);
    return g.input(core::Tensor{y.data, core::Shape{n, v_sub}});
  }
  if (n <= core::kernels::kPackedRows && g.f32_packed(w_o, v, p)) {
    if (st.out_f.empty()) {
      decode::reserve_buffer(st.out_f, static_cast<size_t>(core::kernels::packed_f32_size(v_sub, p)));
      st.out_f.resize(static_cast<size_t>(core::kernels::packed_f32_size(v_sub, p)));
      core::kernels::pack_f32(st.out_w.data(), v_sub, p, st.out_f.data());
    }
    y = g.alloc({n, v_sub});
    core::kernels::sgemm_small_m_packed(n, v_sub, p, 1.0f, x.data, p, st.out_f.data(), 0.0f, y.data, v_sub,
                                        st.out_b.data());
    return g.input(y);
  }
  return core::affine(pre, view(g, st.out_w, {v_sub, p}), view(g, st.out_b, {v_sub}));
}

}  // namespace

int32_t Seq2Seq::go_id() const { return data::kGoId; }
int32_t Seq2Seq::eos_id() const { return data::kEosId; }

std::unique_ptr<decode::DecodeState> Seq2Seq::encode(Graph& g, const decode::SourceBatch& src) const {
  core::NoGrad no_grad(g);
  ENGRAM_CHECK(src.steps >= 1 && src.batch >= 1, "seq2seq: cannot encode an empty batch (S={}, B={})", src.steps,
               src.batch);
  for (int32_t id : src.ids)
    ENGRAM_CHECK(id >= 0 && id < cfg_.src_vocab, "seq2seq: source id {} outside the vocabulary [0, {})", id,
                 cfg_.src_vocab);
  EncoderOutput enc = encode_batch(g, src.ids, src.lengths, src.steps, nullptr);
  auto st = std::make_unique<Seq2SeqState>();
  st->n = src.batch;
  st->sentences = src.batch;
  for (const nn::RnnState& s : enc.init.layers) {
    st->h.push_back(copy_of(s.h));
    if (s.c.valid()) st->c.push_back(copy_of(s.c));
  }
  if (enc.init.feed.valid()) st->feed = copy_of(enc.init.feed);
  st->mem.init(src.batch, has_attention() ? &enc.context.memory : nullptr);
  if (!has_attention()) {
    st->fixed0 = copy_of(enc.context.fixed);
    st->fixed_proj0 = copy_of(enc.context.fixed_proj);
  }
  if (!src.output_ids.empty()) restrict_output(*st, src.output_ids);
  st->fixed = st->fixed0;
  st->fixed_proj = st->fixed_proj0;
  return st;
}

decode::StepOutput Seq2Seq::step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const {
  core::NoGrad no_grad(g);
  Seq2SeqState& st = seq2seq_state(state);
  const int n = st.n, h = cfg_.hidden, c = context_width();
  ENGRAM_CHECK(static_cast<int>(prev_ids.size()) == n, "seq2seq: {} previous ids for {} rows", prev_ids.size(), n);
  std::vector<int32_t> ids(prev_ids.begin(), prev_ids.end());
  Var emb = embed_target(g, ids, nullptr);  // [N, E]
  Var xw = decoder_->input_projection(g, emb);  // [N, G]
  DecoderState ds;
  for (size_t l = 0; l < st.h.size(); ++l)
    ds.layers.push_back({view(g, st.h[l], {n, h}), st.c.empty() ? Var{} : view(g, st.c[l], {n, h})});
  if (!st.feed.empty()) ds.feed = view(g, st.feed, {n, feed_width()});
  DecoderContext ctx;
  if (has_attention()) {
    ctx.memory = st.mem.view(g);
  } else {
    ctx.fixed = view(g, st.fixed, {n, c});
    ctx.fixed_proj = view(g, st.fixed_proj, {n, static_cast<int>(st.fixed_proj0.size() / st.sentences)});
  }
  DecoderStepOutput o = decoder_->step(g, ctx, xw, ds, nullptr);
  core::Tensor lp;  // [N, V]
  if (st.out_ids.empty()) {
    lp = core::log_softmax(readout_logits(g, o.top, o.context, emb, o.attentional, nullptr)).value();
  } else {  // the V' shortlisted classes: log-softmax over them, -inf elsewhere
    const int v_sub = static_cast<int>(st.out_ids.size()), v = cfg_.tgt_vocab;
    Var pre = decoder_->readout(g, o.top, o.context, emb, o.attentional);  // [N, P]
    const Var logits =
        shortlist_logits(g, st, pre, store_.value(output_->linear().weight()).data, v);  // [N, V']
    const core::Tensor sub = core::log_softmax(logits).value();
    if (st.full_lp.size() < static_cast<size_t>(n) * v) {  // the search keeps the -inf (step_model.h)
      decode::reserve_buffer(st.full_lp, static_cast<size_t>(n) * v);
      st.full_lp.assign(static_cast<size_t>(n) * v, -std::numeric_limits<float>::infinity());
    }
    for (int r = 0; r < n; ++r)
      for (int j = 0; j < v_sub; ++j)
        st.full_lp[static_cast<size_t>(r) * v + st.out_ids[j]] = sub.data[static_cast<int64_t>(r) * v_sub + j];
    lp = core::Tensor{st.full_lp.data(), core::Shape{n, v}};
  }
  for (size_t l = 0; l < st.h.size(); ++l) {
    store(st.h[l], o.state.layers[l].h);
    if (!st.c.empty()) store(st.c[l], o.state.layers[l].c);
  }
  if (!st.feed.empty()) store(st.feed, o.state.feed);
  return {lp, o.alpha.valid() ? o.alpha.value() : core::Tensor{}};
}

void Seq2Seq::restrict_output(decode::DecodeState& state, std::span<const int32_t> ids) const {
  Seq2SeqState& st = seq2seq_state(state);
  const int v = cfg_.tgt_vocab, p = readout_dim_;
  for (size_t i = 0; i < ids.size(); ++i)
    ENGRAM_CHECK(ids[i] >= 0 && ids[i] < v && (i == 0 || ids[i] > ids[i - 1]),
                 "seq2seq: output ids must be sorted, unique and in [0, {}); entry {} is {}", v, i, ids[i]);
  ENGRAM_CHECK(std::binary_search(ids.begin(), ids.end(), eos_id()), "seq2seq: the output ids leave out <eos> ({})",
               eos_id());
  const nn::Linear& out = output_->linear();
  const core::Tensor w = store_.value(out.weight());  // [V, P]
  st.out_ids.assign(ids.begin(), ids.end());
  st.out_q.clear();
  st.out_h.clear();
  st.out_f.clear();
  st.full_lp.clear();
  decode::reserve_buffer(st.out_w, (ids.size() + kShortlistRows - 1) / kShortlistRows * kShortlistRows * p);
  st.out_w.clear();
  st.out_b.assign(ids.size(), 0.0f);
  const float* b = out.bias() ? store_.value(*out.bias()).data : nullptr;
  for (size_t i = 0; i < ids.size(); ++i) {
    const float* row = w.data + static_cast<int64_t>(ids[i]) * p;
    st.out_w.insert(st.out_w.end(), row, row + p);
    if (b) st.out_b[i] = b[ids[i]];
  }
}

void Seq2Seq::reorder(decode::DecodeState& state, std::span<const int32_t> rows) const {
  Seq2SeqState& st = seq2seq_state(state);
  for (int32_t r : rows) ENGRAM_CHECK(r >= 0 && r < st.n, "seq2seq: reorder row {} outside [0, {})", r, st.n);
  const int64_t h = cfg_.hidden;
  for (auto& v : st.h) gather(v, v, rows, h);
  for (auto& v : st.c) gather(v, v, rows, h);
  if (!st.feed.empty()) gather(st.feed, st.feed, rows, feed_width());
  st.n = static_cast<int>(rows.size());
  if (!st.mem.reorder(rows)) return;
  gather(st.fixed0, st.fixed, st.mem.rows, context_width());
  gather(st.fixed_proj0, st.fixed_proj, st.mem.rows, static_cast<int64_t>(st.fixed_proj0.size()) / st.sentences);
}

}  // namespace engram::models
