// Embedding: table initialisation and the gather_rows lookup with an optional padding mask.
// Dims: V vocab, D embedding dim, I number of ids.
#include "engram/nn/embedding.h"

#include <algorithm>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

namespace {

void zero_row(ParamStore& store, ParamId table, int32_t row) {
  if (row >= 0) store.value(table).rows(row, row + 1).zero();
}

}  // namespace

Embedding::Embedding(ParamStore& store, std::string path, const EmbeddingConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), vocab_(cfg.vocab), dim_(cfg.dim), padding_id_(cfg.padding_id) {
  ENGRAM_CHECK(cfg.vocab > 0 && cfg.dim > 0, "embedding '{}': vocab {} and dim {} must be positive", this->path(),
               cfg.vocab, cfg.dim);
  ENGRAM_CHECK(cfg.padding_id >= -1 && cfg.padding_id < cfg.vocab, "embedding '{}': padding id {} outside [0, {})",
               this->path(), cfg.padding_id, cfg.vocab);
  weight_ = add_param("weight", {vocab_, dim_});
  init::normal(store, weight_, rng, 0.0f, cfg.init_stddev);
  zero_row(store, weight_, padding_id_);
}

Embedding::Embedding(ParamStore& store, std::string path, ParamId table, int32_t padding_id)
    : Module(store, std::move(path)), weight_(table), padding_id_(padding_id) {
  ENGRAM_CHECK(table >= 0 && table < store.count(), "embedding '{}': tied table id {} not in the store",
               this->path(), table);
  const Shape& s = store.shape(table);
  ENGRAM_CHECK(s.rank() == 2, "embedding '{}': tied table '{}' is {}, expected [V, D]", this->path(),
               store.name(table), s);
  vocab_ = s[0];
  dim_ = s[1];
  ENGRAM_CHECK(padding_id >= -1 && padding_id < vocab_, "embedding '{}': padding id {} outside [0, {})",
               this->path(), padding_id, vocab_);
  zero_row(store, weight_, padding_id_);
}

Var Embedding::forward(Graph& g, const std::vector<int32_t>& ids) const {
  Var table = param(g, weight_);                    // [V, D]
  Var out = core::gather_rows(table, ids);          // [I, D]
  if (padding_id_ < 0 || std::find(ids.begin(), ids.end(), padding_id_) == ids.end()) return out;
  // Padding positions: multiply by 0 so no gradient reaches the padding row (its value is 0 too).
  const int n = static_cast<int>(ids.size());
  Tensor keep = g.alloc({n, 1});                    // [I, 1]
  for (int i = 0; i < n; ++i) keep[i] = ids[i] == padding_id_ ? 0.0f : 1.0f;
  return core::mul(out, g.input(keep));             // [I, D]
}

Var Embedding::forward(Graph& g, const std::vector<int32_t>& ids, Shape ids_shape) const {
  ENGRAM_CHECK(ids_shape.numel() == static_cast<int64_t>(ids.size()) && ids_shape.rank() < core::kMaxRank,
               "embedding '{}': {} ids do not fill shape {} (rank < {})", path(), ids.size(), ids_shape,
               core::kMaxRank);
  int dims[core::kMaxRank];                         // ids_shape + [D]
  for (int i = 0; i < ids_shape.rank(); ++i) dims[i] = ids_shape[i];
  dims[ids_shape.rank()] = dim_;
  const Shape with_dim = Shape::from(dims, dims + ids_shape.rank() + 1);
  return core::reshape(forward(g, ids), with_dim);
}

}  // namespace engram::nn
