// DecodeSetup: the members' checks and the bf16 / int8 copy over every member's ParamStore.
#include "engram/models/decode_setup.h"

namespace engram::models {

void DecodeSetup::set_members(LoadedModel& host, std::vector<std::unique_ptr<LoadedModel>> members,
                              const std::function<void(const LoadedModel& member)>& compatible) {
  ENGRAM_CHECK(members.size() < static_cast<size_t>(decode::kMaxEnsemble),
               "--ensemble: {} models in one ensemble (at most {} with {})", members.size() + 1, decode::kMaxEnsemble,
               host.dir().string());
  for (const auto& m : members) {
    ENGRAM_CHECK(m != nullptr, "--ensemble: a member of {} is null", host.dir().string());
    ENGRAM_CHECK(m->family() == host.family(),
                 "--ensemble: {} holds a '{}' model and {} a '{}' model (an ensemble is of one family)",
                 m->dir().string(), m->family(), host.dir().string(), host.family());
    compatible(*m);
  }
  members_ = std::move(members);
  rebuild(host);
}

void DecodeSetup::set_precision(LoadedModel& host, decode::Precision p) {
  precision_ = p;
  rebuild(host);
}

void DecodeSetup::rebuild(LoadedModel& host) {
  bf16_.reset();
  int8_.reset();
  if (precision_ == decode::Precision::kFp32) return;
  std::vector<const nn::ParamStore*> stores{&host.params()};
  for (const auto& m : members_) stores.push_back(&m->params());
  if (precision_ == decode::Precision::kBf16) bf16_ = std::make_unique<core::Bf16Weights>(nn::bf16_weights(stores));
  else int8_ = std::make_unique<core::Int8Weights>(nn::int8_weights(stores));
}

void check_same_vocab(const data::Vocab& host_vocab, const data::Vocab& member_vocab, const LoadedModel& host,
                      const LoadedModel& member, const char* what) {
  bool same = host_vocab.size() == member_vocab.size();
  for (int32_t i = 0; same && i < host_vocab.size(); ++i) same = host_vocab.token(i) == member_vocab.token(i);
  ENGRAM_CHECK(same, "--ensemble: {} has another {} than {} ({} and {} tokens; an ensemble shares its {})",
               member.dir().string(), what, host.dir().string(), member_vocab.size(), host_vocab.size(), what);
}

}  // namespace engram::models
