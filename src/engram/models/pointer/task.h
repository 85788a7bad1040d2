// Training a PointerNet on generated sorting / convex hull / TSP instances: the run config
// (`engram train CONFIG.yaml` with `model: pointer`) and the train::TrainTask adapter —
// batches of generated instances with exact labels (data/tasks/pointer_tasks.h, tsp.h), either
// fresh each epoch (train_instances 0: instance i of epoch e is a pure function of (seed, e, i))
// or a fixed set drawn once and shuffled per epoch; teacher-forced NLL
// (`data.objective: supervised`), or for TSP, without labels, REINFORCE with a greedy-rollout
// baseline (`reinforce`, reinforce.h); validation by greedy decoding of a fixed set with the
// task's metrics (eval.h).
// Run directory: RUN/train.yaml (the effective config) and the Trainer's RUN/last/, RUN/best/,
// RUN/metrics.jsonl; with reinforce also RUN/baseline.safetensors (copied into each checkpoint).
// Dims: B batch, n points per instance.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/models/pointer/model.h"
#include "engram/models/pointer/reinforce.h"
#include "engram/train/trainer.h"

namespace engram::models {

enum class PointerObjective { kSupervised, kReinforce };

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::PointerObjective> {
  static constexpr std::pair<engram::models::PointerObjective, const char*> items[] = {
      {engram::models::PointerObjective::kSupervised, "supervised"},
      {engram::models::PointerObjective::kReinforce, "reinforce"}};
};

namespace engram::models {

struct PointerDataConfig {
  PointerTask task = PointerTask::kSort;
  int min_n = 5;                  // n drawn uniformly from [min_n, max_n] per instance
  int max_n = 10;
  int64_t train_instances = 0;    // a fixed training set of this many (0 = fresh instances every epoch)
  bool batch_by_n = false;        // fresh instances: one n per batch (drawn per batch), so no padding
  int batch_size = 128;
  int64_t batches_per_epoch = 500;  // with train_instances 0 (else train_instances / batch_size)
  int64_t valid_instances = 1000;   // fixed validation set, same n range
  uint64_t seed = 1;              // training instance stream
  uint64_t valid_seed = 424242;   // validation instance stream
  int tsp_exact_max_n = 10;       // TSP labels: Held-Karp up to this n (<= 20), 2-opt + Or-opt above
  int tsp_starts = 8;             // heuristic starts
  int valid_beam = 1;             // validation decoding beam (1 = greedy)
  PointerObjective objective = PointerObjective::kSupervised;
  int64_t baseline_instances = 1000;  // reinforce: the baseline's evaluation set
  uint64_t baseline_seed = 777;       // reinforce: its stream (+1 per replacement)

  template <class V>
  void visit(V& v) {
    v("task", task, "sort | hull | tsp");
    v("min_n", min_n, "fewest points (numbers) per instance");
    v("max_n", max_n, "most points per instance (n uniform in [min_n, max_n])");
    v("train_instances", train_instances, "fixed training set size (0 = fresh instances every epoch)");
    v("batch_by_n", batch_by_n,
      "fresh instances: every instance of a batch has the batch's n (uniform in [min_n, max_n], drawn per batch), "
      "so a batch is not padded to its largest n");
    v("batch_size", batch_size, "instances per update");
    v("batches_per_epoch", batches_per_epoch, "updates per epoch with fresh instances (train_instances 0)");
    v("valid_instances", valid_instances, "validation instances (fixed seed)");
    v("seed", seed, "seed of the training instances");
    v("valid_seed", valid_seed, "seed of the validation instances");
    v("tsp_exact_max_n", tsp_exact_max_n, "tsp: Held-Karp labels up to this n (<= 20), the heuristic above");
    v("tsp_starts", tsp_starts, "tsp: starts of the 2-opt + Or-opt heuristic");
    v("valid_beam", valid_beam, "validation decoding beam (1 = greedy)");
    v("objective", objective,
      "supervised (teacher-forced NLL of the labels) | reinforce (tsp: REINFORCE with a greedy-rollout baseline, "
      "no labels; Kool et al. 2019)");
    v("baseline_instances", baseline_instances,
      "reinforce: instances on which the policy must beat the baseline (paired t-test) to replace it");
    v("baseline_seed", baseline_seed, "reinforce: seed of those instances");
  }
  data::tasks::PointerTaskOptions task_options() const;
  // Errors name the first invalid field.
  void validate() const;
};

struct PointerTrainConfig {
  std::string model = PointerNet::kName;
  PointerConfig pointer;  // pointer.task and input_dim are set from data.task
  PointerDataConfig data;
  train::TrainerConfig train;

