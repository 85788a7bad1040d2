// Attention: scorer parameters, the once-per-batch key projection and mask, and the per-step read
// composed from affine / bmm / masked softmax (so its gradient is the ops' gradients).
// Dims: B batch, S source len, H memory width, Hq query width, A attention dim.
#include "engram/nn/attention.h"

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

AttentionScore attention_score_from_name(std::string_view name) {
  if (name == "dot") return AttentionScore::kDot;
  if (name == "general") return AttentionScore::kGeneral;
  if (name == "additive" || name == "concat") return AttentionScore::kAdditive;
  ENGRAM_CHECK(false, "unknown attention score '{}' (expected dot | general | additive | concat)", name);
  return AttentionScore::kAdditive;
}

const char* attention_score_name(AttentionScore score) {
  switch (score) {
    case AttentionScore::kDot: return "dot";
    case AttentionScore::kGeneral: return "general";
    case AttentionScore::kAdditive: return "additive";
  }
  return "?";
}

Attention::Attention(ParamStore& store, std::string path, const AttentionConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg) {
  ENGRAM_CHECK(cfg.query_dim > 0 && cfg.memory_dim > 0, "attention '{}': query_dim {} and memory_dim {} must be > 0",
               this->path(), cfg.query_dim, cfg.memory_dim);
  const int hq = cfg.query_dim, h = cfg.memory_dim;
  switch (cfg.score) {
    case AttentionScore::kDot:
      ENGRAM_CHECK(hq == h, "attention '{}': dot score needs query_dim {} == memory_dim {}", this->path(), hq, h);
      break;
    case AttentionScore::kGeneral:
      w_key_ = add_param("w_key", {hq, h});  // [Hq, H]
      init::glorot_uniform(store, w_key_, rng);
      break;
    case AttentionScore::kAdditive: {
      ENGRAM_CHECK(cfg.attn_dim >= 0, "attention '{}': negative attn_dim {}", this->path(), cfg.attn_dim);
      const int a = cfg.attn_dim > 0 ? cfg.attn_dim : h;
      cfg_.attn_dim = a;
      w_query_ = add_param("w_query", {a, hq});  // [A, Hq]
      w_key_ = add_param("w_key", {a, h});       // [A, H]
      v_ = add_param("v", {1, a});               // [1, A]
      init::glorot_uniform(store, w_query_, rng);
      init::glorot_uniform(store, w_key_, rng);
      init::glorot_uniform(store, v_, rng);
      if (cfg.feature_dim > 0) {
        w_feature_ = add_param("w_feature", {a, cfg.feature_dim});  // [A, F]
        init::glorot_uniform(store, w_feature_, rng);
      }
      break;
    }
  }
  ENGRAM_CHECK(cfg.feature_dim >= 0 && (cfg.feature_dim == 0 || cfg.score == AttentionScore::kAdditive),
               "attention '{}': score features (feature_dim {}) need the additive scorer", this->path(),
               cfg.feature_dim);
}

AttentionMemory Attention::prepare(Graph& g, Var memory) const { return prepare_impl(g, memory, nullptr, nullptr); }

AttentionMemory Attention::prepare(Graph& g, Var memory, const std::vector<int32_t>& lengths) const {
  return prepare_impl(g, memory, nullptr, &lengths);
}

AttentionMemory Attention::prepare(Graph& g, Var memory, const float* mask) const {
  ENGRAM_CHECK(mask != nullptr, "attention '{}': null mask (use prepare(g, memory) for none)", path());
  return prepare_impl(g, memory, mask, nullptr);
}

