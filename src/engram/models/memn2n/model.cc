// MemN2N model: parameters and weight tying, forward over a batch, evaluation and explanation.
// Dims: B batch, N memory slots, V vocab, D width, K hops.
#include "engram/models/memn2n/model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::models {

Memn2n::Memn2n(const Memn2nConfig& cfg, core::Rng& rng, bool fused) : cfg_(cfg), fused_(fused) {
  ENGRAM_CHECK(cfg.vocab >= 1 && cfg.dim >= 1 && cfg.hops >= 1 && cfg.memory_size >= 1,
               "memn2n: vocab, dim, hops and memory_size must be >= 1, got {}, {}, {}, {}", cfg.vocab, cfg.dim,
               cfg.hops, cfg.memory_size);
  ENGRAM_CHECK(std::isfinite(cfg.init_stddev) && cfg.init_stddev >= 0,
               "memn2n: init_stddev {} must be a finite number >= 0", cfg.init_stddev);
  ENGRAM_CHECK(cfg.encoding != nn::SentenceEncoding::kPositionGlobal || cfg.sentence_length >= 1,
               "memn2n: encoding pe_global needs sentence_length >= 1 (the longest sentence), got {}",
               cfg.sentence_length);
  const nn::Memn2nHopConfig hop_cfg{.vocab = cfg.vocab,
                                    .dim = cfg.dim,
                                    .time_rows = cfg.memory_size,
                                    .encoding = encoding(),
                                    .temporal = cfg.temporal,
                                    .init_stddev = cfg.init_stddev,
                                    .fused = fused};
  hops_.reserve(cfg.hops);
  hops_.emplace_back(params_, "memn2n/hop_0", hop_cfg, rng);
  for (int k = 1; k < cfg.hops; ++k) {
    const std::string path = "memn2n/hop_" + std::to_string(k);
    if (cfg.tying == WeightTying::kAdjacent)  // A^{k+1} = C^k, new C^{k+1}
      hops_.emplace_back(params_, path, hop_cfg, hops_.back().output(), std::nullopt, rng);
    else  // one A and one C for every hop
      hops_.emplace_back(params_, path, hop_cfg, hops_[0].input(), hops_[0].output(), rng);
  }
  if (cfg.tying == WeightTying::kAdjacent) {
    query_ = hops_.front().input().words;   // B = A^1
    answer_ = hops_.back().output().words;  // W^T = C^K
  } else {
    query_ = params_.add("memn2n/query", {cfg.vocab, cfg.dim});
    nn::init::normal(params_, query_, rng, 0.0f, cfg.init_stddev);
    answer_ = params_.add("memn2n/answer", {cfg.vocab, cfg.dim});
    nn::init::normal(params_, answer_, rng, 0.0f, cfg.init_stddev);
    h_ = params_.add("memn2n/h", {cfg.dim, cfg.dim});
    nn::init::normal(params_, h_, rng, 0.0f, cfg.init_stddev);
  }
}

Memn2nOutput Memn2n::forward(Graph& g, const Memn2nBatch& batch, bool linear_start) const {
  const nn::MemoryInput mem = batch.memory_input();
  Var qtable = param(g, query_);
  Var u = fused_ ? nn::bag_embed(qtable, batch.query.data(), batch.batch, batch.query_words, encoding())
                 : nn::bag_embed_composed(qtable, batch.query.data(), batch.batch, batch.query_words, encoding());
  Var h = h_ >= 0 ? param(g, h_) : Var{};
  Memn2nOutput out;
  // Embed each distinct table once: adjacent tying shares C^k = A^{k+1}, layer-wise one A, C.
  Var m, c;
  for (int k = 0; k < cfg_.hops; ++k) {
    const nn::Memn2nHop& hop = hops_[k];
    if (k == 0) {
      m = hop.embed(g, hop.input(), mem);
      c = hop.embed(g, hop.output(), mem);
    } else if (cfg_.tying == WeightTying::kAdjacent) {
      m = c;
      c = hop.embed(g, hop.output(), mem);
    }
    nn::HopOutput r = hop.read(g, m, c, u, cfg_.null_slots ? nullptr : mem.mask, !linear_start);
    u = h.valid() ? core::add(core::affine(u, h), r.read) : core::add(u, r.read);  // [B, D]
    out.attention.push_back(r.attention);
  }
  out.logits = core::affine(u, param(g, answer_));  // [B, V] = u Wᵀ
  return out;
}

