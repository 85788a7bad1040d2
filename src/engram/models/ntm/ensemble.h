// Several binary sequence models (NTMs, LSTM baselines, or both) of one task run as one: every
// scored output bit's probability is the members' mean, p = 1/M Σ_m σ(l_m), returned as the
// logit of that mean, log Σ_m σ(l_m) − log Σ_m σ(−l_m) (log-sum-exp, finite for finite l_m), so
// sequence_loss scores the mixture as it scores one model. Inference only: the logits are
// constants of the graph (no gradient). The trace (the pictures) is the first member's.
// Dims: M members, R scored rows, K output bits.
#pragma once

#include <vector>

#include "engram/models/model_set.h"
#include "engram/models/ntm/seq_task.h"

namespace engram::models {

class EnsembleSeqModel final : public SeqModel {
 public:
  // Borrowed members (they must outlive it), 1 ... decode::kMaxEnsemble, of equal I and K.
  explicit EnsembleSeqModel(std::vector<const SeqModel*> members);
  // Each member's logits [R, K] -> the logit of their mean probability [R, K]; a member's
  // non-finite weighting stops it (SeqOutput::non_finite, that member's).
  SeqOutput forward(Graph& g, Var x, const std::vector<int32_t>& rows, SeqTrace* trace = nullptr) const override;
  int input_size() const override { return members_.front()->input_size(); }
  int output_size() const override { return members_.front()->output_size(); }

 private:
  std::vector<const SeqModel*> members_;
};

// sequence_loss of one model, or of a set's members as one EnsembleSeqModel; g reads the set's
// bf16 / int8 weights from now on (ModelSet::set_weights; none = fp32). `trace`: the first model's.
SeqLoss sequence_loss_of(Graph& g, const ModelSet<SeqModel>& models, const data::tasks::SeqBatch& batch,
                         SeqTrace* trace = nullptr);

}  // namespace engram::models
