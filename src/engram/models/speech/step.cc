// SpeechModel as a decode::StepModel: decoder state, the previous alpha (location-aware
// attention) and the encoder memory live in plain buffers owned by the state; the memory is
// re-gathered only when the rows' utterance mapping changes.
// Dims: B utterances, N rows, S encoder steps, H hidden, C context, A key width.
#include <cstring>

#include "engram/core/ops.h"
#include "engram/decode/state_buffers.h"
#include "engram/models/encoded_memory.h"
#include "engram/models/speech/model.h"

namespace engram::models {

namespace {

using decode::copy_of;
using decode::gather;
using decode::store;
using decode::view;

class SpeechState final : public decode::DecodeState {
 public:
  int rows() const override { return n; }
  int n = 0, utterances = 0, s = 0;
  std::vector<float> h, c;                 // [N, H] (c: LSTM)
  std::vector<float> alpha;                // [N, S] previous step's attention
  EncodedMemory mem;                       // the utterance each row reads and its memory
};

SpeechState& speech_state(decode::DecodeState& s) { return decode::state_as<SpeechState>(s, "speech"); }

}  // namespace

std::unique_ptr<decode::DecodeState> SpeechModel::encode(Graph& g, const decode::SourceBatch& src) const {
  core::NoGrad no_grad(g);
  Encoded enc = encode_batch(g, src);
  auto st = std::make_unique<SpeechState>();
  st->n = st->utterances = src.batch;
  st->s = enc.steps;
  st->h = copy_of(enc.init.layers[0].h);
  if (enc.init.layers[0].c.valid()) st->c = copy_of(enc.init.layers[0].c);
  st->alpha.assign(static_cast<size_t>(src.batch) * enc.steps, 0.0f);
  st->mem.init(src.batch, &enc.context.memory);
  return st;
}

decode::StepOutput SpeechModel::step(Graph& g, decode::DecodeState& state, std::span<const int32_t> prev_ids) const {
  core::NoGrad no_grad(g);
  SpeechState& st = speech_state(state);
  const int n = st.n, s = st.s, h = cfg_.decoder_hidden;
  ENGRAM_CHECK(static_cast<int>(prev_ids.size()) == n, "speech: {} previous ids for {} rows", prev_ids.size(), n);
  std::vector<int32_t> ids(prev_ids.begin(), prev_ids.end());
  for (int32_t id : ids) ENGRAM_CHECK(id >= 0 && id <= kSpeechGo, "speech: previous token {} outside 0-11", id);
  Var emb = embed_->forward(g, ids);
  Var xw = decoder_->input_projection(g, emb);
  nn::DecoderState ds;
  ds.layers.push_back({view(g, st.h, {n, h}), st.c.empty() ? Var{} : view(g, st.c, {n, h})});
  nn::DecoderContext ctx;
  ctx.memory = st.mem.view(g);
  nn::DecoderStepOutput o = decoder_->step(g, ctx, xw, ds, nullptr, location_features(g, view(g, st.alpha, {n, s})));
  Var lp = step_log_probs(g, o, emb);
  store(st.h, o.state.layers[0].h);
  if (!st.c.empty()) store(st.c, o.state.layers[0].c);
  store(st.alpha, o.alpha);
  return {lp.value(), o.alpha.value()};
}

void SpeechModel::reorder(decode::DecodeState& state, std::span<const int32_t> rows) const {
  SpeechState& st = speech_state(state);
  for (int32_t r : rows) ENGRAM_CHECK(r >= 0 && r < st.n, "speech: reorder row {} outside [0, {})", r, st.n);
  const int64_t h = cfg_.decoder_hidden, s = st.s;
  gather(st.h, st.h, rows, h);
  gather(st.c, st.c, rows, h);
  gather(st.alpha, st.alpha, rows, s);
  st.n = static_cast<int>(rows.size());
  st.mem.reorder(rows);
}

}  // namespace engram::models