  template <class V>
  void visit(V& v) {
    v("model", model, "model family (pointer)");
    v("pointer", pointer, "the model");
    v("data", data, "generated instances and batching");
    v("train", train, "training loop");
  }
};

// A run config (model: pointer): the defaults, the file, then each --set (models::parse_run_config);
// pointer.task follows data.task.
PointerTrainConfig read_pointer_config(const YAML::Node& node, const std::string& source,
                                       const std::vector<std::string>& sets);

// Instances first .. first + count - 1 of stream `seed`, generated over the BLAS thread team.
std::vector<data::tasks::PointerInstance> make_pointer_instances(const data::tasks::PointerTaskOptions& options,
                                                                 uint64_t seed, uint64_t first, int64_t count);

// The fresh training instances of batch `index` of epoch `epoch` (data.train_instances 0): instance i
// of the stream is a pure function of (d.seed, i), i = (epoch * batches_per_epoch + index) *
// batch_size + k; with d.batch_by_n every instance has the batch's n, drawn from a stream of its own
// (uniform in [min_n, max_n]). `labels` false: no targets (reinforce).
std::vector<data::tasks::PointerInstance> fresh_pointer_batch(const PointerDataConfig& d, bool labels, int epoch,
                                                               int64_t batches_per_epoch, int64_t index);

class PointerTrainTask final : public train::TrainTask {
 public:
  // Builds the model and the validation (and fixed training) set; `log` receives one-line notes.
  explicit PointerTrainTask(const PointerTrainConfig& cfg, std::FILE* log = stdout);

  nn::ParamStore& params() override { return model_->params(); }
  std::string model_name() const override { return PointerNet::kName; }
  YAML::Node model_config() const override { return model_->config(); }
  int64_t batches_per_epoch() const override { return batches_; }
  void begin_epoch(int epoch, uint64_t seed) override;
  train::BatchResult train_batch(int64_t index) override;  // loss per instance (NLL summed over its steps)
  bool shardable() const override { return true; }
  // {"loss": teacher-forced NLL per instance, and the task's metrics (eval.h): sort "acc"; hull
  // "acc", "coverage", "fail"; tsp "length", "gap", "valid"}.
  train::Metrics validate() override;
  std::string primary_metric() const override;     // sort, hull: "acc"; tsp: "gap"
  bool higher_is_better() const override;
  bool reports_perplexity() const override { return false; }
  // reinforce: the baseline's file in every checkpoint, its replacement count as trainer state,
  // and the replacement test after each validation.
  std::vector<std::filesystem::path> checkpoint_files() const override;
  nlohmann::json extra_state() const override;
  void load_extra_state(const nlohmann::json& state) override;
  void after_validation(const train::Metrics& metrics) override;

  const PointerNet& model() const { return *model_; }
  const PointerTrainConfig& config() const { return cfg_; }

 private:
  PointerTrainConfig cfg_;
  std::unique_ptr<PointerNet> model_;
  std::unique_ptr<PointerReinforce> reinforce_;  // objective reinforce
  std::FILE* log_ = nullptr;
  std::vector<data::tasks::PointerInstance> train_, valid_;
  std::vector<int64_t> order_;  // fixed set: this epoch's order
  int64_t batches_ = 0;
  int epoch_ = 0;
  uint64_t seed_ = 1;
  core::Graph graph_;
};

}  // namespace engram::models
