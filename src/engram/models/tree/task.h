// Sentiment on the Stanford Sentiment Treebank with the tree models: the run configuration
// (model: tree, with Tai et al. 2015's recipe as defaults), SST loading with a vocabulary over
// the training trees, the TrainTask (batches of trees -> summed node loss, validation root and
// all-node accuracy), evaluation of a model directory and the family's LoadedModel.
// Run directory (train.run_dir): last/, best/ (model directories with vocab.txt and data.yaml),
// metrics.jsonl, train.yaml, vocab.txt, data.yaml.
// Dims: T trees per batch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engram/data/tree.h"
#include "engram/data/vocab.h"
#include "engram/models/loaded_family.h"
#include "engram/models/registry.h"
#include "engram/models/tree/model.h"
#include "engram/train/trainer.h"

template <>
struct engram::io::EnumNames<engram::data::SentimentView> {
  static constexpr std::pair<engram::data::SentimentView, const char*> items[] = {
      {engram::data::SentimentView::kFine, "fine"}, {engram::data::SentimentView::kBinary, "binary"}};
};

namespace engram::models {

// data: where the trees come from and how they are batched.
struct TreeDataConfig {
  std::string dir;                                   // DIR/{train,dev,test}.txt; "" = $ENGRAM_DATA_DIR/sst
  data::SentimentView view = data::SentimentView::kFine;
  int batch_size = 25;                               // trees per update (Tai et al.: 25)
  int64_t min_count = 1;                             // training-tree words seen fewer times -> <unk>
  int64_t max_vocab = 0;                             // 0 = no limit (size includes the 4 specials)
  int valid_batch = 256;                             // trees per forward pass in validation

  template <class V>
  void visit(V& v) {
    v("dir", dir, "SST directory with train.txt, dev.txt, test.txt ('' = $ENGRAM_DATA_DIR/sst)");
    v("view", view, "fine (5 classes) | binary (neutral roots dropped, 2 classes)");
    v("batch_size", batch_size, "trees per update");
    v("min_count", min_count, "words of the training trees seen fewer times become <unk>");
    v("max_vocab", max_vocab, "vocabulary size limit including the 4 specials (0 = none)");
    v("valid_batch", valid_batch, "trees per forward pass in validation");
  }
};

// task: the tree family's own recipe keys.
struct TreeTaskConfig {
  // l2/2 ||w||^2 over every non-embedding parameter, added to the loss (the optimizer's
  // weight_decay would also decay the embeddings). Tai et al.: 1e-4.
  float l2 = 1e-4f;
  TreeExecution execution = TreeExecution::kByLevel;  // how training runs the trees (inference: by level)

  template <class V>
  void visit(V& v) {
    v("l2", l2, "L2 strength on every non-embedding parameter (in the loss)");
    v("execution", execution, "training: level (batched by level) | node (node by node, the reference)");
  }
};

// A tree run (`engram train` with `model: tree`).
struct TreeRunConfig {
  std::string model = "tree";
  TreeConfig tree;
  TreeDataConfig data;
  TreeTaskConfig task;
  train::TrainerConfig train;

  template <class V>
  void visit(V& v) {
    v("model", model, "model family (tree)");
    v("tree", tree, "the model: cell, widths, classifier");
    v("data", data, "SST trees, view and batching");
    v("task", task, "L2 on the non-embedding weights, execution");
    v("train", train, "training loop");
  }
};

// Tai, Socher & Manning 2015's sentiment recipe: AdaGrad lr 0.05, batches of 25 trees, L2 1e-4 on
// the non-embedding weights, dropout 0.5 before the classifier, hidden 150, embeddings of 300
// (randomly initialised: no pretrained vectors here), classes from the view, 10 epochs, best/ by
// validation root accuracy, and the paper's own rate for the word vectors, 0.1
// (train.optimizer.param_lr: the embeddings train with AdaGrad at 0.1, the rest at 0.05).
TreeRunConfig default_tree_run_config(TreeCell cell, data::SentimentView view);
// A run config (model: tree): the recipe for its tree.cell and data.view, then the file, then
// each --set. Errors when tree.classes does not fit data.view.
TreeRunConfig read_tree_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets);

// cfg.dir, or $ENGRAM_DATA_DIR/sst, or ../shared/data/sst.
std::string sst_data_dir(const TreeDataConfig& cfg);

struct SstData {
  data::Vocab vocab;
  std::vector<data::Tree> train, dev, test;  // in the view, word ids assigned
};
// Loads the three splits in cfg.view with a vocabulary over the training trees (or `vocab`).
SstData load_sst_data(const TreeDataConfig& cfg, const data::Vocab* vocab = nullptr);
// One split ("train" | "dev" | "test") of DIR in `view`, word ids from `vocab`.
std::vector<data::Tree> load_sst_split(const std::string& dir, const std::string& split, data::SentimentView view,
                                       const data::Vocab& vocab);

