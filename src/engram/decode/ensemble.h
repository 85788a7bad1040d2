// EnsembleStepModel: several StepModels with one output space decoded as one model. Every step
// runs each member on its own state and returns the log of the members' mean probability,
//   log p(y) = log (1/M Σ_m p_m(y)),
// computed as a log-sum-exp (the ensembling of fairseq's EnsembleModel); α and the gate are each the members' mean
// where they all return one of the same shape, else the first member's. Any search (greedy, beam,
// sampling) runs over it unchanged. The members must agree on <go>, <eos> and, at every step, V.
// Dims: M members, N rows, V next-token classes, S source steps.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engram/decode/step_model.h"

namespace engram::decode {

// Limit (docs/limits.md): at most this many members.
constexpr int kMaxEnsemble = 16;

class EnsembleStepModel final : public StepModel {
 public:
  // The members are borrowed (they must outlive the ensemble); 1 ... kMaxEnsemble of them.
  explicit EnsembleStepModel(std::vector<const StepModel*> members);

  int32_t go_id() const override { return members_[0]->go_id(); }
  int32_t eos_id() const override { return members_[0]->eos_id(); }
  std::unique_ptr<DecodeState> encode(core::Graph& g, const SourceBatch& src) const override;
  StepOutput step(core::Graph& g, DecodeState& state, std::span<const int32_t> prev_ids) const override;
  void reorder(DecodeState& state, std::span<const int32_t> rows) const override;

  int size() const { return static_cast<int>(members_.size()); }  // M

 private:
  std::vector<const StepModel*> members_;
};

}  // namespace engram::decode
