// The NTM paper's tasks on the shared Trainer: the run configuration (model + task + training as
// in the paper: RMSProp with momentum 0.9, lr 1e-4, gradients clipped element-wise to +-10,
// batch size option) and the TrainTask adapter with the NaN guard (training speed:
// bench/ntm_speed.cc).
// Run directory (trainer.run_dir): last/, best/ (model directories), metrics.jsonl.
// Dims: B batch, T steps.
#pragma once

#include <cstdint>
#include <string>

#include "engram/models/ntm/model.h"
#include "engram/train/trainer.h"

namespace engram::models {

// An optional second validation set outside the training range. Repeat copy's generalisation
// peaks soon after the task is learnt and then decays (bench/results_ntm.md), so the best
// checkpoint on the training distribution is the wrong one to keep; with this set, best/ is
// chosen (and patience counted) on it instead. Each sequence draws its length (recall: items)
// from [min_len, max_len] and its repeat count from [min_repeat, max_repeat]; 0 = the training
// bound. The repeat channel keeps the training normalisation, as in evaluation.
struct NtmExtrapolationSet {
  int sequences = 0;  // 0 = no extrapolation set
  int min_len = 0, max_len = 0, min_repeat = 0, max_repeat = 0;
  uint64_t seed = 4343;

  template <class V>
  void visit(V& v) {
    v("sequences", sequences, "sequences in the set (0 = none; best/ is then chosen on the training distribution)");
    v("min_len", min_len, "shortest length / fewest items (0 = training min_len)");
    v("max_len", max_len, "longest length / most items (0 = training max_len)");
    v("min_repeat", min_repeat, "repeat copy: fewest repeats (0 = training min_repeat)");
    v("max_repeat", max_repeat, "repeat copy: most repeats (0 = training max_repeat)");
    v("seed", seed, "seed of the set");
  }
};

// data: how the generated sequences are batched and validated.
struct NtmDataConfig {
  int batch_size = 1;                 // sequences per update (the paper: 1)
  int64_t batches_per_epoch = 1000;   // an "epoch" of generated data: updates between validations
  int valid_sequences = 200;          // fixed validation set, drawn from the training distribution
  uint64_t valid_seed = 4242;
  NtmExtrapolationSet extrapolation;  // optional: selects best/ when set

  template <class V>
  void visit(V& v) {
    v("batch_size", batch_size, "sequences per update");
    v("batches_per_epoch", batches_per_epoch, "updates between validations (an epoch of generated data)");
    v("valid_sequences", valid_sequences, "validation sequences (training distribution, fixed seed)");
    v("valid_seed", valid_seed, "seed of the validation sequences");
    v("extrapolation", extrapolation, "validation outside the training range; chooses best/ when set");
  }
};

// An NTM (or LSTM baseline) run (`engram train` with `model: ntm`). The task the sequences come
// from is part of the model config (ntm.task): it fixes the model's input and output widths and
// is saved with the checkpoint.
struct NtmTrainConfig {
  std::string model = "ntm";
  models::NtmModelConfig ntm;
  NtmDataConfig data;
  train::TrainerConfig train;

  template <class V>
  void visit(V& v) {
    v("model", model, "model family (ntm)");
    v("ntm", ntm, "architecture (ntm | lstm), its settings and the task");
    v("data", data, "batches and validation sets");
    v("train", train, "training loop");
  }
};

// The paper's recipe for a task and architecture: NTM with an LSTM controller of 100 units,
// 128 x 20 memory, one read and one write head, Graves's RMSProp (momentum 0.9, alpha 0.95,
// centered, eps 1e-4 under the root) at lr 1e-4; the
// LSTM baseline 3 x 256 (repeat copy 3 x 512) at lr 3e-5 (recall 1e-4); clipping at +-10.
NtmTrainConfig default_ntm_train_config(models::NtmTaskKind task, models::NtmArchitecture arch);

// A run config (model: ntm): the recipe of its ntm.task.task and ntm.architecture, then the file,
// then each --set (models::parse_run_config).
NtmTrainConfig read_ntm_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets);

// Trains (resuming from train.run_dir/last if present); prints progress. Returns the summary.
train::TrainSummary train_ntm(const NtmTrainConfig& cfg);
// The training task of `cfg` (no lock, nothing written); prints the model, the task and the run
// directory.
std::unique_ptr<train::TrainTask> make_ntm_task(const NtmTrainConfig& cfg);

}  // namespace engram::models
