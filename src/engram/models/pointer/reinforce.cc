// PointerReinforce: sampled tours, the greedy-rollout baseline and its replacement test.
// Dims: B instances, T output steps, V classes, R the rows that carry a target.
#include "engram/models/pointer/reinforce.h"

#include <cmath>

#include "engram/core/ops.h"
#include "engram/data/tasks/tsp.h"
#include "engram/decode/search.h"
#include "engram/io/checkpoint.h"
#include "engram/train/distributed.h"

namespace engram::models {

namespace tasks = data::tasks;

namespace {

// Room for every position and the end class (as predict_pointer).
decode::SearchOptions tour_search(const decode::SourceBatch& src) {
  decode::SearchOptions so;
  so.max_length_ratio = 1.0f;
  so.max_length_offset = 1;
  so.max_length = src.steps + 1;
  return so;
}

double length_of(const tasks::PointerInstance& in, const decode::Hypothesis& h) {
  const std::vector<int> tour = pointer_positions(h.ids);
  ENGRAM_CHECK(tasks::is_valid_tour(tour, in.size()), "pointer reinforce: a decoded tour of {} cities is not valid",
               in.size());
  return tasks::tour_length(in.points, tour);
}

}  // namespace

PointerReinforce::PointerReinforce(const PointerNet& policy, const tasks::PointerTaskOptions& options,
                                   int64_t eval_instances, uint64_t seed, std::filesystem::path file)
    : options_(options), eval_instances_(eval_instances), seed_(seed), file_(std::move(file)) {
  ENGRAM_CHECK(options_.task == PointerTask::kTsp, "pointer reinforce: only the tsp task has a tour length to learn from");
  ENGRAM_CHECK(eval_instances_ >= 2, "pointer reinforce: {} baseline evaluation instances (need >= 2)", eval_instances_);
  options_.labels = false;
  core::Rng unused(1);
  baseline_ = std::make_unique<PointerNet>(policy.cfg(), unused);
  baseline_->params().copy_values_from(policy.params());
  draw_eval_set();
  write_file();
}

void PointerReinforce::draw_eval_set() {
  eval_set_.clear();
  // A fresh stream per replacement: seed, then seed + 1, ...
  for (int64_t i = 0; i < eval_instances_; ++i)
    eval_set_.push_back(tasks::make_pointer_instance(options_, seed_ + static_cast<uint64_t>(replacements_),
                                                     static_cast<uint64_t>(i)));
}

void PointerReinforce::write_file() const {
  if (file_.empty() || !train::world().root()) return;  // rank 0 writes the run's files
  io::save_params_file(file_, baseline_->params(), {{"replacements", std::to_string(replacements_)}});
}

void PointerReinforce::restore(int replacements, const std::filesystem::path& dir) {
  ENGRAM_CHECK(replacements >= 0, "pointer reinforce: {} baseline replacements in the checkpoint", replacements);
  io::load_params_file(dir / file_.filename(), baseline_->params());  // all checks before any write
  replacements_ = replacements;
  draw_eval_set();
  write_file();
}

std::vector<double> PointerReinforce::greedy_lengths(const PointerNet& model,
                                                     std::span<const tasks::PointerInstance> instances) {
  core::Graph g(false);
  return greedy_lengths(g, model, instances);
}

std::vector<double> PointerReinforce::greedy_lengths(core::Graph& g, const PointerNet& model,
                                                     std::span<const tasks::PointerInstance> instances) {
  std::vector<double> out;
  out.reserve(instances.size());
  constexpr size_t kBatch = 256;
  for (size_t first = 0; first < instances.size(); first += kBatch) {
    const auto part = instances.subspan(first, std::min(kBatch, instances.size() - first));
    const decode::SourceBatch src = pointer_source(part);
    const auto hyps = decode::greedy_search(g, model, src, tour_search(src));
    for (size_t i = 0; i < part.size(); ++i) out.push_back(length_of(part[i], hyps[i]));
  }
  return out;
}

PointerReinforce::Batch PointerReinforce::loss(Graph& g, const PointerNet& policy,
                                               std::span<const tasks::PointerInstance> instances, int64_t total,
                                               core::Rng& rng) {
  ENGRAM_CHECK(!instances.empty() && total >= static_cast<int64_t>(instances.size()),
               "pointer reinforce: {} instances of a batch of {}", instances.size(), total);
  const decode::SourceBatch src = pointer_source(instances);
  const auto sampled = decode::sample_search(sample_graph_, policy, src, tour_search(src), 1.0f, rng);
  const std::vector<double> base = greedy_lengths(sample_graph_, *baseline_, instances);
  Batch out;
  std::vector<std::vector<int>>& tours = out.tours;
  std::vector<double>& advantage = out.advantage;
  for (size_t b = 0; b < instances.size(); ++b) {
    const double l = length_of(instances[b], sampled[b]);
    out.sampled += l;
    out.baseline += base[b];
    advantage.push_back((l - base[b]) / static_cast<double>(total));
    tours.push_back(pointer_positions(sampled[b].ids));
  }
  // Σ over the rows with a target of advantage(b) * log p(target): rows t*B + b.
  PointerForward f = policy.forward(g, src, tours);
  const int64_t batch = static_cast<int64_t>(instances.size());
  std::vector<int32_t> rows, classes;
  std::vector<float> weight;
  for (size_t r = 0; r < f.targets.size(); ++r) {
    if (f.targets[r] < 0) continue;
    rows.push_back(static_cast<int32_t>(r));
    classes.push_back(f.targets[r]);
    weight.push_back(static_cast<float>(advantage[r % batch]));
  }
  const Var lp = core::pick(core::select_rows(f.log_probs, rows), classes);  // [R]
  out.loss = core::sum_all(core::mul(lp, g.constant({static_cast<int>(weight.size())}, weight.data())));
  return out;
}

PointerReinforce::Update PointerReinforce::maybe_replace(const PointerNet& policy) {
  const std::vector<double> a = greedy_lengths(policy, eval_set_), b = greedy_lengths(*baseline_, eval_set_);
  Update u;
  const double n = static_cast<double>(a.size());
  double mean = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    u.policy += a[i] / n;
    u.baseline += b[i] / n;
    mean += (a[i] - b[i]) / n;
  }
  double var = 0;
  for (size_t i = 0; i < a.size(); ++i) var += (a[i] - b[i] - mean) * (a[i] - b[i] - mean) / (n - 1);
  u.t = var > 0 ? mean / std::sqrt(var / n) : (mean < 0 ? -INFINITY : 0.0);
  if (u.t < -1.645) {
    baseline_->params().copy_values_from(policy.params());
    ++replacements_;
    draw_eval_set();
    write_file();
    u.replaced = true;
  }
  return u;
}

}  // namespace engram::models
