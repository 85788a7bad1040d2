// Label-free training of a TSP PointerNet: REINFORCE with a greedy-rollout baseline (Kool, van
// Hoof & Welling 2019, "Attention, Learn to Solve Routing Problems!", section 4). Per batch, one
// tour per instance is sampled from the policy (the model's masks keep it valid), L is its
// length and the baseline b is the length of the greedy tour of a frozen copy of the policy:
//   loss = (1 / B) Σ_b (L_b - b_b) log p(tour_b),
// whose gradient is the REINFORCE estimate of ∇ E[L]. After each validation the policy replaces
// the baseline when its greedy tours on an evaluation set of `baseline_instances` instances are
// shorter, by a one-sided paired t-test at 5% (t < -1.645, the normal quantile: the sets are
// large); each replacement draws a fresh evaluation set, as the paper does.
// The baseline's weights are a file of the run directory (baseline.safetensors) that every
// checkpoint carries (TrainTask::checkpoint_files), and the replacement count is trainer state,
// so a resumed run goes on with the baseline it had.
// Dims: B instances of a batch, T output steps, V = S + 1 classes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/core/rng.h"
#include "engram/data/tasks/pointer_tasks.h"
#include "engram/models/pointer/model.h"

namespace engram::models {

class PointerReinforce {
 public:
  // The baseline starts as a copy of `policy`; the evaluation sets are instances of `options`
  // (labels are not needed) drawn from stream `seed`.
  PointerReinforce(const PointerNet& policy, const data::tasks::PointerTaskOptions& options, int64_t eval_instances,
                   uint64_t seed, std::filesystem::path file);

  struct Batch {
    Var loss;                // scalar, to backpropagate
    double sampled = 0;      // Σ of the sampled tours' lengths
    double baseline = 0;     // Σ of the baseline's greedy tours' lengths
    std::vector<std::vector<int>> tours;  // the sampled tours (0-based positions)
    std::vector<double> advantage;        // (L_b - b_b) / total, each instance's weight
  };
  // The loss of `instances` in `g` (with gradients into the policy's parameters), each instance's
  // term divided by `total` (the whole batch's size, of which `instances` may be a shard).
  Batch loss(Graph& g, const PointerNet& policy, std::span<const data::tasks::PointerInstance> instances,
             int64_t total, core::Rng& rng);

  struct Update {
    double policy = 0, baseline = 0;  // mean greedy tour length on the evaluation set
    double t = 0;                     // paired t statistic of policy - baseline
    bool replaced = false;
  };
  // Compares the policy with the baseline on the evaluation set; replaces the baseline (and
  // rewrites the file) when the policy is better as said above.
  Update maybe_replace(const PointerNet& policy);

  int replacements() const { return replacements_; }
  // Restores the state of a checkpoint: `replacements` and the baseline weights from the
  // checkpoint's copy of the file (`dir` / file name), which is also written back to the run's file.
  void restore(int replacements, const std::filesystem::path& dir);
  const std::filesystem::path& file() const { return file_; }

  // The lengths of the greedy tours of `model` on `instances`, in order.
  static std::vector<double> greedy_lengths(const PointerNet& model,
                                            std::span<const data::tasks::PointerInstance> instances);
  // The same on the caller's (grad-disabled) graph, reset as the search goes.
  static std::vector<double> greedy_lengths(core::Graph& g, const PointerNet& model,
                                            std::span<const data::tasks::PointerInstance> instances);

 private:
  void draw_eval_set();
  void write_file() const;

  data::tasks::PointerTaskOptions options_;
  int64_t eval_instances_;
  uint64_t seed_;
  std::filesystem::path file_;
  std::unique_ptr<PointerNet> baseline_;
  std::vector<data::tasks::PointerInstance> eval_set_;
  int replacements_ = 0;
  core::Graph sample_graph_{false};
};

}  // namespace engram::models
