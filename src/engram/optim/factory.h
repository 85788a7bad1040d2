// Typed configs for the optimizer and the learning-rate schedule (one visit() declaration feeds
// YAML and --set through io/config.h) and the factories that build them from a config.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engram/optim/optimizers.h"
#include "engram/optim/schedule.h"

namespace engram::optim {

// One parameter group's own learning rate: every parameter named `params` or under the path
// `params/` updates at `lr` in place of OptimizerConfig::lr, with the same rule (a schedule and a
// phase's rate scale it by the same factor as the base rate).
struct ParamLrConfig {
  std::string params;  // a parameter name or a module path, e.g. "embedding" (= embedding/weight)
  float lr = 0.0f;

  template <class V>
  void visit(V& v) {
    v("params", params, "a parameter name or a module path (its parameters)");
    v("lr", lr, "their learning rate in place of optimizer.lr");
  }
};

struct OptimizerConfig {
  std::string name = "adam";  // sgd|adam|adagrad|rmsprop
  float lr = 1e-3f;
  float weight_decay = 0.0f;
  bool decoupled_weight_decay = false;  // adam only (AdamW)
  float momentum = 0.0f;                // sgd, rmsprop
  bool nesterov = false;                // sgd
  float beta1 = 0.9f, beta2 = 0.999f;   // adam
  float alpha = 0.99f;                  // rmsprop
  bool centered = false;                // rmsprop
  bool eps_in_root = false;             // rmsprop
  float eps = 1e-8f;                    // adam, adagrad, rmsprop
  std::vector<ParamLrConfig> param_lr{};  // parameter groups with their own rate (none: lr for all)

  template <class V>
  void visit(V& v) {
    v("name", name, "sgd|adam|adagrad|rmsprop");
    v("lr", lr, "learning rate (the schedule's base)");
    v("weight_decay", weight_decay, "L2 penalty (decoupled for adam with decoupled_weight_decay)");
    v("decoupled_weight_decay", decoupled_weight_decay, "adam: AdamW-style decay");
    v("momentum", momentum, "sgd, rmsprop: momentum");
    v("nesterov", nesterov, "sgd: Nesterov momentum");
    v("beta1", beta1, "adam: first-moment decay");
    v("beta2", beta2, "adam: second-moment decay");
    v("alpha", alpha, "rmsprop: squared-gradient smoothing");
    v("centered", centered, "rmsprop: divide by the gradient variance");
    v("eps_in_root", eps_in_root, "rmsprop: sqrt(v + eps) as Graves (2013), not sqrt(v) + eps");
    v("eps", eps, "adam, adagrad, rmsprop: denominator epsilon");
    v("param_lr", param_lr, "parameter groups with their own learning rate: [{params: embedding, lr: 0.1}]");
  }
};

// The optimizer `cfg.name` over `store` with each param_lr group's multiplier lr / cfg.lr set;
// errors on an unknown name, invalid options, or a group that names no parameter of `store` or
// a parameter another group already named.
std::unique_ptr<Optimizer> make_optimizer(nn::ParamStore& store, const OptimizerConfig& cfg);
// The checks of cfg that need no parameters (make_optimizer makes them too): its options and the
// param_lr groups' names and rates.
void check_optimizer_config(const OptimizerConfig& cfg);

struct ScheduleConfig {
  std::string name = "constant";  // constant|step|warmup_inv_sqrt|plateau
  int64_t every = 1;              // step: decay every N updates (or epochs)
  float gamma = 0.5f;             // step: decay factor
  int64_t warmup = 4000;          // warmup_inv_sqrt: warmup updates
  float factor = 0.5f;            // plateau
  int patience = 2;               // plateau
  int cooldown = 0;               // plateau
  double threshold = 1e-4;        // plateau
  float min_lr = 0.0f;            // plateau
  bool maximize = false;          // plateau: higher metric is better

  template <class V>
  void visit(V& v) {
    v("name", name, "constant|step|warmup_inv_sqrt|plateau");
    v("every", every, "step: decay every N updates/epochs");
    v("gamma", gamma, "step: multiply the lr by gamma");
    v("warmup", warmup, "warmup_inv_sqrt: linear warmup updates");
    v("factor", factor, "plateau: multiply the lr by factor");
    v("patience", patience, "plateau: evaluations without improvement before reducing");
    v("cooldown", cooldown, "plateau: evaluations to wait after a reduction");
    v("threshold", threshold, "plateau: relative improvement that counts");
    v("min_lr", min_lr, "plateau: lower bound of the lr");
    v("maximize", maximize, "plateau: the metric is better when higher");
  }
  bool is_plateau() const { return name == "plateau"; }
};

// A function-of-t schedule (constant|step|warmup_inv_sqrt) peaking at / starting from base_lr.
// Errors for "plateau" (see make_plateau) and unknown names.
std::unique_ptr<LrSchedule> make_schedule(const ScheduleConfig& cfg, float base_lr);
ReduceOnPlateau make_plateau(const ScheduleConfig& cfg, float base_lr);

}  // namespace engram::optim
