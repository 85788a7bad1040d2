// DecodeSetup: what a family's LoadedModel decodes with besides its own weights — the ensemble
// members of LoadedModel::set_ensemble and the precision of set_precision — held once for every
// family that has them. models() hands the family its ModelSet (model_set.h): its own model, the
// members' and, in bf16 or int8, one bf16 or int8 copy of all their weights, rebuilt whenever
// either changes.
// Not thread-safe to change (call before decoding); models() may be read from many threads.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "engram/core/weights_bf16.h"
#include "engram/core/weights_int8.h"
#include "engram/data/vocab.h"
#include "engram/decode/options.h"
#include "engram/models/model_set.h"
#include "engram/models/registry.h"

namespace engram::models {

class DecodeSetup {
 public:
  // `members` become `host`'s ensemble, replacing any before. Each must hold host's family (else
  // an error naming both directories), and pass `compatible` (the family's own check of
  // vocabulary / task / output size, which throws naming both directories); at most
  // decode::kMaxEnsemble models with host.
  void set_members(LoadedModel& host, std::vector<std::unique_ptr<LoadedModel>> members,
                   const std::function<void(const LoadedModel& member)>& compatible);
  void set_precision(LoadedModel& host, decode::Precision p);
  decode::Precision precision() const { return precision_; }
  const core::Bf16Weights* bf16() const { return bf16_.get(); }  // nullptr unless bf16
  const core::Int8Weights* int8() const { return int8_.get(); }  // nullptr unless int8
  int members() const { return static_cast<int>(members_.size()); }

  // host's model and each member's, model_of(const T&) -> const M&: T is the family's LoadedModel.
  template <class T, class F>
  auto models(const T& host, F&& model_of) const {
    using M = std::remove_cvref_t<decltype(model_of(host))>;
    std::vector<const M*> ms{&model_of(host)};
    for (const auto& m : members_) {
      const T* t = dynamic_cast<const T*>(m.get());
      ENGRAM_CHECK(t != nullptr, "ensemble: {} is not a {} model", m->dir().string(), host.family());
      ms.push_back(&model_of(*t));
    }
    return ModelSet<M>(std::move(ms), bf16_.get(), int8_.get());
  }

 private:
  void rebuild(LoadedModel& host);  // the bf16 / int8 copy of host's and the members' parameters

  std::vector<std::unique_ptr<LoadedModel>> members_;
  decode::Precision precision_ = decode::Precision::kFp32;
  std::unique_ptr<core::Bf16Weights> bf16_;  // set in bf16
  std::unique_ptr<core::Int8Weights> int8_;  // set in int8
};

// An error naming both directories unless `member`'s vocabulary (`what`: "vocabulary") is
// `host`'s, token for token: an ensemble averages probabilities of the same ids.
void check_same_vocab(const data::Vocab& host_vocab, const data::Vocab& member_vocab, const LoadedModel& host,
                      const LoadedModel& member, const char* what = "vocabulary");

}  // namespace engram::models
