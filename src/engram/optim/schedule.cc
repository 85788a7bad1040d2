// Learning-rate schedules.
#include "engram/optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engram/core/error.h"

namespace engram::optim {

ConstantLr::ConstantLr(float lr) : lr_(lr) {
  ENGRAM_CHECK(std::isfinite(lr) && lr >= 0, "constant lr must be >= 0, got {}", lr);
}

StepDecayLr::StepDecayLr(float base_lr, int64_t every, float gamma) : base_lr_(base_lr), every_(every), gamma_(gamma) {
  ENGRAM_CHECK(std::isfinite(base_lr) && base_lr >= 0, "step decay: base lr must be >= 0, got {}", base_lr);
  ENGRAM_CHECK(every > 0, "step decay: 'every' must be > 0, got {}", every);
  ENGRAM_CHECK(gamma > 0 && gamma <= 1, "step decay: gamma must be in (0, 1], got {}", gamma);
}

float StepDecayLr::lr(int64_t t) const {
  const int64_t k = t < 0 ? 0 : t / every_;
  return static_cast<float>(base_lr_ * std::pow(static_cast<double>(gamma_), static_cast<double>(k)));
}

WarmupInvSqrtLr::WarmupInvSqrtLr(float peak_lr, int64_t warmup) : peak_lr_(peak_lr), warmup_(warmup) {
  ENGRAM_CHECK(std::isfinite(peak_lr) && peak_lr >= 0, "warmup: peak lr must be >= 0, got {}", peak_lr);
  ENGRAM_CHECK(warmup > 0, "warmup: warmup steps must be > 0, got {}", warmup);
}

float WarmupInvSqrtLr::lr(int64_t t) const {
  const double s = static_cast<double>(t < 0 ? 1 : t + 1);
  const double w = static_cast<double>(warmup_);
  return static_cast<float>(s <= w ? peak_lr_ * s / w : peak_lr_ * std::sqrt(w / s));
}

ReduceOnPlateau::ReduceOnPlateau(float initial_lr, PlateauOptions options)
    : options_(options),
      lr_(initial_lr),
      best_(options.maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {
  ENGRAM_CHECK(std::isfinite(initial_lr) && initial_lr >= 0, "plateau: initial lr must be >= 0, got {}", initial_lr);
  ENGRAM_CHECK(options.factor > 0 && options.factor < 1, "plateau: factor must be in (0, 1), got {}", options.factor);
  ENGRAM_CHECK(options.patience >= 0, "plateau: patience must be >= 0, got {}", options.patience);
  ENGRAM_CHECK(options.cooldown >= 0, "plateau: cooldown must be >= 0, got {}", options.cooldown);
  ENGRAM_CHECK(std::isfinite(options.threshold) && options.threshold >= 0, "plateau: threshold must be >= 0, got {}",
               options.threshold);
  ENGRAM_CHECK(std::isfinite(options.min_lr) && options.min_lr >= 0, "plateau: min_lr must be >= 0, got {}",
               options.min_lr);
}

bool ReduceOnPlateau::improves(double metric) const {
  if (options_.maximize) return metric > best_ * (best_ >= 0 ? 1.0 + options_.threshold : 1.0 - options_.threshold);
  return metric < best_ * (best_ >= 0 ? 1.0 - options_.threshold : 1.0 + options_.threshold);
}

float ReduceOnPlateau::observe(double metric) {
  ENGRAM_CHECK(!std::isnan(metric), "plateau: validation metric is NaN");
  if (improves(metric)) {
    best_ = metric;
    bad_ = 0;
  } else {
    ++bad_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_ = 0;  // evaluations during cooldown do not count
  }
  if (bad_ > options_.patience) {
    const float reduced = std::max(lr_ * options_.factor, options_.min_lr);
    if (lr_ - reduced > 1e-8f) lr_ = reduced;
    cooldown_left_ = options_.cooldown;
    bad_ = 0;
  }
  return lr_;
}

std::map<std::string, double> ReduceOnPlateau::state_scalars() const {
  return {{"lr", lr_}, {"best", best_}, {"bad", bad_}, {"cooldown_left", cooldown_left_}};
}

void ReduceOnPlateau::load_state_scalars(const std::map<std::string, double>& scalars) {
  for (const char* key : {"lr", "best", "bad", "cooldown_left"})
    ENGRAM_CHECK(scalars.count(key), "plateau schedule state has no '{}' scalar", key);
  lr_ = static_cast<float>(scalars.at("lr"));
  best_ = scalars.at("best");
  bad_ = static_cast<int>(scalars.at("bad"));
  cooldown_left_ = static_cast<int>(scalars.at("cooldown_left"));
}

}  // namespace engram::optim
