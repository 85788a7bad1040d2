// ModelSet<M>: the models one inference runs and the weights its graphs read. models[0] alone, or
// models[0] with the rest as one ensemble: each family averages the members' probabilities of
// every output it predicts (pointer: the next position, as decode::EnsembleStepModel; memn2n: the
// answer; ntm: each output bit; tree: each node's class), and shows models[0]'s pictures where
// the members' differ in shape. bf16 / int8 (nullptr = fp32) is one bf16 / int8 copy of every
// member's weights (core::Bf16Weights, core::Int8Weights), which the family's graphs read
// (Graph::use_bf16_weights, use_int8_weights; set_weights sets both).
// Dims: M models.
#pragma once

#include <optional>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/graph.h"
#include "engram/core/weights_bf16.h"
#include "engram/core/weights_int8.h"
#include "engram/decode/ensemble.h"

namespace engram::models {

template <class M>
struct ModelSet {
  std::vector<const M*> models;             // [M], 1 ... decode::kMaxEnsemble, borrowed
  const core::Bf16Weights* bf16 = nullptr;  // borrowed; nullptr = not bf16
  const core::Int8Weights* int8 = nullptr;  // borrowed; nullptr = not int8

  // One model alone in fp32 (a function taking a ModelSet takes a model as it did before).
  ModelSet(const M& one) : models{&one} {}  // NOLINT(google-explicit-constructor)
  ModelSet(std::vector<const M*> ms, const core::Bf16Weights* b, const core::Int8Weights* q = nullptr)
      : models(std::move(ms)), bf16(b), int8(q) {
    ENGRAM_CHECK(!models.empty() && models.size() <= static_cast<size_t>(decode::kMaxEnsemble),
                 "an ensemble of {} models (1 ... {})", models.size(), decode::kMaxEnsemble);
    for (const M* m : models) ENGRAM_CHECK(m != nullptr, "an ensemble member is null");
  }
  const M& first() const { return *models.front(); }
  // `g` reads this set's decode-time weights (bf16, int8, or neither: fp32).
  void set_weights(core::Graph& g) const {
    g.use_bf16_weights(bf16);
    g.use_int8_weights(int8);
  }
  int size() const { return static_cast<int>(models.size()); }
  // The one decode::StepModel a search runs over (M a StepModel): models[0] alone, or every
  // member as one EnsembleStepModel, built into `ensemble` (which must outlive the search).
  const decode::StepModel& decoder(std::optional<decode::EnsembleStepModel>& ensemble) const {
    if (models.size() == 1) return *models.front();
    ensemble.emplace(std::vector<const decode::StepModel*>(models.begin(), models.end()));
    return *ensemble;
  }
};

}  // namespace engram::models
