// The ensemble's state (one state per member) and its log-mean-exp step.
#include "engram/decode/ensemble.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engram/core/error.h"

namespace engram::decode {

namespace {

class EnsembleState final : public DecodeState {
 public:
  int rows() const override { return members.front()->rows(); }
  std::vector<std::unique_ptr<DecodeState>> members;
};

EnsembleState& as_state(DecodeState& s) { return state_as<EnsembleState>(s, "ensemble"); }

// The members' mean of one per-step tensor (alignment, gate) where every member returns it in one
// shape; else member 0's.
core::Tensor mean_of(core::Graph& g, const std::vector<StepOutput>& outs, core::Tensor StepOutput::*field) {
  const core::Tensor& first = outs[0].*field;
  bool same = first.data != nullptr;
  for (const StepOutput& o : outs) same = same && (o.*field).data != nullptr && (o.*field).shape == first.shape;
  if (!same) return first;
  core::Tensor mean = g.alloc(first.shape);
  for (int64_t i = 0; i < first.numel(); ++i) {
    float sum = 0;
    for (const StepOutput& o : outs) sum += (o.*field).data[i];
    mean.data[i] = sum / static_cast<float>(outs.size());
  }
  return mean;
}

}  // namespace

EnsembleStepModel::EnsembleStepModel(std::vector<const StepModel*> members) : members_(std::move(members)) {
  ENGRAM_CHECK(!members_.empty() && members_.size() <= kMaxEnsemble, "ensemble: {} member models (1 ... {})",
               members_.size(), kMaxEnsemble);
  for (size_t m = 0; m < members_.size(); ++m) {
    ENGRAM_CHECK(members_[m] != nullptr, "ensemble: member {} is null", m);
    ENGRAM_CHECK(members_[m]->go_id() == members_[0]->go_id() && members_[m]->eos_id() == members_[0]->eos_id(),
                 "ensemble: member {} has <go> {} and <eos> {}, member 0 has {} and {}", m, members_[m]->go_id(),
                 members_[m]->eos_id(), members_[0]->go_id(), members_[0]->eos_id());
  }
}

std::unique_ptr<DecodeState> EnsembleStepModel::encode(core::Graph& g, const SourceBatch& src) const {
  auto st = std::make_unique<EnsembleState>();
  for (const StepModel* m : members_) {
    st->members.push_back(m->encode(g, src));
    ENGRAM_CHECK(st->members.back()->rows() == st->members.front()->rows(), "ensemble: members encode {} and {} rows",
                 st->members.front()->rows(), st->members.back()->rows());
  }
  return st;
}

StepOutput EnsembleStepModel::step(core::Graph& g, DecodeState& state, std::span<const int32_t> prev_ids) const {
  EnsembleState& st = as_state(state);
  // Every member's output stays valid in g's arena until the caller resets it.
  std::vector<StepOutput> outs;
  outs.reserve(members_.size());
  for (size_t m = 0; m < members_.size(); ++m) outs.push_back(members_[m]->step(g, *st.members[m], prev_ids));
  const core::Shape& shape = outs[0].log_probs.shape;
  ENGRAM_CHECK(shape.rank() == 2, "ensemble: member 0's log-probabilities are not [N, V]");
  for (size_t m = 1; m < outs.size(); ++m)
    ENGRAM_CHECK(outs[m].log_probs.shape == shape, "ensemble: member {} returns log-probabilities {}, member 0 {}",
                 m, outs[m].log_probs.shape.str(), shape.str());
  if (members_.size() == 1) return outs[0];
  const int64_t n = shape[0], v = shape[1];
  const float log_m = std::log(static_cast<float>(members_.size()));
  StepOutput out;
  out.log_probs = g.alloc(shape);
  for (int64_t i = 0; i < n * v; ++i) {
    float hi = -std::numeric_limits<float>::infinity();
    for (const StepOutput& o : outs) hi = std::max(hi, o.log_probs.data[i]);
    if (!std::isfinite(hi)) {  // every member gives -inf (a masked class)
      out.log_probs.data[i] = hi;
      continue;
    }
    double sum = 0;
    for (const StepOutput& o : outs) sum += std::exp(double(o.log_probs.data[i]) - hi);
    out.log_probs.data[i] = hi + static_cast<float>(std::log(sum)) - log_m;
  }
  out.alignment = mean_of(g, outs, &StepOutput::alignment);
  out.gate = mean_of(g, outs, &StepOutput::gate);
  return out;
}

void EnsembleStepModel::reorder(DecodeState& state, std::span<const int32_t> rows) const {
  EnsembleState& st = as_state(state);
  for (size_t m = 0; m < members_.size(); ++m) members_[m]->reorder(*st.members[m], rows);
}

}  // namespace engram::decode
