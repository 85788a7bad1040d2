// VocabOutput and PointerOutput.
// Dims: R rows, P readout, V vocab, N rows, S positions.
#include "engram/nn/output_layer.h"

#include "engram/core/ops.h"

namespace engram::nn {

VocabOutput::VocabOutput(ParamStore& store, const std::string& path, int readout_dim, int vocab, core::Rng& rng)
    : linear_(std::make_unique<Linear>(store, path, LinearConfig{.in_dim = readout_dim, .out_dim = vocab}, rng)) {}

VocabOutput::VocabOutput(ParamStore& store, const std::string& path, ParamId table)
    : linear_(std::make_unique<Linear>(store, path, table, true)) {}

Var VocabOutput::log_probs(Graph& g, Var readout) const { return core::log_softmax(logits(g, readout)); }

PointerOutput::PointerOutput(ParamStore& store, std::string path, const PointerOutputConfig& cfg, core::Rng& rng)
    : Module(store, path),
      cfg_(cfg),
      scorer_(store, std::move(path),
              AttentionConfig{.score = AttentionScore::kAdditive, .query_dim = cfg.query_dim,
                              .memory_dim = cfg.memory_dim, .attn_dim = cfg.attn_dim},
              rng) {
  ENGRAM_CHECK(cfg.logit_clip >= 0.0f, "pointer '{}': logit_clip {} must be >= 0", this->path(), cfg.logit_clip);
}

AttentionMemory PointerOutput::prepare(Graph& g, Var memory, const std::vector<int32_t>& lengths) const {
  return scorer_.prepare(g, memory, lengths);
}

Var PointerOutput::scores(Graph& g, const AttentionMemory& mem, Var query) const {
  Var u = core::reshape(scorer_.scores(g, mem, query), {mem.batch, mem.src_len});  // [N, S]
  return cfg_.logit_clip > 0.0f ? core::scale(core::tanh(u), cfg_.logit_clip) : u;
}

Var PointerOutput::log_probs(Graph& g, const AttentionMemory& mem, Var query, const float* mask) const {
  Var u = scores(g, mem, query);  // [N, S]
  const int64_t n = int64_t{mem.batch} * mem.src_len;
  if (!mask && !mem.mask) return core::log_softmax(u);
  float* m = g.arena().floats(static_cast<size_t>(n));  // [N, S] both masks together
  for (int64_t i = 0; i < n; ++i)
    m[i] = (mask ? mask[i] != 0.0f : true) && (mem.mask ? mem.mask[i] != 0.0f : true) ? 1.0f : 0.0f;
  return core::log_softmax(u, m);
}

}  // namespace engram::nn
