// PointerTrainTask: generated instances, batches, the teacher-forced loss and validation.
// Dims: B batch.
#include "engram/models/pointer/task.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <numeric>

#include "engram/core/kernels/parallel.h"
#include "engram/core/memory.h"
#include "engram/core/ops.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/training.h"

namespace engram::models {

namespace tasks = data::tasks;

namespace {

// Mixed into data.seed for the stream of batch sizes n (data.batch_by_n), apart from the instances'.
constexpr uint64_t kBatchNStream = 0x6e5f7065725f6261ULL;

std::vector<std::vector<int>> targets_of(std::span<const tasks::PointerInstance> set) {
  std::vector<std::vector<int>> t;
  t.reserve(set.size());
  for (const auto& in : set) t.push_back(in.target);
  return t;
}

}  // namespace

tasks::PointerTaskOptions PointerDataConfig::task_options() const {
  tasks::PointerTaskOptions o;
  o.task = task;
  o.min_n = min_n;
  o.max_n = max_n;
  o.tsp_exact_max_n = tsp_exact_max_n;
  o.tsp_starts = tsp_starts;
  return o;
}

PointerTrainConfig read_pointer_config(const YAML::Node& node, const std::string& source,
                                       const std::vector<std::string>& sets) {
  PointerTrainConfig cfg = parse_run_config<PointerTrainConfig>(node, source, sets);
  cfg.pointer.task = cfg.data.task;
  return cfg;
}

void PointerDataConfig::validate() const {
  ENGRAM_CHECK(batch_size >= 1 && valid_instances >= 1 && valid_beam >= 1 && train_instances >= 0 &&
                   (train_instances > 0 || batches_per_epoch >= 1),
               "pointer data: batch_size {}, valid_instances {}, valid_beam {} and (without train_instances) "
               "batches_per_epoch {} must be >= 1; train_instances {} >= 0",
               batch_size, valid_instances, valid_beam, batches_per_epoch, train_instances);
  tasks::make_pointer_instance(task_options(), seed, 0);  // the generator's own checks (n range, TSP labels)
  // The two sets are held whole: at least the instances and their smallest n points (2 floats)
  // and labels (ints) each.
  const double instance = sizeof(tasks::PointerInstance) + 12.0 * min_n;
  core::check_memory(instance * valid_instances, fmt::format("pointer: data.valid_instances {}", valid_instances));
  core::check_memory(instance * train_instances, fmt::format("pointer: data.train_instances {}", train_instances));
  ENGRAM_CHECK(objective == PointerObjective::kSupervised || task == PointerTask::kTsp,
               "pointer data: objective reinforce needs task tsp (the tour length is its reward)");
  ENGRAM_CHECK(objective == PointerObjective::kSupervised || train_instances == 0,
               "pointer data: objective reinforce draws fresh instances (set train_instances to 0)");
  ENGRAM_CHECK(!batch_by_n || train_instances == 0,
               "pointer data: batch_by_n draws fresh instances (set train_instances to 0)");
  ENGRAM_CHECK(baseline_instances >= 2 && baseline_instances <= 1000000,
               "pointer data: baseline_instances {} outside [2, 1000000]", baseline_instances);
}

std::vector<tasks::PointerInstance> make_pointer_instances(const tasks::PointerTaskOptions& options, uint64_t seed,
                                                           uint64_t first, int64_t count) {
  ENGRAM_CHECK(count >= 0, "pointer: {} instances", count);
  std::vector<tasks::PointerInstance> out(static_cast<size_t>(count));
  tasks::make_pointer_instance(options, seed, first);  // checks the options (throws here, not in a worker thread)
  core::kernels::parallel_for(count, 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = tasks::make_pointer_instance(options, seed, first + static_cast<uint64_t>(i));
  });
  return out;
}

