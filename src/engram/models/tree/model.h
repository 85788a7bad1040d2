// The "tree" model: word embeddings at the leaves, one shared cell (recursive net, N-ary or
// child-sum Tree-LSTM, models/tree/cells.h) applied bottom-up, and a softmax classifier at every
// node (dropout on its input while training). The loss of a batch is the cross-entropy summed
// over every labelled node (label -1 skipped) of its trees, divided by the number of trees.
//
// Two executions of the same computation (TreeExecution), which give the same values and
// gradients up to float summation order (tests/models/tree_test.cc):
//   kPerNode  node by node in post-order, one cell call per node (the reference);
//   kByLevel  DyNet-style: all nodes of one height across the batch's trees in one cell call
//             (one product per level), children's states gathered from the levels below
//             (data::batch_levels).
// Both return every node's state in the same canonical order — tree by tree, each tree's nodes
// in post-order — so dropout masks, the classifier (one product over all nodes) and the loss are
// shared code.
// Dims: T trees, N_all nodes of all trees, E embedding, H hidden, C classes, V vocab.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/data/tree.h"
#include "engram/models/model_set.h"
#include "engram/models/registry.h"
#include "engram/models/tree/cells.h"
#include "engram/models/tree/config.h"
#include "engram/nn/dropout.h"
#include "engram/nn/embedding.h"
#include "engram/nn/linear.h"

namespace engram::models {

enum class TreeExecution { kPerNode, kByLevel };

struct TreeLoss {
  Var loss;                 // [] sum of CE over labelled nodes / trees (+ the L2 term, if asked)
  double ce_sum = 0;        // summed CE over the labelled nodes (no L2)
  int64_t labelled = 0;     // labelled nodes
};

class TreeModel : public Model {
 public:
  static constexpr const char* kName = "tree";
  // Parameters: embedding/weight [V, E]; cell/... (cells.h); classifier/{weight [C, H], bias [C]}.
  TreeModel(const TreeConfig& cfg, core::Rng& rng);

  std::string name() const override { return kName; }
  nn::ParamStore& params() override { return *store_; }
  const nn::ParamStore& params() const { return *store_; }
  YAML::Node config() const override;
  const TreeConfig& tree_config() const { return cfg_; }
  nn::ParamId embedding_weight() const { return embedding_.weight(); }

  // Every node's h of `trees` (each with word_ids) -> [N_all, H] in canonical order (tree by
  // tree, post-order). Differentiable in every parameter. Errors on a tree without word ids, an
  // id outside [0, V), or (rnn, treelstm) a node with more than `arity` children.
  Var node_states(Graph& g, std::span<const data::Tree> trees, TreeExecution exec) const;
  // Classifier logits of every node [N_all, C]; dropout (cfg.dropout) when `dropout_rng` is given.
  Var node_logits(Graph& g, std::span<const data::Tree> trees, TreeExecution exec,
                  core::Rng* dropout_rng = nullptr) const;
  // Sum over the labelled nodes of CE / per (per = 0: trees.size(); a data-parallel shard passes
  // the whole batch's tree count), plus (l2 > 0) l2/2 times the squared norm of every parameter
  // except the embeddings. Labels must be in [0, C) or -1.
  TreeLoss loss(Graph& g, std::span<const data::Tree> trees, TreeExecution exec, core::Rng* dropout_rng = nullptr,
                float l2 = 0.0f, int64_t per = 0) const;

 private:
  Var states_per_node(Graph& g, std::span<const data::Tree> trees) const;
  Var states_by_level(Graph& g, std::span<const data::Tree> trees) const;

  TreeConfig cfg_;
  std::unique_ptr<nn::ParamStore> store_;        // behind a pointer: modules keep its address
  nn::Embedding embedding_;                      // [V, E]
  std::unique_ptr<RecursiveCell> rnn_;           // one of the three cells
  std::unique_ptr<NaryTreeLstmCell> nary_;
  std::unique_ptr<ChildSumTreeLstmCell> childsum_;
  nn::Linear classifier_;                        // [C, H]
  nn::Dropout dropout_;
};

// Class probabilities of every node of one tree.
struct TreePrediction {
  int classes = 0;                // C
  std::vector<int32_t> labels;    // [N] argmax per node
  std::vector<float> probs;       // [N, C]
  float prob(int32_t node) const { return probs[static_cast<size_t>(node) * classes + labels[node]]; }
};

// Level-batched inference (no gradients), `batch` trees at a time, by one model or an ensemble
// (ModelSet: every node's class probabilities are the members' mean, p = 1/M Σ_m softmax(W_m h_m);
// the members must have the model's classes C), on bf16 weights where the set has them.
std::vector<TreePrediction> predict_trees(const ModelSet<TreeModel>& models, std::span<const data::Tree> trees,
                                          int batch = 256);

// Root and all-node accuracy of a model on trees labelled in `view`. A 5-class model scored on
// the binary view predicts positive when p(3) + p(4) > p(0) + p(1) (Tai et al.'s binary task); a
// 2-class model cannot be scored on the fine view (an error). loss is the mean CE per labelled
// node when the model's classes match the view, else NaN.
struct TreeScore {
  int64_t roots = 0, root_correct = 0;  // trees with a labelled root
  int64_t nodes = 0, node_correct = 0;  // labelled nodes (roots included)
  double ce_sum = 0;
  bool has_loss = false;
  double root_accuracy() const { return roots ? double(root_correct) / double(roots) : 0.0; }
  double node_accuracy() const { return nodes ? double(node_correct) / double(nodes) : 0.0; }
  double loss() const;
};
TreeScore score_trees(const ModelSet<TreeModel>& models, std::span<const data::Tree> trees, data::SentimentView view,
                      int batch = 256);

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::TreeExecution> {
  static constexpr std::pair<engram::models::TreeExecution, const char*> items[] = {
      {engram::models::TreeExecution::kPerNode, "node"}, {engram::models::TreeExecution::kByLevel, "level"}};
};
