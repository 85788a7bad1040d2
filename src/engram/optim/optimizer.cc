// Optimizer base: slot allocation, the step counter and state export/import.
#include "engram/optim/optimizer.h"

#include <algorithm>
#include <cmath>

namespace engram::optim {

Optimizer::Optimizer(nn::ParamStore& store, float lr, std::vector<std::string> slots)
    : store_(store), lr_(lr), numel_(store.numel()), slot_names_(std::move(slots)) {
  ENGRAM_CHECK(std::isfinite(lr) && lr >= 0, "learning rate must be finite and >= 0, got {}", lr);
  slots_.reserve(slot_names_.size());
  for (size_t k = 0; k < slot_names_.size(); ++k) slots_.emplace_back(static_cast<size_t>(numel_), 0.0f);
}

void Optimizer::check_store() const {
  ENGRAM_CHECK(store_.numel() == numel_,
               "{} optimizer was created for {} parameter values but the store now has {}; create it "
               "after the model is built",
               kind(), numel_, store_.numel());
}

void Optimizer::step() {
  check_store();
  ++step_;
  update(store_.values(), store_.grads(), numel_);
}

void Optimizer::set_lr(float lr) {
  ENGRAM_CHECK(std::isfinite(lr) && lr >= 0, "learning rate must be finite and >= 0, got {}", lr);
  lr_ = lr;
}

void Optimizer::fill_slot(int k, float v) { std::fill(slots_[k].begin(), slots_[k].end(), v); }

std::vector<StateTensor> Optimizer::state_tensors() {
  check_store();
  std::vector<StateTensor> out;
  out.reserve(slots_.size() * store_.count());
  for (size_t k = 0; k < slots_.size(); ++k)
    for (nn::ParamId id = 0; id < store_.count(); ++id)
      out.push_back({slot_names_[k] + "/" + store_.name(id), store_.shape(id), slots_[k].data() + store_.offset(id)});
  return out;
}

std::vector<ConstStateTensor> Optimizer::state_tensors() const {
  check_store();
  std::vector<ConstStateTensor> out;
  out.reserve(slots_.size() * store_.count());
  for (size_t k = 0; k < slots_.size(); ++k)
    for (nn::ParamId id = 0; id < store_.count(); ++id)
      out.push_back({slot_names_[k] + "/" + store_.name(id), store_.shape(id), slots_[k].data() + store_.offset(id)});
  return out;
}

std::map<std::string, double> Optimizer::state_scalars() const {
  return {{"step", static_cast<double>(step_)}, {"lr", static_cast<double>(lr_)}};
}

void Optimizer::load_state_scalars(const std::map<std::string, double>& scalars) {
  auto it = scalars.find("step");
  ENGRAM_CHECK(it != scalars.end(), "{} optimizer state has no 'step' scalar", kind());
  ENGRAM_CHECK(it->second >= 0 && it->second == std::floor(it->second) && it->second < 9.007199254740992e15,
               "{} optimizer state has an invalid step count {}", kind(), it->second);
  auto lr = scalars.find("lr");
  ENGRAM_CHECK(lr == scalars.end() || (std::isfinite(lr->second) && lr->second >= 0),
               "{} optimizer state has an invalid learning rate {}", kind(), lr == scalars.end() ? 0.0 : lr->second);
  step_ = static_cast<int64_t>(it->second);
  if (lr != scalars.end()) set_lr(static_cast<float>(lr->second));
}

}  // namespace engram::optim
