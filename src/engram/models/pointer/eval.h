// Decoding and scoring a PointerNet: predictions for instances through the shared search
// (greedy or beam; the model's masks keep every output valid), the task's metrics, the table
// `engram pointer eval` prints, and the loaded model directory (LoadedModel) that reads one
// instance in the paper's line format.
//   sort: exact-sequence accuracy.
//   hull: exact-polygon accuracy (the same cyclic sequence as the true hull), area coverage
//         (area of the predicted polygon / the hull's, mean over the simple ones) and the FAIL
//         rate (the output is not a simple polygon).
//   tsp:  mean tour length, mean gap to the reference tour (Held-Karp for n <= 20, else the
//         2-opt + Or-opt heuristic; a file's own tours), % valid tours.
// Dims: n points of an instance, R output steps (positions, then the end step).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/core/weights_packed.h"
#include "engram/decode/options.h"
#include "engram/models/loaded_family.h"
#include "engram/models/pointer/model.h"
#include "engram/models/registry.h"
#include "engram/train/trainer.h"

namespace engram::models {

// Limit (docs/limits.md): at most this many views of an instance (PointerDecodeOptions::views).
constexpr int kMaxPointerViews = 64;

struct PointerDecodeOptions {
  int beam = 1;          // 1 = greedy
  int batch_size = 128;  // instances decoded together
  // Sampling (Bello et al. 2016): besides the greedy / beam output, `samples` outputs per
  // instance drawn from p^(1/temperature) (the masks keep each valid); the prediction is the
  // best of them all: TSP the shortest valid tour (the task's objective, as Bello et al.), sorting
  // and hull the highest log-probability (the model's own choice). 0 = off.
  int samples = 0;
  float temperature = 1.0f;
  uint64_t sample_seed = 1;
  // Views (hull and TSP; 1 = off, at most 64): each instance is also decoded as other readings of
  // the same points: views 1-7 map the points by the other symmetries of the unit square (the
  // mirror images in x and in y, the half turn, the mirror in the diagonal, the quarter turns, the
  // mirror in the other diagonal), views 8 on also read them in a shuffled order (drawn from the
  // view's number). Outputs are mapped back (a mirrored hull reversed to counter-clockwise) and
  // the kept prediction is the best by the sampling objective above. The model is not invariant to
  // these readings, so the views act as an ensemble of one model.
  int views = 1;
  bool attention = false;  // keep each step's pointer distribution
  // Few-row products (one instance, or the beams of one) on this packed copy of the weights
  // (core::PackedWeights; the same fp32 values, read as contiguous streams); nullptr = off.
  const core::PackedWeights* packed_weights = nullptr;
};

// The decode options the family honours (decode/options.h) with its defaults, and the
// PointerDecodeOptions they give.
const decode::OptionSet& pointer_option_set();
PointerDecodeOptions pointer_decode_options(const decode::DecodeOptions& o);

struct PointerPrediction {
  std::vector<int> output;       // 0-based positions (the end class not included)
  bool finished = false;         // ended with the end class (always, with the task's rules)
  double log_prob = 0;
  std::vector<float> attention;  // [R, n] with PointerDecodeOptions::attention, R = output + end
};

// One prediction per instance, in order, through decode::run_batched (chunks of batch_size
// instances sorted by size; each sample k a run of its own, drawn with the k-th seed from
// sample_seed), by one model or an ensemble (ModelSet: the members of one task decoded as one
// decode::EnsembleStepModel, each step the log of their mean probability
// of the next position; attention is their mean), on bf16 weights where the set has them (which
// take precedence over options.packed_weights).
std::vector<PointerPrediction> predict_pointer(const ModelSet<PointerNet>& models,
                                               std::span<const data::tasks::PointerInstance> instances,
                                               const PointerDecodeOptions& options = {});

// View v of an instance (PointerDecodeOptions::views; v in [0, 64), 0 = the instance itself): its
// points mapped by symmetry v % 8 of the unit square and, from v = 8 on, read in a shuffled order
// drawn from v. `order` receives it: view position j holds point order[j]. No target.
data::tasks::PointerInstance pointer_view(const data::tasks::PointerInstance& in, int v, std::vector<int>& order);
// A prediction for view v, in the instance's own terms: positions through `order`, a mirrored hull
// reversed to counter-clockwise, the output rotated to the task's start (hull: its lowest index;
// tsp: point 0); attention rows and columns follow. Errors: a position outside the points.
void pointer_view_back(PointerTask task, int v, std::span<const int> order, PointerPrediction& p);

// The task's metrics over predictions of `instances` (whose targets are the labels / references).
struct PointerScore {
  PointerTask task = PointerTask::kSort;
  int64_t instances = 0;
  double exact = 0;        // sort: exact sequences; hull: exact polygons (same cycle)
  double coverage = 0;     // hull: mean area coverage of the simple polygons (NaN if none)
  double fail = 0;         // hull: share of outputs that are not simple polygons
  // hull: share of outputs whose first point is not the true hull's first vertex (its lowest
  // index); under the task's rules such an output cannot be the hull.
  double wrong_start = 0;
  double length = 0;       // tsp: mean tour length of the valid predicted tours
  double reference = 0;    // tsp: mean length of the reference tours
  double gap = 0;          // tsp: mean of length / reference - 1 over the valid tours
  double valid = 0;        // share of valid outputs (tsp: tours; sort: permutations; hull: simple polygons)
};
PointerScore score_pointer(PointerTask task, std::span<const data::tasks::PointerInstance> instances,
                           std::span<const PointerPrediction> predictions);
// The score as validation metrics (fractions, not percentages): sort {acc}; hull {acc, coverage,
// fail}; tsp {length, reference, gap, valid}.
train::Metrics pointer_metrics(const PointerScore& s);

// `engram pointer eval`: generated test sets per n, or a file's instances grouped by n.
struct PointerEvalOptions {
  std::vector<int> n = {5, 10, 20};  // generated sets: points per instance
  int64_t instances = 1000;          // per n
  uint64_t seed = 12345;             // test stream (independent of the training streams)
  int tsp_starts = 8;                // tsp references above n = 20: heuristic starts
  std::string file;                  // instead: instances of a file in the paper's format
  PointerDecodeOptions decode;
};
struct PointerEvalRow {
  int n = 0;
  std::string reference;  // tsp: "Held-Karp" | "heuristic" | "file"; else ""
  PointerScore score;
};
// The test set of one n (TSP references: Held-Karp up to 20, the heuristic above).
std::vector<data::tasks::PointerInstance> pointer_test_set(PointerTask task, int n, int64_t instances, uint64_t seed,
                                                           int tsp_starts);
std::vector<PointerEvalRow> evaluate_pointer(const ModelSet<PointerNet>& models, const PointerEvalOptions& options);
// The rows as a Markdown table with the task's columns (percentages with one decimal).
std::string pointer_eval_table(PointerTask task, std::span<const PointerEvalRow> rows);

// A loaded "pointer" model directory.
struct LoadedPointerModel : LoadedFamily<LoadedPointerModel, PointerNet> {
  // The weights' packed copy (made at load), for the one-instance decoding of run_line and serve
  // (fp32: the few-row products of this model); it does not follow later changes to params().
  std::unique_ptr<core::PackedWeights> packed;

  // One instance in the paper's line format ("x1 y1 x2 y2 ..." or "v1 v2 ..." for sorting,
  // optionally followed by "output ...", which is ignored) -> the predicted 1-based indices
  // (greedy), closed for hull and TSP (the first index repeated at the end) as the paper's files.
  std::string run_line(const std::string& line) override;
  std::string input_help() const override;
  // POST /v1/pointer (serve.cc, docs/serve.md): {"points": [v, ...] (sorting) or [[x, y], ...],
  // "views"?: 1 ... the server's --max-beam (hull, TSP: PointerDecodeOptions::views)} -> {"output":
  // 0-based indices into the points (greedy; hull and TSP closed as the paper's files), "log_prob",
  // "attention": [[p over the points] per output step, the end step last]}.
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // Members: pointer models of the same task and input width (the same output space: the input
  // positions and the end).
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};

// The family's loader (models::load_model calls it); errors name a wrong model kind.
std::unique_ptr<LoadedPointerModel> load_pointer_model(const std::filesystem::path& dir);

}  // namespace engram::models