Var Memn2n::loss(Graph& g, const Memn2nOutput& out, const Memn2nBatch& batch) const {
  return core::cross_entropy(out.logits, batch.answer, {.mean = false});
}

// ---- evaluation -----------------------------------------------------------------------------

void Memn2nScore::add(const Memn2nScore& o) {
  questions += o.questions;
  errors += o.errors;
  loss_sum += o.loss_sum;
  with_support += o.with_support;
  support_any += o.support_any;
  if (support_hop.size() < o.support_hop.size()) support_hop.resize(o.support_hop.size(), 0);
  for (size_t k = 0; k < o.support_hop.size(); ++k) support_hop[k] += o.support_hop[k];
}

namespace {

// Index of the largest of n values.
int argmax(const float* x, int n) { return static_cast<int>(std::max_element(x, x + n) - x); }

// One batch of questions through every model of a set. scores [B, V]: one model's logits, or
// for an ensemble the log of the members' mean answer probability,
//   s_j = log (1/M Σ_m softmax(l_m)_j),
// which are logits of that mean (softmax(s) = the mean), so every use of logits reads them alike.
// batch and attention (K x [B, N]) are the first model's: each member reads the questions as its
// own memory_size and null slots make them.
struct SetForward {
  Memn2nBatch batch;
  std::vector<Var> attention;
  const float* scores = nullptr;  // [B, V]
  int vocab = 0;                  // V
  std::vector<float> mixed;       // [B, V] an ensemble's scores
};

SetForward forward_set(Graph& g, const ModelSet<Memn2n>& models, const Memn2nDataset& data,
                       std::span<const int32_t> samples, bool linear_start) {
  SetForward f;
  std::vector<Var> logits;  // [M] each [B, V]
  for (const Memn2n* m : models.models) {
    Memn2nBatch batch =
        make_memn2n_batch(data, samples, m->config().memory_size, 0.0f, nullptr, m->min_slots());
    const Memn2nOutput out = m->forward(g, batch, linear_start);
    logits.push_back(out.logits);
    if (m == models.models.front()) f.batch = std::move(batch), f.attention = out.attention;
  }
  f.vocab = logits[0].shape()[1];
  f.scores = logits[0].data();
  if (logits.size() == 1) return f;
  for (const Var& l : logits)
    ENGRAM_CHECK(l.shape() == logits[0].shape(), "memn2n ensemble: member logits {} and {}", l.shape().str(),
                 logits[0].shape().str());
  const int rows = logits[0].shape()[0], v = f.vocab;
  const double log_m = std::log(static_cast<double>(logits.size()));
  f.mixed.resize(static_cast<size_t>(rows) * v);
  std::vector<double> log_z(logits.size());  // each member's log Σ_j exp(l_j) of the row
  for (int b = 0; b < rows; ++b) {
    for (size_t m = 0; m < logits.size(); ++m) {
      const float* l = logits[m].data() + static_cast<int64_t>(b) * v;
      const double hi = *std::max_element(l, l + v);
      double z = 0;
      for (int j = 0; j < v; ++j) z += std::exp(l[j] - hi);
      log_z[m] = hi + std::log(z);
    }
    for (int j = 0; j < v; ++j) {
      double hi = -INFINITY, sum = 0;
      for (size_t m = 0; m < logits.size(); ++m)
        hi = std::max(hi, logits[m].data()[static_cast<int64_t>(b) * v + j] - log_z[m]);
      for (size_t m = 0; m < logits.size(); ++m)
        sum += std::exp(logits[m].data()[static_cast<int64_t>(b) * v + j] - log_z[m] - hi);
      f.mixed[static_cast<size_t>(b) * v + j] = static_cast<float>(hi + std::log(sum) - log_m);
    }
  }
  f.scores = f.mixed.data();
  return f;
}

}  // namespace

