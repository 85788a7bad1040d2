// PointerNet: its parts and the teacher-forced forward over a whole batch.
// Dims: B batch, S positions, V = S + 1 classes, T output steps, F features, E embedding,
// H hidden, A attention width.
#include "engram/models/pointer/model.h"

#include <algorithm>
#include <cmath>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::models {

namespace {

nn::CellKind cell_kind(PointerCell c) { return c == PointerCell::kLstm ? nn::CellKind::kLstm : nn::CellKind::kGru; }

}  // namespace

const char* pointer_task_name(PointerTask task) {
  switch (task) {
    case PointerTask::kSort: return "sort";
    case PointerTask::kHull: return "hull";
    case PointerTask::kTsp: return "tsp";
  }
  return "?";
}

void PointerConfig::validate() const {
  ENGRAM_CHECK(input_dim >= 0, "pointer: input_dim {} must be >= 0 (0 = the task's)", input_dim);
  ENGRAM_CHECK(input_dim == 0 || input_dim == data::tasks::pointer_task_dim(task),
               "pointer: input_dim {} does not fit task {} (which has {} features per element)", input_dim,
               pointer_task_name(task), data::tasks::pointer_task_dim(task));
  ENGRAM_CHECK(embed_dim > 0 && hidden > 0, "pointer: embed_dim {} and hidden {} must be positive", embed_dim, hidden);
  ENGRAM_CHECK(attn_dim >= 0, "pointer: attn_dim {} must be >= 0", attn_dim);
  ENGRAM_CHECK(glimpses == 0 || glimpses == 1, "pointer: glimpses {} must be 0 or 1", glimpses);
  ENGRAM_CHECK(logit_clip >= 0.0f && std::isfinite(logit_clip), "pointer: logit_clip {} must be >= 0 (0 = off)",
               logit_clip);
}

PointerNet::PointerNet(const PointerConfig& cfg, core::Rng& rng) : cfg_(cfg) {
  cfg_.validate();
  if (cfg_.input_dim == 0) cfg_.input_dim = data::tasks::pointer_task_dim(cfg_.task);
  const int f = cfg_.input_dim, e = cfg_.embed_dim, h = cfg_.hidden;
  const nn::CellKind cell = cell_kind(cfg_.cell);
  encoder_ = std::make_unique<nn::RnnEncoder>(
      store_, "encoder", f, e, nn::RnnEncoderConfig{.cell = cell, .units = h, .layers = 1, .bidirectional = false}, rng);
  // The decoder's inputs are the encoder's embeddings of the elements pointed at: the same weights.
  embed_w_ = *store_.find("encoder/input/weight");
  embed_b_ = *store_.find("encoder/input/bias");
  go_ = store_.add("decoder/go", {1, e});
  nn::init::uniform(store_, go_, rng, -0.08f, 0.08f);
  end_ = store_.add("decoder/end", {1, h});
  nn::init::uniform(store_, end_, rng, -0.08f, 0.08f);
  decoder_ = std::make_unique<nn::Rnn>(store_, "decoder/rnn",
                                       nn::RnnConfig{.cell = cell, .input_size = e, .hidden_size = h}, rng);
  if (cfg_.glimpses == 1)
    glimpse_ = std::make_unique<nn::Attention>(
        store_, "decoder/glimpse",
        nn::AttentionConfig{.score = nn::AttentionScore::kAdditive, .query_dim = h, .memory_dim = h,
                            .attn_dim = cfg_.attn_dim},
        rng);
  pointer_ = std::make_unique<nn::PointerOutput>(
      store_, "decoder/pointer",
      nn::PointerOutputConfig{.query_dim = h, .memory_dim = h, .attn_dim = cfg_.attn_dim, .logit_clip = cfg_.logit_clip},
      rng);
}

YAML::Node PointerNet::config() const { return io::to_yaml(cfg_); }

void PointerNet::check_source(const decode::SourceBatch& src) const {
  ENGRAM_CHECK(src.batch >= 1 && src.steps >= 1, "pointer: cannot encode an empty batch (S={}, B={})", src.steps,
               src.batch);
  ENGRAM_CHECK(src.feature_dim == cfg_.input_dim, "pointer: inputs have {} features per element, the model takes {}",
               src.feature_dim, cfg_.input_dim);
  ENGRAM_CHECK(static_cast<int64_t>(src.features.size()) == int64_t{src.steps} * src.batch * src.feature_dim &&
                   static_cast<int>(src.lengths.size()) == src.batch,
               "pointer: {} feature values and {} lengths for S={} x B={} x F={}", src.features.size(),
               src.lengths.size(), src.steps, src.batch, src.feature_dim);
  for (int32_t n : src.lengths)
    ENGRAM_CHECK(n >= 1 && n <= src.steps, "pointer: an instance of {} points in a batch padded to {} (need 1..S)", n,
                 src.steps);
}