std::vector<tasks::PointerInstance> fresh_pointer_batch(const PointerDataConfig& d, bool labels, int epoch,
                                                        int64_t batches_per_epoch, int64_t index) {
  ENGRAM_CHECK(epoch >= 0 && index >= 0 && index < batches_per_epoch, "pointer: batch {} of {} in epoch {}", index,
               batches_per_epoch, epoch);
  const uint64_t batch = static_cast<uint64_t>(epoch) * static_cast<uint64_t>(batches_per_epoch) + index;
  tasks::PointerTaskOptions opts = d.task_options();
  opts.labels = labels;
  if (d.batch_by_n) {  // the batch's n, from its own stream
    core::Rng rng = tasks::instance_rng(d.seed ^ kBatchNStream, batch);
    opts.min_n = opts.max_n = d.min_n + static_cast<int>(rng.below(static_cast<uint64_t>(d.max_n - d.min_n + 1)));
  }
  return make_pointer_instances(opts, d.seed, batch * static_cast<uint64_t>(d.batch_size), d.batch_size);
}

PointerTrainTask::PointerTrainTask(const PointerTrainConfig& cfg, std::FILE* log) : cfg_(cfg), log_(log) {
  ENGRAM_CHECK(cfg_.model == PointerNet::kName, "pointer training: config names model '{}'", cfg_.model);
  const PointerDataConfig& d = cfg_.data;
  d.validate();
  cfg_.pointer.task = d.task;
  const tasks::PointerTaskOptions opts = d.task_options();
  const auto t0 = std::chrono::steady_clock::now();
  valid_ = make_pointer_instances(opts, d.valid_seed, 0, d.valid_instances);
  if (d.train_instances > 0) {
    train_ = make_pointer_instances(opts, d.seed, 0, d.train_instances);
    batches_ = (d.train_instances + d.batch_size - 1) / d.batch_size;
  } else {
    batches_ = d.batches_per_epoch;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_note(log, fmt::format("data: {} n = {}-{}; {} training instances{}, {} validation; generated in {:.1f} s",
                        pointer_task_name(d.task), d.min_n, d.max_n,
                        d.train_instances > 0 ? std::to_string(d.train_instances) : "fresh",
                        d.train_instances > 0 ? "" : fmt::format(" ({} per epoch)", batches_ * d.batch_size),
                        d.valid_instances, secs));
  core::Rng init(cfg_.train.seed);
  model_ = std::make_unique<PointerNet>(cfg_.pointer, init);
  cfg_.pointer = model_->cfg();
  log_note(log, fmt::format("model: pointer network, {} {} x {} (embedding {}), {} glimpse(s), logit clip {}, {} parameters",
                        io::to_yaml(cfg_.pointer)["cell"].as<std::string>(), cfg_.pointer.hidden, 1,
                        cfg_.pointer.embed_dim, cfg_.pointer.glimpses, cfg_.pointer.logit_clip,
                        model_->params().numel()));
  if (d.objective == PointerObjective::kReinforce) {
    tasks::PointerTaskOptions unlabelled = opts;
    unlabelled.labels = false;
    const std::filesystem::path file =
        cfg_.train.run_dir.empty() ? std::filesystem::path() : std::filesystem::path(cfg_.train.run_dir) / "baseline.safetensors";
    reinforce_ = std::make_unique<PointerReinforce>(*model_, unlabelled, d.baseline_instances, d.baseline_seed, file);
    log_note(log, fmt::format("objective: REINFORCE, greedy-rollout baseline (replaced when better on {} instances)",
                          d.baseline_instances));
  }
  begin_epoch(0, cfg_.train.seed);
}

std::string PointerTrainTask::primary_metric() const { return cfg_.data.task == PointerTask::kTsp ? "gap" : "acc"; }

bool PointerTrainTask::higher_is_better() const { return cfg_.data.task != PointerTask::kTsp; }

void PointerTrainTask::begin_epoch(int epoch, uint64_t seed) {
  epoch_ = epoch;
  seed_ = seed;
  if (train_.empty()) return;
  order_.resize(train_.size());
  std::iota(order_.begin(), order_.end(), int64_t{0});
  core::Rng rng(train::epoch_seed(seed, epoch));
  rng.shuffle(order_.begin(), order_.end());
}

train::BatchResult PointerTrainTask::train_batch(int64_t index) {
  ENGRAM_CHECK(index >= 0 && index < batches_, "pointer: batch {} of {}", index, batches_);
  const int64_t bs = cfg_.data.batch_size;
  std::vector<tasks::PointerInstance> fresh;
  std::vector<tasks::PointerInstance> picked;
  std::span<const tasks::PointerInstance> set;
  if (train_.empty()) {  // instance i of epoch e: a pure function of (data.seed, e, i)
    fresh = fresh_pointer_batch(cfg_.data, reinforce_ == nullptr, epoch_, batches_, index);  // reinforce: no labels
    set = fresh;
  } else {
    const int64_t begin = index * bs, end = std::min<int64_t>(begin + bs, static_cast<int64_t>(train_.size()));
    for (int64_t i = begin; i < end; ++i) picked.push_back(train_[order_[i]]);
    set = picked;
  }
  // This rank's shard of the batch; the gradient is of the whole batch's mean.
  const auto [lo, hi] = train::shard_range(static_cast<int64_t>(set.size()), shard());
  if (lo == hi) return {0, 0};
  const std::span<const tasks::PointerInstance> mine = set.subspan(static_cast<size_t>(lo), static_cast<size_t>(hi - lo));
  graph_.reset();
  if (reinforce_) {
    // The samples of instance i: a pure function of (seed, epoch, batch, first instance), so a
    // resumed run draws the same tours.
    core::Rng rng = tasks::instance_rng(train::epoch_seed(seed_, epoch_), static_cast<uint64_t>(index * bs + lo));
    const PointerReinforce::Batch r = reinforce_->loss(graph_, *model_, mine, static_cast<int64_t>(set.size()), rng);
    graph_.backward(r.loss);
    return {r.sampled, hi - lo};  // the "loss" logged: the mean sampled tour length
  }
  const decode::SourceBatch src = pointer_source(mine);
  Var sum = model_->loss(graph_, src, targets_of(mine));
  graph_.backward(core::scale(sum, 1.0f / static_cast<float>(set.size())));  // the gradient of the mean
  return {static_cast<double>(sum.data()[0]), hi - lo};
}

train::Metrics PointerTrainTask::validate() {
  core::Graph g(false);
  double nll = 0;
  const size_t bs = static_cast<size_t>(cfg_.data.batch_size);
  const std::span<const tasks::PointerInstance> all(valid_);
  for (size_t first = 0; first < valid_.size(); first += bs) {
    const auto part = all.subspan(first, std::min(bs, valid_.size() - first));
    g.reset();
    nll += model_->loss(g, pointer_source(part), targets_of(part)).data()[0];
  }
  PointerDecodeOptions o;
  o.beam = cfg_.data.valid_beam;
  o.batch_size = cfg_.data.batch_size;
  train::Metrics m = pointer_metrics(score_pointer(cfg_.data.task, valid_, predict_pointer(*model_, valid_, o)));
  m["loss"] = nll / static_cast<double>(valid_.size());
  return m;
}


std::vector<std::filesystem::path> PointerTrainTask::checkpoint_files() const {
  if (!reinforce_ || reinforce_->file().empty()) return {};
  return {reinforce_->file()};
}

nlohmann::json PointerTrainTask::extra_state() const {
  if (!reinforce_) return nullptr;
  return {{"baseline_replacements", reinforce_->replacements()}};
}

void PointerTrainTask::load_extra_state(const nlohmann::json& state) {
  if (!reinforce_) return;
  ENGRAM_CHECK(state.is_object() && state.contains("baseline_replacements") &&
                   state.at("baseline_replacements").is_number_integer(),
               "pointer: the checkpoint's trainer state has no baseline_replacements (not a reinforce run?)");
  reinforce_->restore(state.at("baseline_replacements").get<int>(), std::filesystem::path(cfg_.train.run_dir) / "last");
}

void PointerTrainTask::after_validation(const train::Metrics&) {
  if (!reinforce_) return;
  const PointerReinforce::Update u = reinforce_->maybe_replace(*model_);
  log_note(log_, fmt::format("baseline: policy {:.4f} vs baseline {:.4f} (t = {:.2f}): {}", u.policy, u.baseline, u.t,
                         u.replaced ? fmt::format("replaced ({} so far)", reinforce_->replacements()) : "kept"));
}

}  // namespace engram::models