std::map<int, Memn2nScore> evaluate_memn2n(const ModelSet<Memn2n>& models, const Memn2nDataset& data, int batch_size,
                                           bool linear_start) {
  ENGRAM_CHECK(batch_size >= 1, "memn2n evaluation: batch_size must be >= 1, got {}", batch_size);
  const int hops = models.first().config().hops;
  std::map<int, Memn2nScore> scores;
  core::Graph g(false);
  models.set_weights(g);
  std::vector<int32_t> idx(data.samples.size());
  std::iota(idx.begin(), idx.end(), 0);
  for (size_t start = 0; start < idx.size(); start += batch_size) {
    const size_t count = std::min<size_t>(batch_size, idx.size() - start);
    g.reset();
    const SetForward out =
        forward_set(g, models, data, std::span<const int32_t>(idx.data() + start, count), linear_start);
    const Memn2nBatch& batch = out.batch;
    const int v = out.vocab, n = batch.slots;
    for (int b = 0; b < batch.batch; ++b) {
      const Memn2nSample& s = data.samples[idx[start + b]];
      Memn2nScore& sc = scores[s.task];
      if (sc.support_hop.empty()) sc.support_hop.assign(hops, 0);
      const float* logit = out.scores + static_cast<int64_t>(b) * v;
      const float mx = *std::max_element(logit, logit + v);
      double z = 0;
      for (int j = 0; j < v; ++j) z += std::exp(static_cast<double>(logit[j] - mx));
      sc.loss_sum += std::log(z) + mx - logit[s.answer];
      sc.questions += 1;
      sc.errors += argmax(logit, v) != s.answer;
      // Supporting facts in slot coordinates (the window may have been cut to memory_size).
      std::vector<int32_t> support;
      for (int32_t p : s.supporting)
        if (p - batch.offset[b] >= 0) support.push_back(p - batch.offset[b]);
      if (support.empty()) continue;
      sc.with_support += 1;
      const int real = static_cast<int>(std::count(batch.mask.begin() + static_cast<int64_t>(b) * n,
                                                   batch.mask.begin() + static_cast<int64_t>(b + 1) * n, 1.0f));
      bool any = false;
      for (int k = 0; k < hops; ++k) {
        const int top = argmax(out.attention[k].data() + static_cast<int64_t>(b) * n, std::max(real, 1));
        const bool hit = std::find(support.begin(), support.end(), top) != support.end();
        sc.support_hop[k] += hit;
        any = any || hit;
      }
      sc.support_any += any;
    }
  }
  Memn2nScore all;
  for (const auto& [task, sc] : scores) all.add(sc);
  scores[0] = all;
  return scores;
}

std::vector<Memn2nExplanation> explain_memn2n(const ModelSet<Memn2n>& models, const Memn2nDataset& data,
                                              std::span<const int32_t> samples) {
  for (int32_t sample : samples)
    ENGRAM_CHECK(sample >= 0 && sample < static_cast<int32_t>(data.samples.size()), "memn2n explain: sample {} of {}",
                 sample, data.samples.size());
  core::Graph g(false);
  models.set_weights(g);
  const SetForward out = forward_set(g, models, data, samples, false);  // attention [B, N] per hop, scores [B, V]
  const Memn2nBatch& batch = out.batch;
  const int v = out.vocab;
  std::vector<Memn2nExplanation> explained(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    Memn2nExplanation& e = explained[i];
    e.offset = batch.offset[i];
    for (const Var& a : out.attention) {
      const float* row = a.data() + static_cast<int64_t>(i) * batch.slots;
      e.attention.emplace_back(row, row + batch.slots);
    }
    const float* logit = out.scores + static_cast<int64_t>(i) * v;
    e.predicted = argmax(logit, v);
    double z = 0;
    for (int j = 0; j < v; ++j) z += std::exp(static_cast<double>(logit[j] - logit[e.predicted]));
    e.probability = static_cast<float>(1.0 / z);
  }
  return explained;
}

Memn2nExplanation explain_memn2n(const ModelSet<Memn2n>& models, const Memn2nDataset& data, int32_t sample) {
  const int32_t one[1] = {sample};
  return std::move(explain_memn2n(models, data, std::span<const int32_t>(one, 1))[0]);
}

}  // namespace engram::models
