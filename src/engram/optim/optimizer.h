// Optimizer: the interface every update rule implements. An optimizer is bound to one ParamStore
// and updates its flat value buffer from its flat gradient buffer; its per-parameter state lives
// in flat "slots" laid out like the store (allocated once at construction, never per step).
// State is exported for checkpoints as views named "<slot>/<parameter name>" plus scalars.
// A parameter may have a learning-rate multiplier (set_lr_scale): it then updates at lr() * scale
// with the same rule, so a schedule moves every parameter's rate by the same factor. Multipliers
// come from the run's config (OptimizerConfig::param_lr) and are not checkpoint state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engram/nn/param_store.h"

namespace engram::optim {

// A named view of one state buffer with its parameter's shape. T is float (import: write through
// `data`) or const float (export).
template <class T>
struct NamedBuffer {
  std::string name;  // "<slot>/<parameter name>", e.g. "exp_avg/encoder/gru_0/w_ih"
  core::Shape shape;
  T* data = nullptr;
};
using StateTensor = NamedBuffer<float>;
using ConstStateTensor = NamedBuffer<const float>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter from its gradient. Gradients are read, not cleared. Errors if
  // parameters were added to the store after this optimizer was created.
  void step();

  float lr() const { return lr_; }
  void set_lr(float lr);
  // Number of step() calls so far (restored from checkpoints).
  int64_t steps() const { return step_; }
  // Parameter `id` updates at lr() * scale from the next step on (default 1). Errors on an id
  // outside the store or a scale that is negative or not finite.
  void set_lr_scale(nn::ParamId id, float scale);
  float lr_scale(nn::ParamId id) const;
  // "sgd", "adam", "adagrad", "rmsprop": recorded in checkpoints and checked on load.
  virtual std::string_view kind() const = 0;

  // ---- checkpoint state
  // Every state buffer, one per (slot, parameter), in parameter order. Like step(), errors if
  // the store changed size since construction.
  std::vector<StateTensor> state_tensors();
  std::vector<ConstStateTensor> state_tensors() const;
  // Scalar state: "step" and "lr".
  std::map<std::string, double> state_scalars() const;
  // Restores what state_scalars() exported; "step" is required, "lr" optional, others ignored.
  void load_state_scalars(const std::map<std::string, double>& scalars);

 protected:
  // `slots`: names of the per-parameter state buffers this rule keeps (zero-initialised).
  Optimizer(nn::ParamStore& store, float lr, std::vector<std::string> slots);
  // One update of n flat values at the rate step_lr(); steps() already counts this step
  // (1-based, as in PyTorch). step() calls it once per run of parameters with one multiplier;
  // slot(k) points at the state of w[0] in that call.
  virtual void update(float* w, const float* g, int64_t n) = 0;
  float* slot(int k) { return slots_[k].data() + run_offset_; }
  // The rate of the values update() is called for: lr() times their parameters' multiplier.
  float step_lr() const { return run_lr_; }
  void check_store() const;
  // Fills a slot with a value (e.g. Adagrad's initial accumulator).
  void fill_slot(int k, float v);

 private:
  nn::ParamStore& store_;
  float lr_;
  int64_t step_ = 0;
  int64_t numel_;
  std::vector<std::string> slot_names_;
  std::vector<std::vector<float>> slots_;  // each [store.numel()], laid out like the store
  // Consecutive parameters with one multiplier, in store order (empty while every scale is 1).
  struct Run {
    int64_t begin, n;
    float scale;
  };
  std::vector<float> scales_;  // [store.count()] at construction
  std::vector<Run> runs_;
  int64_t run_offset_ = 0;     // the current update() call's first value
  float run_lr_ = 0;           // the current update() call's rate
};

}  // namespace engram::optim