// The Trainer's view of a tree run: batches of data.batch_size trees in an order drawn per
// epoch; the loss is the node cross-entropy summed per tree (mean over the batch's trees) plus
// task.l2; validation reports root_acc (the primary metric), all_acc and loss on the dev trees.
class TreeTrainTask : public train::TrainTask {
 public:
  // `files` go into every checkpoint (vocab.txt, data.yaml).
  TreeTrainTask(const TreeRunConfig& cfg, TreeModel& model, const SstData& data, std::vector<std::filesystem::path> files);
  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return TreeModel::kName; }
  YAML::Node model_config() const override { return model_.config(); }
  int64_t batches_per_epoch() const override;
  void begin_epoch(int epoch, uint64_t seed) override;
  train::BatchResult train_batch(int64_t index) override;
  bool shardable() const override { return true; }
  train::Metrics validate() override;
  std::string primary_metric() const override { return "root_acc"; }
  bool higher_is_better() const override { return true; }
  std::vector<std::filesystem::path> checkpoint_files() const override { return files_; }
  bool reports_perplexity() const override { return false; }  // per-node classification

 private:
  TreeRunConfig cfg_;
  TreeModel& model_;
  const SstData& data_;
  std::vector<std::filesystem::path> files_;
  std::vector<int32_t> order_;   // [train trees] this epoch's order
  std::vector<data::Tree> batch_;
  int epoch_ = 0;
  uint64_t seed_ = 1;
  core::Graph graph_;
};

// The training task of `cfg` (models::train_task locks and runs it): loads the data, writes
// RUN/{train.yaml, vocab.txt, data.yaml} (a resumed run keeps its vocab.txt), builds the model
// from train.seed and prints the data, the model and the run directory.
std::unique_ptr<train::TrainTask> make_tree_task(const TreeRunConfig& cfg);

// Seconds for one pass over the training trees (forward + backward + the optimizer update, as
// training does) with `exec`, after `warmup` batches; `max_batches` > 0 stops early and scales.
struct TreeEpochTiming {
  double seconds = 0;     // for the whole epoch
  int64_t batches = 0;    // timed
  int64_t trees = 0;      // timed
};
TreeEpochTiming time_tree_epoch(const TreeRunConfig& cfg, TreeExecution exec, int64_t max_batches = 0,
                                int64_t warmup = 2);

// A trained model directory: config, vocabulary, parameters and the data it was trained on.
struct LoadedTreeModel : LoadedFamily<LoadedTreeModel, TreeModel> {
  TreeDataConfig data;  // data.yaml (defaults when absent)
  data::Vocab vocab;

  // A tree `(3 (2 It) (4 (4 rocks)))` (its labels are ignored) or a plain sentence (split on
  // spaces, read as a right-branching tree) -> the tree with word ids and its prediction.
  std::pair<data::Tree, TreePrediction> predict(const std::string& text) const;
  // The tree predict() reads (parsed, word ids assigned), not yet run.
  data::Tree read_input(const std::string& text) const;
  // -> "4 very positive (0.87)  (4 (2 It) (4 (4 rocks)))": the root's label and probability, then
  // the tree with every node's predicted label.
  std::string run_line(const std::string& line) override;
  std::string input_help() const override { return "a tree such as (3 (2 It) (4 (4 rocks))) or a plain sentence"; }
  // POST /v1/sentiment (serve.cc, docs/serve.md): {"text": a tree or a plain sentence} ->
  // {"label", "name", "probability" (the root's), "tree" (every node labelled), "root", "nodes":
  // [{"children", "word"?, "label", "probability", "probs"}]}. The trees of a batch run as one.
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // Members: tree models of the same vocabulary (token for token) and classes; each node's class
  // probabilities are the members' mean (predict_trees).
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};
// Reads MODEL_DIR/config.yaml, model.safetensors, vocab.txt and data.yaml (the last two also
// found in the parent directory).
std::unique_ptr<LoadedTreeModel> load_tree_model(const std::filesystem::path& dir);

// "very negative", "negative", "neutral", "positive", "very positive" (5 classes) or "negative",
// "positive" (2).
const char* sentiment_name(int32_t label, int classes);

// `engram sentiment eval`: a model on one split of its SST directory (or `data_dir`) in `view`.
// A split with no trees (or none with a labelled root in the view) is an error, not a 0 / 0 score.
struct SentimentEval {
  std::string dir, split;
  data::SentimentView view = data::SentimentView::kFine;
  int64_t trees = 0;
  TreeScore score;
};
SentimentEval evaluate_sentiment(const LoadedTreeModel& m, const std::string& split, data::SentimentView view,
                                 const std::string& data_dir = "");

// `engram sentiment show`: the SVG of `text` (a tree or a sentence) with every node coloured by
// its predicted sentiment and labelled with its probability (viz/tree.h). Also returns the root
// line of run_line via `summary`.
std::string sentiment_svg(const LoadedTreeModel& m, const std::string& text, std::string* summary = nullptr);

}  // namespace engram::models