AttentionMemory Attention::prepare_impl(Graph& g, Var memory, const float* mask,
                                        const std::vector<int32_t>* lengths) const {
  ENGRAM_CHECK(memory.g == &g, "attention '{}': memory belongs to another graph", path());
  const Shape& sm = memory.shape();
  const bool time_major = cfg_.layout == MemoryLayout::kTimeMajor;
  ENGRAM_CHECK(sm.rank() == 3 && sm[2] == cfg_.memory_dim, "attention '{}': memory {} is not {} with H={}", path(), sm,
               time_major ? "[S, B, H]" : "[B, S, H]", cfg_.memory_dim);
  AttentionMemory mem;
  mem.batch = time_major ? sm[1] : sm[0];
  mem.src_len = time_major ? sm[0] : sm[1];
  const int b = mem.batch, s = mem.src_len;
  ENGRAM_CHECK(s > 0, "attention '{}': empty memory {}", path(), sm);
  mem.values = time_major ? core::transpose(memory, 0, 1) : memory;  // [B, S, H]
  switch (cfg_.score) {
    case AttentionScore::kDot:
      mem.keys = mem.values;                                          // [B, S, H]
      break;
    case AttentionScore::kGeneral:
    case AttentionScore::kAdditive:
      mem.keys = core::affine(mem.values, param(g, w_key_));          // [B, S, Hq] / [B, S, A]
      break;
  }
  if (lengths) {
    ENGRAM_CHECK(static_cast<int>(lengths->size()) == b, "attention '{}': {} lengths for memory {} with B={}", path(),
                 lengths->size(), sm, b);
    float* m = g.arena().floats(static_cast<size_t>(b) * s);          // [B, S]
    for (int i = 0; i < b; ++i) {
      const int len = (*lengths)[i];
      ENGRAM_CHECK(len >= 0 && len <= s, "attention '{}': length {} of row {} outside [0, {}]", path(), len, i, s);
      for (int j = 0; j < s; ++j) m[static_cast<int64_t>(i) * s + j] = j < len ? 1.0f : 0.0f;
    }
    mem.mask = m;
  } else if (mask) {
    float* m = g.arena().floats(static_cast<size_t>(b) * s);          // [B, S], a copy owned by the graph
    for (int64_t i = 0, n = static_cast<int64_t>(b) * s; i < n; ++i) m[i] = mask[i] != 0.0f ? 1.0f : 0.0f;
    mem.mask = m;
  }
  return mem;
}

Var Attention::scores(Graph& g, const AttentionMemory& mem, Var query, Var features) const {
  const int b = mem.batch, s = mem.src_len;
  ENGRAM_CHECK(mem.values.valid(), "attention '{}': step on an unprepared memory", path());
  ENGRAM_CHECK(query.shape().rank() == 2 && query.shape()[0] == b && query.shape()[1] == cfg_.query_dim,
               "attention '{}': query {} is not [B={}, Hq={}]", path(), query.shape(), b, cfg_.query_dim);
  ENGRAM_CHECK(features.valid() == (cfg_.feature_dim > 0), "attention '{}': {} score features for feature_dim {}",
               path(), features.valid() ? "given" : "no", cfg_.feature_dim);
  switch (cfg_.score) {
    case AttentionScore::kDot:
    case AttentionScore::kGeneral: {
      Var q = core::reshape(query, {b, 1, cfg_.query_dim});        // [B, 1, Hq]
      return core::bmm(q, mem.keys, false, true, mem.rows);         // [B, 1, S]
    }
    case AttentionScore::kAdditive: {
      Var qp = core::affine(query, param(g, w_query_));  // [B, A]
      Var keys = mem.keys;                                // [B, S, A] (or [Bm, S, A] read through mem.rows)
      Var extra;                                          // [B, S, A] W_f f_i, per query row
      if (features.valid()) {
        ENGRAM_CHECK(features.shape().rank() == 3 && features.shape()[0] == b && features.shape()[1] == s &&
                         features.shape()[2] == cfg_.feature_dim,
                     "attention '{}': features {} are not [B={}, S={}, F={}]", path(), features.shape(), b, s,
                     cfg_.feature_dim);
        extra = core::affine(features, param(g, w_feature_));
        if (!mem.rows) keys = core::add(keys, extra), extra = {};  // + W_f f_i
      }
      // v · tanh(keys + qp) per position, fused (core/ops/attention_score.h); rows reading shared
      // keys add their features inside it
      Var score = core::additive_score(keys, qp, param(g, v_), mem.rows, extra);  // [B, S]
      return core::reshape(score, {b, 1, s});                                      // [B, 1, S]
    }
  }
  return {};
}

AttentionOutput Attention::step(Graph& g, const AttentionMemory& mem, Var query, Var features) const {
  const int b = mem.batch, s = mem.src_len;
  Var scores = this->scores(g, mem, query, features);                             // [B, 1, S]
  Var alpha = mem.mask ? core::softmax(scores, mem.mask) : core::softmax(scores);  // [B, 1, S]
  Var context = core::bmm(alpha, mem.values, false, false, mem.rows);              // [B, 1, H]
  return {core::reshape(scores, {b, s}), core::reshape(context, {b, cfg_.memory_dim}), core::reshape(alpha, {b, s})};
}

}  // namespace engram::nn
