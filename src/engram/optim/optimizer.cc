// Optimizer base: slot allocation, the step counter and state export/import.
#include "engram/optim/optimizer.h"

#include <algorithm>
#include <cmath>

namespace engram::optim {

Optimizer::Optimizer(nn::ParamStore& store, float lr, std::vector<std::string> slots)
    : store_(store),
      lr_(lr),
      numel_(store.numel()),
      slot_names_(std::move(slots)),
      scales_(static_cast<size_t>(store.count()), 1.0f) {
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
  if (runs_.empty()) {
    run_offset_ = 0, run_lr_ = lr_;
    update(store_.values(), store_.grads(), numel_);
    return;
  }
  for (const Run& r : runs_) {
    run_offset_ = r.begin, run_lr_ = lr_ * r.scale;
    update(store_.values() + r.begin, store_.grads() + r.begin, r.n);
  }
  run_offset_ = 0;
}

void Optimizer::set_lr_scale(nn::ParamId id, float scale) {
  check_store();
  ENGRAM_CHECK(id >= 0 && id < static_cast<nn::ParamId>(scales_.size()), "{} optimizer: parameter id {} is not one of the "
               "store's {}", kind(), id, scales_.size());
  ENGRAM_CHECK(std::isfinite(scale) && scale >= 0, "{} optimizer: learning-rate multiplier of '{}' must be finite and "
               ">= 0, got {}", kind(), store_.name(id), scale);
  scales_[static_cast<size_t>(id)] = scale;
  // Rebuild the runs: parameters are laid out in id order, so equal neighbours merge.
  runs_.clear();
  if (std::all_of(scales_.begin(), scales_.end(), [](float s) { return s == 1.0f; })) return;
  for (nn::ParamId p = 0; p < static_cast<nn::ParamId>(scales_.size()); ++p) {
    const float s = scales_[static_cast<size_t>(p)];
    const int64_t n = store_.shape(p).numel();
    if (n == 0) continue;
    if (!runs_.empty() && runs_.back().scale == s && runs_.back().begin + runs_.back().n == store_.offset(p))
      runs_.back().n += n;
    else
      runs_.push_back({store_.offset(p), n, s});
  }
}

float Optimizer::lr_scale(nn::ParamId id) const {
  ENGRAM_CHECK(id >= 0 && id < static_cast<nn::ParamId>(scales_.size()), "{} optimizer: parameter id {} is not one of the "
               "store's {}", kind(), id, scales_.size());
  return scales_[static_cast<size_t>(id)];
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
