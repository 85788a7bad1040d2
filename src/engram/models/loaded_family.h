// LoadedFamily<Self, M>: what every family's LoadedModel holds and answers alike — the checkpoint
// directory, the model M (M::kName is the family), and a DecodeSetup (the ensemble members of
// set_ensemble and the precision of set_precision) — so that a family's LoadedModel (Self, a
// class deriving from LoadedFamily<Self, M>) declares only its own state and inference.
// models() is the ModelSet the family's run functions take: of M, or of what Self::net(member)
// returns where Self declares it (ntm: the sequence model inside its task model).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "engram/models/decode_setup.h"
#include "engram/models/model_set.h"
#include "engram/models/registry.h"

namespace engram::models {

template <class Self, class M>
class LoadedFamily : public LoadedModel {
 public:
  std::filesystem::path model_dir;
  std::unique_ptr<M> model;
  DecodeSetup setup;  // ensemble members and precision (set_ensemble, set_precision)

  std::string family() const override { return M::kName; }
  const std::filesystem::path& dir() const override { return model_dir; }
  nn::ParamStore& params() override { return model->params(); }
  // bf16 / int8: every product of the model and its members reads one low-precision copy.
  void set_precision(decode::Precision p) override { setup.set_precision(*this, p); }
  // The model with its ensemble members and decode-time weights.
  auto models() const {
    return setup.models(static_cast<const Self&>(*this), [](const Self& s) -> decltype(auto) {
      if constexpr (requires { Self::net(s); }) return Self::net(s);
      else return static_cast<const M&>(*s.model);
    });
  }
};

}  // namespace engram::models