PointerNet::Encoded PointerNet::encode_batch(Graph& g, const decode::SourceBatch& src) const {
  check_source(src);
  const int s = src.steps, b = src.batch, f = cfg_.input_dim;
  Var x = g.constant({s, b, f}, src.features.data());  // [S, B, F]
  const nn::EncodedSource enc =
      encoder_->encode(g, nn::EncoderInput{.steps = s, .batch = b, .features = x, .lengths = src.lengths}, nullptr);
  Encoded out;
  out.final_top = enc.final_top;
  // The decoder's inputs as one linear map of [x, is_go]: [W_emb | go - b_emb] [E, F + 1] with the
  // bias b_emb gives W_emb x + b_emb for a point and go for <go>; folded through W_ih in one call.
  const int e = cfg_.embed_dim;
  Var b_emb = store_.var(g, embed_b_);                                                             // [E]
  Var go_col = core::reshape(core::sub(store_.var(g, go_), core::reshape(b_emb, {1, e})), {e, 1});  // [E, 1]
  const nn::Rnn::Folded fold =
      decoder_->fold_embedding(g, core::concat({store_.var(g, embed_w_), go_col}, 1), b_emb);     // [G, F + 1], [G]
  out.input_weight = fold.weight;
  out.input_bias = fold.bias;
  const std::vector<int32_t> zeros(b, 0);
  Var end = core::reshape(core::gather_rows(store_.var(g, end_), zeros), {1, b, cfg_.hidden});  // [1, B, H]
  out.memory = core::concat({end, enc.outputs}, 0);                                              // [S+1, B, H]
  std::vector<int32_t> slots(src.lengths.begin(), src.lengths.end());
  for (int32_t& n : slots) ++n;  // the end slot and the n points
  out.pointer_mem = pointer_->prepare(g, out.memory, slots);
  if (glimpse_) out.glimpse_mem = glimpse_->prepare(g, out.memory, slots);
  return out;
}

Var PointerNet::point(Graph& g, const nn::AttentionMemory& pointer_mem, const nn::AttentionMemory& glimpse_mem, Var d,
                      const float* mask) const {
  Var query = d;  // [N, H]
  if (glimpse_) {
    nn::AttentionMemory gm = glimpse_mem;
    if (mask) gm.mask = mask;  // the glimpse reads only what the step may point at (within the rows' n + 1)
    query = glimpse_->step(g, gm, d).context;  // [N, H]
  }
  return pointer_->log_probs(g, pointer_mem, query, mask);  // [N, V]
}

