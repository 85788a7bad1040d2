// Optimizer and schedule factories.
#include "engram/optim/factory.h"

#include "engram/core/error.h"

namespace engram::optim {

std::unique_ptr<Optimizer> make_optimizer(nn::ParamStore& store, const OptimizerConfig& c) {
  if (c.name == "sgd")
    return std::make_unique<Sgd>(
        store, SgdOptions{.lr = c.lr, .momentum = c.momentum, .nesterov = c.nesterov, .weight_decay = c.weight_decay});
  if (c.name == "adam")
    return std::make_unique<Adam>(store, AdamOptions{.lr = c.lr,
                                                     .beta1 = c.beta1,
                                                     .beta2 = c.beta2,
                                                     .eps = c.eps,
                                                     .weight_decay = c.weight_decay,
                                                     .decoupled_weight_decay = c.decoupled_weight_decay});
  if (c.name == "adagrad")
    return std::make_unique<Adagrad>(store, AdagradOptions{.lr = c.lr, .eps = c.eps, .weight_decay = c.weight_decay});
  if (c.name == "rmsprop")
    return std::make_unique<RmsProp>(store, RmspropOptions{.lr = c.lr,
                                                           .alpha = c.alpha,
                                                           .eps = c.eps,
                                                           .momentum = c.momentum,
                                                           .centered = c.centered,
                                                           .weight_decay = c.weight_decay,
                                                           .eps_in_root = c.eps_in_root});
  throw Error(fmt::format("unknown optimizer '{}' (expected sgd|adam|adagrad|rmsprop)", c.name));
}

std::unique_ptr<LrSchedule> make_schedule(const ScheduleConfig& c, float base_lr) {
  if (c.name == "constant") return std::make_unique<ConstantLr>(base_lr);
  if (c.name == "step") return std::make_unique<StepDecayLr>(base_lr, c.every, c.gamma);
  if (c.name == "warmup_inv_sqrt") return std::make_unique<WarmupInvSqrtLr>(base_lr, c.warmup);
  ENGRAM_CHECK(c.name != "plateau", "the plateau schedule reacts to validation metrics: build it with make_plateau");
  throw Error(fmt::format("unknown lr schedule '{}' (expected constant|step|warmup_inv_sqrt|plateau)", c.name));
}

ReduceOnPlateau make_plateau(const ScheduleConfig& c, float base_lr) {
  ENGRAM_CHECK(c.is_plateau(), "make_plateau needs schedule name 'plateau', got '{}'", c.name);
  return ReduceOnPlateau(base_lr, {.maximize = c.maximize,
                                   .factor = c.factor,
                                   .patience = c.patience,
                                   .threshold = c.threshold,
                                   .cooldown = c.cooldown,
                                   .min_lr = c.min_lr});
}

}  // namespace engram::optim
