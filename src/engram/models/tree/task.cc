// SST training with the tree models: the recipe, data loading, the TrainTask and the epoch timer.
// Dims: T trees per batch.
#include "engram/models/tree/task.h"

#include "engram/train/run_lock.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "engram/io/config.h"
#include "engram/data/paths.h"
#include "engram/io/files.h"
#include "engram/train/run_config.h"

namespace engram::models {

namespace fs = std::filesystem;

namespace {

TreeRunConfig tree_recipe(const TreeRunConfig& probe) { return default_tree_run_config(probe.tree.cell, probe.data.view); }

// " (embedding at 0.1)" for the progress line; "" without groups.
std::string param_lr_text(const optim::OptimizerConfig& o) {
  std::string s;
  for (const optim::ParamLrConfig& g : o.param_lr) s += fmt::format("{}{} at {}", s.empty() ? " (" : ", ", g.params, g.lr);
  return s.empty() ? s : s + ")";
}

}  // namespace

TreeRunConfig default_tree_run_config(TreeCell cell, data::SentimentView view) {
  TreeRunConfig c;
  c.tree.cell = cell;
  c.tree.classes = data::num_sentiment_classes(view);
  c.data.view = view;
  c.data.batch_size = 25;
  c.task.l2 = 1e-4f;
  c.train.optimizer.name = "adagrad";
  c.train.optimizer.lr = 0.05f;
  c.train.optimizer.param_lr = {{.params = "embedding", .lr = 0.1f}};  // the word vectors' own rate
  c.train.max_epochs = 10;
  c.train.log_every = 50;
  c.train.run_dir = fmt::format("runs/sst-{}-{}", tree_cell_name(cell), data::sentiment_view_name(view));
  return c;
}

TreeRunConfig read_tree_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  TreeRunConfig cfg = parse_run_config<TreeRunConfig>(node, source, sets, &tree_recipe);
  ENGRAM_CHECK(cfg.model == TreeModel::kName, "{}: model '{}' is not the tree family", source, cfg.model);
  const int want = data::num_sentiment_classes(cfg.data.view);
  ENGRAM_CHECK(cfg.tree.classes == want, "{}: tree.classes {} does not fit data.view {} ({} classes)", source,
               cfg.tree.classes, data::sentiment_view_name(cfg.data.view), want);
  ENGRAM_CHECK(cfg.data.batch_size >= 1 && cfg.data.valid_batch >= 1, "{}: data.batch_size {} and data.valid_batch {} must be >= 1",
               source, cfg.data.batch_size, cfg.data.valid_batch);
  ENGRAM_CHECK(cfg.task.l2 >= 0.0f, "{}: task.l2 {} must be >= 0", source, cfg.task.l2);
  return cfg;
}

std::string sst_data_dir(const TreeDataConfig& cfg) {
  if (!cfg.dir.empty()) return cfg.dir;
  return (data::data_root() / "sst").string();
}

std::vector<data::Tree> load_sst_split(const std::string& dir, const std::string& split, data::SentimentView view,
                                       const data::Vocab& vocab) {
  ENGRAM_CHECK(split == "train" || split == "dev" || split == "test", "SST split '{}' is not one of train, dev, test",
               split);
  std::vector<data::Tree> trees = data::sentiment_view(data::read_tree_file(dir + "/" + split + ".txt"), view);
  data::assign_word_ids(vocab, &trees);
  return trees;
}

SstData load_sst_data(const TreeDataConfig& cfg, const data::Vocab* vocab) {
  data::SstSplits s = data::load_sst(sst_data_dir(cfg), cfg.view);
  ENGRAM_CHECK(!s.train.empty() && !s.dev.empty(), "SST in '{}': no training or dev trees", sst_data_dir(cfg));
  SstData d;
  if (vocab) {
    d.vocab = *vocab;
  } else {
    data::TokenCounts counts;
    data::count_tree_tokens(s.train, &counts);
    d.vocab = data::Vocab::build(counts, {.min_count = cfg.min_count, .max_size = cfg.max_vocab});
  }
  d.train = std::move(s.train), d.dev = std::move(s.dev), d.test = std::move(s.test);
  for (auto* split : {&d.train, &d.dev, &d.test}) data::assign_word_ids(d.vocab, split);
  return d;
}

