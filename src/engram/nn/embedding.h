// Embedding: a [V, D] lookup table (`<path>/weight`, PyTorch's layout). Backward touches only the
// rows used. An optional padding id has a row that starts at zero, looks up as zero and never
// receives a gradient. Weight tying is explicit: build a Linear (output projection) or another
// Embedding over this table's ParamId.
// Dims: V vocab, D embedding dim, I number of ids, T time, B batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

struct EmbeddingConfig {
  int vocab = 0;             // V
  int dim = 0;               // D
  int32_t padding_id = -1;   // row kept at zero with no gradient; -1 = none
  float init_stddev = 1.0f;  // weight ~ N(0, stddev²), as torch.nn.Embedding
};

class Embedding : public Module {
 public:
  // Adds `<path>/weight` [V, D] initialised from `rng` (padding row zeroed).
  Embedding(ParamStore& store, std::string path, const EmbeddingConfig& cfg, core::Rng& rng);
  // Tied: looks up in the existing parameter `table` [V, D] (e.g. a shared source/target table).
  // Nothing is added to the store; the padding row of `table` is zeroed if padding_id >= 0.
  Embedding(ParamStore& store, std::string path, ParamId table, int32_t padding_id = -1);

  // ids [I] -> [I, D]. Ids outside [0, V) are an error. Differentiable in the table only; the
  // gradient reaches only the rows looked up (never the padding row).
  Var forward(Graph& g, const std::vector<int32_t>& ids) const;
  // ids laid out as `ids_shape` (e.g. [T, B]) -> ids_shape + [D] (e.g. [T, B, D]).
  Var forward(Graph& g, const std::vector<int32_t>& ids, Shape ids_shape) const;

  ParamId weight() const { return weight_; }  // [V, D]
  int vocab() const { return vocab_; }
  int dim() const { return dim_; }
  int32_t padding_id() const { return padding_id_; }

 private:
  ParamId weight_;      // [V, D]
  int vocab_;           // V
  int dim_;             // D
  int32_t padding_id_;  // -1 = none
};

}  // namespace engram::nn
