// Optimizer and schedule factories.
#include "engram/optim/factory.h"

#include "engram/core/error.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace engram::optim {

namespace {

std::unique_ptr<Optimizer> make_rule(nn::ParamStore& store, const OptimizerConfig& c) {
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

void check_param_lr(const OptimizerConfig& c) {
  for (size_t i = 0; i < c.param_lr.size(); ++i) {
    const ParamLrConfig& g = c.param_lr[i];
    ENGRAM_CHECK(!g.params.empty() && g.params.front() != '/' && g.params.back() != '/',
                 "optimizer.param_lr[{}]: params '{}' must be a parameter name or module path (no leading or "
                 "trailing '/')", i, g.params);
    ENGRAM_CHECK(std::isfinite(g.lr) && g.lr >= 0, "optimizer.param_lr[{}] ({}): lr must be finite and >= 0, got {}",
                 i, g.params, g.lr);
    ENGRAM_CHECK(c.lr > 0, "optimizer.param_lr needs optimizer.lr > 0 (the groups' rates are multiples of it), got {}",
                 c.lr);
  }
}

bool names(const std::string& group, const std::string& param) {
  return param == group || (param.size() > group.size() && param.compare(0, group.size(), group) == 0 &&
                            param[group.size()] == '/');
}

// "cell, classifier, embedding": the store's top-level module paths, for an error message.
std::string top_paths(const nn::ParamStore& store) {
  std::vector<std::string> tops;
  for (nn::ParamId id = 0; id < store.count(); ++id) {
    const std::string& n = store.name(id);
    std::string top = n.substr(0, n.find('/'));
    if (std::find(tops.begin(), tops.end(), top) == tops.end()) tops.push_back(std::move(top));
  }
  std::sort(tops.begin(), tops.end());
  return tops.empty() ? "none" : fmt::format("{}", fmt::join(tops, ", "));
}

}  // namespace

void check_optimizer_config(const OptimizerConfig& c) {
  nn::ParamStore probe;
  probe.add("probe", {1});
  OptimizerConfig rule = c;
  rule.param_lr.clear();
  make_rule(probe, rule);
  check_param_lr(c);
}

std::unique_ptr<Optimizer> make_optimizer(nn::ParamStore& store, const OptimizerConfig& c) {
  std::unique_ptr<Optimizer> opt = make_rule(store, c);
  check_param_lr(c);
  std::vector<int> group_of(static_cast<size_t>(store.count()), -1);
  for (size_t i = 0; i < c.param_lr.size(); ++i) {
    const ParamLrConfig& g = c.param_lr[i];
    bool any = false;
    for (nn::ParamId id = 0; id < store.count(); ++id) {
      if (!names(g.params, store.name(id))) continue;
      int& owner = group_of[static_cast<size_t>(id)];
      ENGRAM_CHECK(owner < 0, "optimizer.param_lr[{}] ({}): parameter '{}' is already in param_lr[{}] ({})", i,
                   g.params, store.name(id), owner, c.param_lr[static_cast<size_t>(owner)].params);
      owner = static_cast<int>(i);
      opt->set_lr_scale(id, g.lr / c.lr);
      any = true;
    }
    ENGRAM_CHECK(any, "optimizer.param_lr[{}]: '{}' names no parameter of the model (its top-level paths: {})", i,
                 g.params, top_paths(store));
  }
  return opt;
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