// ---- TreeTrainTask ------------------------------------------------------------------------

TreeTrainTask::TreeTrainTask(const TreeRunConfig& cfg, TreeModel& model, const SstData& data,
                             std::vector<fs::path> files)
    : cfg_(cfg), model_(model), data_(data), files_(std::move(files)), graph_(true, size_t{1} << 26) {
  ENGRAM_CHECK(cfg.data.batch_size >= 1, "tree: data.batch_size {} must be >= 1", cfg.data.batch_size);
  ENGRAM_CHECK(!data.train.empty(), "tree: no training trees");
  order_.resize(data.train.size());
  std::iota(order_.begin(), order_.end(), 0);
}

int64_t TreeTrainTask::batches_per_epoch() const {
  const int64_t n = static_cast<int64_t>(data_.train.size());
  return (n + cfg_.data.batch_size - 1) / cfg_.data.batch_size;
}

void TreeTrainTask::begin_epoch(int epoch, uint64_t seed) {
  epoch_ = epoch;
  seed_ = seed;
  std::iota(order_.begin(), order_.end(), 0);
  core::Rng rng(train::epoch_seed(seed, epoch));
  rng.shuffle(order_.begin(), order_.end());
}

train::BatchResult TreeTrainTask::train_batch(int64_t index) {
  const int64_t start = index * cfg_.data.batch_size;
  const int64_t count = std::min<int64_t>(cfg_.data.batch_size, static_cast<int64_t>(order_.size()) - start);
  ENGRAM_CHECK(count > 0, "tree: batch {} past the end of the epoch", index);
  // This rank's shard of the batch: CE over the whole batch's tree count, the L2 term on rank 0.
  const auto [lo, hi] = train::shard_range(count, shard());
  if (lo == hi) return {0, 0};
  batch_.clear();
  for (int64_t i = lo; i < hi; ++i) batch_.push_back(data_.train[static_cast<size_t>(order_[start + i])]);
  core::Rng rng(train::shard_seed(train::batch_seed(seed_, epoch_, index), shard()));
  graph_.reset();
  const TreeLoss l = model_.loss(graph_, batch_, cfg_.task.execution, &rng, shard().rank == 0 ? cfg_.task.l2 : 0.0f,
                                 count);
  graph_.backward(l.loss);
  return {l.ce_sum, l.labelled};
}

train::Metrics TreeTrainTask::validate() {
  const TreeScore s = score_trees(model_, data_.dev, cfg_.data.view, cfg_.data.valid_batch);
  return {{"root_acc", s.root_accuracy()}, {"all_acc", s.node_accuracy()}, {"loss", s.loss()}};
}

// ---- training -----------------------------------------------------------------------------

namespace {

struct Prepared {
  SstData data;
  TreeConfig model;
  bool resumed = false;  // the vocabulary came from the run directory's vocab.txt
};

// The data (with the run's vocabulary when resuming) and the model config completed from it.
Prepared prepare(const TreeRunConfig& cfg, const fs::path& run_dir) {
  Prepared p;
  const fs::path vocab_file = run_dir / "vocab.txt";
  if (!run_dir.empty() && fs::exists(run_dir / "last") && fs::exists(vocab_file)) {
    const data::Vocab v = data::Vocab::load(vocab_file.string());
    p.data = load_sst_data(cfg.data, &v);
    p.resumed = true;
  } else {
    p.data = load_sst_data(cfg.data);
  }
  p.model = cfg.tree;
  p.model.vocab = p.data.vocab.size();
  return p;
}

}  // namespace