PointerForward PointerNet::forward(Graph& g, const decode::SourceBatch& src,
                                   const std::vector<std::vector<int>>& targets, std::vector<Var>* alignments) const {
  const int b = src.batch, s = src.steps, v = s + 1, h = cfg_.hidden;
  ENGRAM_CHECK(static_cast<int>(targets.size()) == b, "pointer: {} targets for a batch of {}", targets.size(), b);
  Encoded enc = encode_batch(g, src);
  std::vector<std::vector<int32_t>> classes(b);
  int steps = 0;
  for (int i = 0; i < b; ++i) {
    for (int j : targets[i])
      ENGRAM_CHECK(j >= 0 && j < src.lengths[i], "pointer: target index {} of instance {} outside its {} points", j, i,
                   src.lengths[i]);
    classes[i] = pointer_classes(targets[i]);
    steps = std::max(steps, static_cast<int>(classes[i].size()));
  }
  // Decoder inputs: <go>, then the target pointed at the step before (teacher forcing); their input
  // rows [x, is_go] for all T steps, then one product with the folded input weights.
  const int f = cfg_.input_dim;
  std::vector<int32_t> pos(static_cast<size_t>(steps) * b, -1), inst(static_cast<size_t>(steps) * b);
  for (int t = 0; t < steps; ++t)
    for (int i = 0; i < b; ++i) {
      inst[static_cast<size_t>(t) * b + i] = i;
      if (t >= 1 && t - 1 < static_cast<int>(classes[i].size()) && classes[i][t - 1] != kPointerEnd)
        pos[static_cast<size_t>(t) * b + i] = classes[i][t - 1] - 1;
    }
  float* rows = g.arena().floats(static_cast<size_t>(steps) * b * (f + 1));
  decoder_input_rows(src.features, b, f, pos, inst, rows);
  const Var xr = g.input(core::Tensor{rows, {steps * b, f + 1}});                    // [T*B, F + 1]
  const Var xw = core::affine(xr, enc.input_weight, enc.input_bias);                 // [T*B, G]
  const Var xw3 = core::reshape(xw, {steps, b, static_cast<int>(enc.input_bias.numel())});  // [T, B, G]
  nn::RnnOptions opt;
  opt.initial = {nn::RnnState{enc.final_top, cfg_.cell == PointerCell::kLstm ? g.zeros({b, h}) : Var{}}};
  const nn::RnnOutput dec = decoder_->forward_projected(g, std::span<const Var>(&xw3, 1), opt);  // outputs [T, B, H]
  // Per step: the rules' mask of the teacher prefix (target always allowed), then the pointer.
  PointerForward out;
  out.steps = steps;
  out.targets.assign(static_cast<size_t>(steps) * b, -1);
  std::vector<uint8_t> used(static_cast<size_t>(b) * s, 0);
  std::vector<PointerPrefix> prefix(b);
  std::vector<Var> lps;
  for (int t = 0; t < steps; ++t) {
    float* mask = g.arena().floats(static_cast<size_t>(b) * v);  // [B, V]
    for (int i = 0; i < b; ++i) {
      float* m = mask + static_cast<int64_t>(i) * v;
      if (t >= static_cast<int>(classes[i].size())) {  // past the end: any allowed class (ignored in the loss)
        std::fill(m, m + v, 0.0f);
        m[kPointerEnd] = 1.0f;
        continue;
      }
      pointer_allowed(cfg_.task, src.lengths[i], s, prefix[i], used.data() + static_cast<int64_t>(i) * s, m);
      const int32_t c = classes[i][t];
      m[c] = 1.0f;
      out.targets[static_cast<size_t>(t) * b + i] = c;
      if (c != kPointerEnd) {
        used[static_cast<int64_t>(i) * s + c - 1] = 1;
        if (prefix[i].count++ == 0) prefix[i].first = c - 1;
      }
    }
    Var d = core::reshape(core::slice(dec.outputs, 0, t, t + 1), {b, h});  // [B, H]
    Var lp = point(g, enc.pointer_mem, enc.glimpse_mem, d, mask);           // [B, V]
    if (alignments) alignments->push_back(lp);
    lps.push_back(lp);
  }
  out.log_probs = core::concat(lps, 0);  // [T*B, V]
  return out;
}

void PointerNet::decoder_input_rows(std::span<const float> features, int batch, int feature_dim,
                                    std::span<const int32_t> pos, std::span<const int32_t> inst, float* rows) {
  const int w = feature_dim + 1;
  for (size_t r = 0; r < pos.size(); ++r) {
    float* row = rows + static_cast<int64_t>(r) * w;
    std::fill(row, row + w, 0.0f);
    if (pos[r] < 0) {
      row[feature_dim] = 1.0f;  // <go>
      continue;
    }
    const float* x = features.data() + (static_cast<int64_t>(pos[r]) * batch + inst[r]) * feature_dim;
    std::copy(x, x + feature_dim, row);
  }
}

Var PointerNet::loss(Graph& g, const decode::SourceBatch& src, const std::vector<std::vector<int>>& targets) const {
  PointerForward f = forward(g, src, targets);
  return core::nll(f.log_probs, f.targets, core::CrossEntropyOptions{.ignore_index = -1, .mean = false});
}

decode::SourceBatch pointer_source(const data::tasks::PointerBatch& batch) {
  decode::SourceBatch src;
  src.batch = static_cast<int>(batch.batch);
  src.steps = static_cast<int>(batch.max_n);
  src.feature_dim = batch.dim;
  src.lengths.assign(batch.n.begin(), batch.n.end());
  src.features.assign(static_cast<size_t>(src.steps) * src.batch * src.feature_dim, 0.0f);
  for (int64_t b = 0; b < batch.batch; ++b)
    for (int64_t i = 0; i < batch.n[b]; ++i)
      for (int k = 0; k < batch.dim; ++k)
        src.features[(i * batch.batch + b) * batch.dim + k] = batch.at(b, i, k);
  return src;
}

decode::SourceBatch pointer_source(std::span<const data::tasks::PointerInstance> instances) {
  return pointer_source(data::tasks::collate_pointer_batch(instances));
}

}  // namespace engram::models
