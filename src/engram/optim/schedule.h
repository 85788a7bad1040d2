// Learning-rate schedules. LrSchedule maps a counter t (updates or epochs done so far, 0-based:
// the caller picks the unit) to a learning rate; it is a pure function, so resuming needs only t.
// ReduceOnPlateau is not a function of t (it reacts to validation metrics), so it is a separate
// stateful class with its own checkpoint scalars.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace engram::optim {

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  // Learning rate for the update (or epoch) that follows t completed ones.
  virtual float lr(int64_t t) const = 0;
};

// lr(t) = lr.
class ConstantLr final : public LrSchedule {
 public:
  explicit ConstantLr(float lr);
  float lr(int64_t t) const override { return lr_; }

 private:
  float lr_;
};

// lr(t) = base_lr * gamma^floor(t / every)   (torch.optim.lr_scheduler.StepLR).
class StepDecayLr final : public LrSchedule {
 public:
  StepDecayLr(float base_lr, int64_t every, float gamma);
  float lr(int64_t t) const override;

 private:
  float base_lr_;
  int64_t every_;
  float gamma_;
};

// Linear warmup to peak_lr over `warmup` updates, then inverse square-root decay (fairseq's
// inverse_sqrt, the Transformer schedule): with s = t + 1,
// lr = peak_lr * s / warmup for s <= warmup, else peak_lr * sqrt(warmup / s).
class WarmupInvSqrtLr final : public LrSchedule {
 public:
  WarmupInvSqrtLr(float peak_lr, int64_t warmup);
  float lr(int64_t t) const override;

 private:
  float peak_lr_;
  int64_t warmup_;
};

struct PlateauOptions {
  bool maximize = false;     // false: lower metric is better (loss); true: higher (accuracy, BLEU)
  float factor = 0.1f;       // new lr = max(lr * factor, min_lr)
  int patience = 10;         // evaluations without improvement tolerated before reducing
  double threshold = 1e-4;   // relative improvement needed: better than best * (1 -/+ threshold)
  int cooldown = 0;          // evaluations to wait after a reduction before counting again
  float min_lr = 0.0f;
};

// torch.optim.lr_scheduler.ReduceLROnPlateau (mode min/max, threshold_mode "rel"), except that
// the relative threshold also asks for a real improvement when the best metric is negative
// (PyTorch's best * (1 - threshold) accepts a slightly worse value there).
class ReduceOnPlateau {
 public:
  ReduceOnPlateau(float initial_lr, PlateauOptions options = {});
  // Feeds one validation metric; returns the learning rate to use from now on.
  float observe(double metric);
  float lr() const { return lr_; }
  double best() const { return best_; }
  int bad_evaluations() const { return bad_; }
  // Checkpoint state: "lr", "best", "bad", "cooldown_left".
  std::map<std::string, double> state_scalars() const;
  void load_state_scalars(const std::map<std::string, double>& scalars);

 private:
  bool improves(double metric) const;
  PlateauOptions options_;
  float lr_;
  double best_;
  int bad_ = 0;
  int cooldown_left_ = 0;
};

}  // namespace engram::optim