namespace {

// The training task with what it borrows: the data and the model (base-from-member: they are
// built before the TreeTrainTask that refers to them).
struct TreeOwned {
  Prepared p;
  core::Rng init;  // the model's initial values, from train.seed
  TreeModel model;
  TreeOwned(Prepared prepared, uint64_t seed) : p(std::move(prepared)), init(seed), model(p.model, init) {}
};

class OwnedTreeTask : private TreeOwned, public TreeTrainTask {
 public:
  OwnedTreeTask(const TreeRunConfig& cfg, Prepared p, const fs::path& run_dir)
      : TreeOwned(std::move(p), cfg.train.seed),
        TreeTrainTask(cfg, TreeOwned::model, TreeOwned::p.data, {run_dir / "vocab.txt", run_dir / "data.yaml"}) {}
  const TreeModel& tree_model() const { return TreeOwned::model; }
  const SstData& data() const { return TreeOwned::p.data; }
};

}  // namespace

std::unique_ptr<train::TrainTask> make_tree_task(const TreeRunConfig& cfg) {
  const fs::path run_dir = cfg.train.run_dir;
  const bool root = train::world().root();  // rank 0 writes for a data-parallel job
  train::write_run_config(run_dir, io::dump_config(cfg));
  Prepared p = prepare(cfg, run_dir);
  // Written once, before the first checkpoint; a resumed run never rewrites the file it resumes
  // from (Vocab::save truncates first, so a kill during that write would leave a short vocabulary
  // for the next resume to read against the checkpoint's embedding: tests/train/fault_test.sh).
  if (root && !p.resumed) p.data.vocab.save((run_dir / "vocab.txt").string());
  TreeDataConfig used = cfg.data;  // what the model was trained on, for sentiment eval's defaults
  used.dir = sst_data_dir(cfg.data);
  if (root) io::write_file_atomic(run_dir / "data.yaml", io::dump_config(used));
  auto task = std::make_unique<OwnedTreeTask>(cfg, std::move(p), run_dir);
  const SstData& d = task->data();
  std::printf("SST %s (%s): %zu train / %zu dev / %zu test trees, vocabulary %d; %s cell, %lld parameters, "
              "%s execution, batch %d, %s lr %g%s; run dir %s\n",
              used.dir.c_str(), data::sentiment_view_name(cfg.data.view).data(), d.train.size(), d.dev.size(),
              d.test.size(), d.vocab.size(), tree_cell_name(cfg.tree.cell),
              static_cast<long long>(task->tree_model().params().numel()),
              cfg.task.execution == TreeExecution::kByLevel ? "level-batched" : "per-node", cfg.data.batch_size,
              cfg.train.optimizer.name.c_str(), cfg.train.optimizer.lr, param_lr_text(cfg.train.optimizer).c_str(),
              cfg.train.run_dir.c_str());
  std::fflush(stdout);
  return task;
}

TreeEpochTiming time_tree_epoch(const TreeRunConfig& cfg, TreeExecution exec, int64_t max_batches, int64_t warmup) {
  ENGRAM_CHECK(max_batches >= 0 && warmup >= 0, "tree timing: max_batches {} and warmup {} must be >= 0", max_batches,
               warmup);
  TreeRunConfig run = cfg;
  run.task.execution = exec;
  const Prepared p = prepare(run, {});
  core::Rng init(run.train.seed);
  TreeModel model(p.model, init);
  TreeTrainTask task(run, model, p.data, {});
  train::Updater updater(task, run.train);
  task.begin_epoch(0, run.train.seed);
  const int64_t batches = task.batches_per_epoch();
  const int64_t first = std::min(warmup, batches - 1);
  for (int64_t i = 0; i < first; ++i) updater.update(i);
  const int64_t last = max_batches > 0 ? std::min(batches, first + max_batches) : batches;
  TreeEpochTiming t;
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t bs = run.data.batch_size, n = static_cast<int64_t>(p.data.train.size());
  for (int64_t i = first; i < last; ++i) {
    updater.update(i);
    t.trees += std::min(bs, n - i * bs);
    ++t.batches;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.seconds = t.trees > 0 ? secs * static_cast<double>(n) / static_cast<double>(t.trees) : 0.0;
  return t;
}

}  // namespace engram::models
