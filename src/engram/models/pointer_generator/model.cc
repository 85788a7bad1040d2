// PointerGenerator: config checks, the parts, and the teacher-forced forward with copy and
// coverage over a whole batch.
// Dims: B batch, S source len, T target steps, R = T*B rows, E embedding, H hidden, C context,
// V vocabulary, X extra ids.
#include "engram/models/pointer_generator/model.h"

#include <algorithm>

#include "engram/core/ops.h"
#include "engram/data/vocab.h"

namespace engram::models {

void PointerGeneratorConfig::validate() const {
  ENGRAM_CHECK(vocab > data::kNumSpecial, "pointer_generator: vocab {} must exceed the {} special tokens", vocab,
               data::kNumSpecial);
  validate_options();
}

void PointerGeneratorConfig::validate_options() const {
  ENGRAM_CHECK(vocab_size == 0 || vocab_size > data::kNumSpecial,
               "pointer_generator: vocab_size {} must exceed the {} special tokens (or be 0 = all words)", vocab_size,
               data::kNumSpecial);
  ENGRAM_CHECK(unit != TokenUnit::kChar, "pointer_generator: unit char is not supported (word | spm)");
  ENGRAM_CHECK(unit != TokenUnit::kSpm || vocab_size > data::kNumSpecial,
               "pointer_generator: unit spm needs vocab_size > {}", data::kNumSpecial);
  ENGRAM_CHECK(min_count >= 1, "pointer_generator: min_count {} must be >= 1", min_count);
  ENGRAM_CHECK(embed_dim > 0 && hidden > 0 && hidden % 2 == 0,
               "pointer_generator: embed_dim {} must be positive and hidden {} positive and even", embed_dim, hidden);
  ENGRAM_CHECK(attn_dim >= 0, "pointer_generator: attn_dim {} must be >= 0", attn_dim);
  ENGRAM_CHECK(coverage_weight >= 0.0f, "pointer_generator: coverage_weight {} must be >= 0", coverage_weight);
  ENGRAM_CHECK(dropout >= 0.0f && dropout < 1.0f, "pointer_generator: dropout {} outside [0, 1)", dropout);
  ENGRAM_CHECK(unk_loss_weight >= 0.0f && unk_loss_weight <= 1.0f, "pointer_generator: unk_loss_weight {} outside [0, 1]",
               unk_loss_weight);
  ENGRAM_CHECK(max_source_tokens >= 1, "pointer_generator: max_source_tokens {} must be >= 1", max_source_tokens);
}

PointerGenerator::PointerGenerator(const PointerGeneratorConfig& cfg, core::Rng& rng) : cfg_(cfg) {
  cfg_.validate();
  const int e = cfg_.embed_dim, h = cfg_.hidden;
  const nn::CellKind cell = cfg_.cell == PgCell::kLstm ? nn::CellKind::kLstm : nn::CellKind::kGru;
  auto embed = std::make_unique<nn::Embedding>(
      store_, "embed", nn::EmbeddingConfig{.vocab = cfg_.vocab, .dim = e, .init_stddev = 0.1f}, rng);
  encoder_ = std::make_unique<nn::RnnEncoder>(
      store_, std::move(embed), "encoder/rnn",
      nn::RnnEncoderConfig{.cell = cell, .units = h / 2, .layers = 1, .bidirectional = true, .dropout = cfg_.dropout},
      rng);
  decoder_ = std::make_unique<nn::AttentionDecoder>(
      store_,
      nn::AttentionDecoderConfig{.cell = cell, .input_dim = e, .hidden = h, .layers = 1,
                                 .context_dim = encoder_->output_width(), .attention = true,
                                 .score = nn::AttentionScore::kAdditive, .luong = false, .attn_dim = cfg_.attn_dim,
                                 .readout_dim = h, .score_features = cfg_.coverage ? 1 : 0},
      rng);
  output_ = std::make_unique<nn::VocabOutput>(store_, "decoder/output", h, cfg_.vocab, rng);
  if (cfg_.source_features)
    source_features_ = std::make_unique<nn::Embedding>(
        store_, "source_features", nn::EmbeddingConfig{.vocab = kSourceFeatureRows, .dim = e, .init_stddev = 0.1f}, rng);
  if (cfg_.copy)
    copy_ = std::make_unique<nn::CopyOutput>(
        store_, "decoder/copy",
        nn::CopyOutputConfig{.context_dim = encoder_->output_width(), .state_dim = h, .input_dim = e}, rng);
}

YAML::Node PointerGenerator::config() const { return io::to_yaml(cfg_); }

Var PointerGenerator::dropout(Var x, core::Rng* rng) const {
  return rng && cfg_.dropout > 0.0f ? core::dropout(x, cfg_.dropout, *rng) : x;
}

std::vector<int32_t> PointerGenerator::to_vocab(std::span<const int32_t> ids) const {
  std::vector<int32_t> out(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    ENGRAM_CHECK(ids[k] >= 0, "pointer_generator: negative id {}", ids[k]);
    out[k] = ids[k] < cfg_.vocab ? ids[k] : data::kUnkId;
  }
  return out;
}

std::vector<int32_t> PointerGenerator::source_feature_ids(std::span<const int32_t> ids, int s, int b,
                                                         std::span<const int32_t> lengths, int32_t vocab) {
  ENGRAM_CHECK(s >= 0 && b >= 0 && ids.size() == static_cast<size_t>(s) * b && lengths.size() == static_cast<size_t>(b),
               "pointer_generator: {} source ids and {} lengths for S={} x B={}", ids.size(), lengths.size(), s, b);
  std::vector<int32_t> out(ids.size(), 0);
  std::vector<int32_t> column;
  for (int j = 0; j < b; ++j) {
    const int len = lengths[j];
    ENGRAM_CHECK(len >= 0 && len <= s, "pointer_generator: source length {} outside [0, {}]", len, s);
    column.resize(len);
    for (int i = 0; i < len; ++i) column[i] = ids[int64_t{i} * b + j];
    std::vector<int32_t> sorted = column;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < len; ++i) {
      const auto [lo, hi] = std::equal_range(sorted.begin(), sorted.end(), column[i]);
      const auto n = hi - lo;
      const int count = n == 1 ? 0 : n == 2 ? 1 : n == 3 ? 2 : n <= 5 ? 3 : 4;
      const int oov = column[i] < vocab ? 0 : 1 + std::min(column[i] - vocab, 4);
      out[int64_t{i} * b + j] = 6 * count + oov;
    }
  }
  return out;
}

