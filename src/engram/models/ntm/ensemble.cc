// The ensemble's forward: each member on the same input, then the logit of the mean probability.
// Dims: M members, R scored rows, K output bits.
#include "engram/models/ntm/ensemble.h"

#include <algorithm>
#include <cmath>

#include "engram/core/error.h"

namespace engram::models {

namespace {

// log σ(l) = −softplus(−l), without overflow for any finite l.
double log_sigmoid(double l) { return -(std::max(-l, 0.0) + std::log1p(std::exp(-std::fabs(l)))); }

// log Σ_i exp(v_i) over a few values.
double log_sum_exp(const std::vector<double>& v) {
  const double hi = *std::max_element(v.begin(), v.end());
  double s = 0;
  for (double x : v) s += std::exp(x - hi);
  return hi + std::log(s);
}

}  // namespace

EnsembleSeqModel::EnsembleSeqModel(std::vector<const SeqModel*> members) : members_(std::move(members)) {
  ENGRAM_CHECK(!members_.empty() && members_.size() <= static_cast<size_t>(decode::kMaxEnsemble),
               "ntm ensemble: {} members (1 ... {})", members_.size(), decode::kMaxEnsemble);
  for (const SeqModel* m : members_) {
    ENGRAM_CHECK(m != nullptr, "ntm ensemble: a member is null");
    ENGRAM_CHECK(m->input_size() == input_size() && m->output_size() == output_size(),
                 "ntm ensemble: a member of {} inputs / {} outputs with one of {} / {}", m->input_size(),
                 m->output_size(), input_size(), output_size());
  }
}

SeqOutput EnsembleSeqModel::forward(Graph& g, Var x, const std::vector<int32_t>& rows, SeqTrace* trace) const {
  std::vector<SeqOutput> outs;  // [M], each logits [R, K]
  for (size_t m = 0; m < members_.size(); ++m) {
    outs.push_back(members_[m]->forward(g, x, rows, m == 0 ? trace : nullptr));
    if (outs.back().non_finite) return outs.back();
  }
  if (outs.size() == 1) return outs[0];
  const core::Shape shape = outs[0].logits.shape();  // [R, K]
  for (const SeqOutput& o : outs)
    ENGRAM_CHECK(o.logits.shape() == shape, "ntm ensemble: member logits {} and {}", o.logits.shape().str(),
                 shape.str());
  const int64_t n = shape.numel();
  std::vector<float> mixed(static_cast<size_t>(n));
  std::vector<double> pos(outs.size()), neg(outs.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t m = 0; m < outs.size(); ++m) {
      const double l = outs[m].logits.data()[i];
      pos[m] = log_sigmoid(l), neg[m] = log_sigmoid(-l);
    }
    mixed[static_cast<size_t>(i)] = static_cast<float>(log_sum_exp(pos) - log_sum_exp(neg));
  }
  SeqOutput out;
  out.logits = g.constant(shape, mixed.data());
  return out;
}

SeqLoss sequence_loss_of(Graph& g, const ModelSet<SeqModel>& models, const data::tasks::SeqBatch& batch,
                         SeqTrace* trace) {
  models.set_weights(g);
  if (models.size() == 1) return sequence_loss(g, models.first(), batch, trace);
  const EnsembleSeqModel ensemble(models.models);
  return sequence_loss(g, ensemble, batch, trace);
}

}  // namespace engram::models