nn::EncodedSource PointerGenerator::encode(Graph& g, std::span<const int32_t> ids, int s, int b,
                                           std::span<const int32_t> lengths, core::Rng* dropout_rng) const {
  const std::vector<int32_t> src_in = to_vocab(ids);
  Var added;
  if (source_features_)
    added = source_features_->forward(g, source_feature_ids(ids, s, b, lengths, cfg_.vocab), {s, b});  // [S, B, E]
  return encoder_->encode(
      g, nn::EncoderInput{.steps = s, .batch = b, .ids = src_in, .features = {}, .added = added, .lengths = lengths},
      dropout_rng);
}

PgForward PointerGenerator::forward(Graph& g, const data::Batch& batch, const PgForwardOptions& o) const {
  const int b = static_cast<int>(batch.batch_size), s = static_cast<int>(batch.src_steps),
            steps = static_cast<int>(batch.tgt_steps), v = cfg_.vocab;
  ENGRAM_CHECK(b >= 1 && s >= 1 && steps >= 1 && batch.src.size() == static_cast<size_t>(s) * b &&
                   batch.tgt_in.size() == static_cast<size_t>(steps) * b && batch.tgt_out.size() == batch.tgt_in.size() &&
                   batch.src_len.size() == static_cast<size_t>(b) && batch.tgt_len.size() == static_cast<size_t>(b),
               "pointer_generator: inconsistent batch (S={}, T={}, B={}, {} source ids, {} target ids)", s, steps, b,
               batch.src.size(), batch.tgt_in.size());
  const int64_t rows = int64_t{steps} * b;  // R
  PgForward f;
  f.steps = steps;
  f.batch = b;
  f.src_len = s;
  for (int32_t id : batch.src) f.extra = std::max(f.extra, id - v + 1);
  ENGRAM_CHECK(f.extra <= s, "pointer_generator: source id {} beyond V + S = {}", f.extra + v - 1, v + s);
  f.weight.assign(rows, 0.0f);
  for (int t = 0; t < steps; ++t)
    for (int j = 0; j < b; ++j)
      if (t < batch.tgt_len[j]) {
        const int64_t r = int64_t{t} * b + j;
        const int32_t y = batch.tgt_out[r];
        const bool unk = y == data::kUnkId || (!copy_ && y >= v);  // <unk> to this model
        f.weight[r] = unk ? cfg_.unk_loss_weight : 1.0f;
        ++f.tokens;
      }
  // ---- encoder and decoder over every step (teacher forcing)
  const nn::EncodedSource enc = encode(g, batch.src, s, b, batch.src_len, o.dropout_rng);
  nn::DecoderState state = decoder_->initial_state(g, enc.final_top);
  const nn::DecoderContext ctx = decoder_->prepare_context(g, enc.outputs, enc.final_top, batch.src_len);
  Var emb = dropout(embedding().forward(g, to_vocab(batch.tgt_in)), o.dropout_rng);  // [R, E]
  Var xw_all = decoder_->input_projection(g, emb);                                     // [R, G]
  const bool cov_on = cfg_.coverage && o.coverage_active;
  Var cov = cov_on ? g.zeros({b, s}) : Var{};  // [B, S] Σ_{t'<t} α_t'
  std::vector<Var> tops, contexts, scores, alphas, cov_losses;  // T x [B, .]
  for (int t = 0; t < steps; ++t) {
    Var feature = !cfg_.coverage ? Var{} : cov_on ? core::reshape(cov, {b, s, 1}) : g.zeros({b, s, 1});
    nn::DecoderStepOutput st =
        decoder_->step(g, ctx, core::slice(xw_all, 0, t * b, (t + 1) * b), state, o.dropout_rng, feature);
    state = st.state;
    tops.push_back(st.top);
    contexts.push_back(st.context);
    scores.push_back(st.scores);
    alphas.push_back(st.alpha);
    if (cov_on) {
      cov_losses.push_back(core::sum(st.alpha - core::relu(st.alpha - cov), 1));  // [B] Σ_i min(α, cov)
      cov = cov + st.alpha;
    }
  }
  Var top_all = core::concat(tops, 0), ctx_all = core::concat(contexts, 0);  // [R, H], [R, C]
  f.alpha = core::concat(alphas, 0);                                         // [R, S]
  if (cov_on) f.coverage_loss = core::concat(cov_losses, 0);                 // [R]
  Var logits = output_->logits(g, dropout(decoder_->readout(g, top_all, ctx_all, emb, {}), o.dropout_rng));  // [R, V]
  if (!copy_) {
    f.log_p = core::pick(core::log_softmax(logits), to_vocab(batch.tgt_out));  // [R]
    return f;
  }
  // The copy mixture for all R rows at once: row t*B + j copies from sentence j's source.
  std::vector<int32_t> ids(rows * s);
  float* mask = g.arena().floats(static_cast<size_t>(rows) * s);  // [R, S], lives with the graph
  for (int64_t r = 0; r < rows; ++r) {
    const int j = static_cast<int>(r % b);
    for (int i = 0; i < s; ++i) {
      ids[r * s + i] = batch.src[int64_t{i} * b + j];
      mask[r * s + i] = i < batch.src_len[j] ? 1.0f : 0.0f;
    }
  }
  Var gate = copy_->gate_logit(g, ctx_all, top_all, emb);  // [R]
  const nn::CopyStep step{logits, core::concat(scores, 0), gate, nn::CopySource{ids, f.extra, mask}};
  f.log_p = copy_->log_prob(g, step, batch.tgt_out);  // [R]
  f.p_gen = core::sigmoid(gate);
  return f;
}

PgLoss PointerGenerator::loss(Graph& g, const data::Batch& batch, const PgForwardOptions& o) const {
  PgForward f = forward(g, batch, o);
  const int64_t rows = static_cast<int64_t>(f.weight.size());
  ENGRAM_CHECK(f.tokens > 0, "pointer_generator: a batch without target tokens");
  Var w = g.constant({static_cast<int>(rows)}, f.weight.data());  // [R]
  const float inv = 1.0f / static_cast<float>(f.tokens);
  PgLoss l;
  l.tokens = f.tokens;
  l.total = core::scale(core::sum_all(f.log_p * w), -inv);
  for (int64_t r = 0; r < rows; ++r) l.nll_sum -= double{f.weight[r]} * f.log_p.data()[r];
  if (f.coverage_loss.valid()) {
    l.total = l.total + core::scale(core::sum_all(f.coverage_loss * w), cfg_.coverage_weight * inv);
    for (int64_t r = 0; r < rows; ++r) l.coverage_sum += double{f.weight[r]} * f.coverage_loss.data()[r];
  }
  return l;
}

}  // namespace engram::models
