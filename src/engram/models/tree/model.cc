// The tree model: parameters, the classifier and loss over the node states of either execution
// (execute.cc), inference and scoring.
// Dims: N_all nodes of all trees, H hidden, C classes, V vocab, E embedding.
#include "engram/models/tree/model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::models {

namespace {

nn::EmbeddingConfig checked_embedding(const TreeConfig& c) {
  ENGRAM_CHECK(c.vocab >= 1 && c.embed >= 1 && c.hidden >= 1,
               "tree: vocab {}, embed {} and hidden {} must be positive", c.vocab, c.embed, c.hidden);
  ENGRAM_CHECK(c.classes >= 2, "tree: classes {} must be >= 2", c.classes);
  ENGRAM_CHECK(c.arity >= 1 && c.arity <= 16, "tree: arity {} must be in 1..16", c.arity);
  ENGRAM_CHECK(c.dropout >= 0.0f && c.dropout < 1.0f, "tree: dropout {} must be in [0, 1)", c.dropout);
  ENGRAM_CHECK(c.embed_init >= 0.0f, "tree: embed_init {} must be >= 0", c.embed_init);
  return {.vocab = c.vocab, .dim = c.embed};
}

}  // namespace

const char* tree_cell_name(TreeCell cell) {
  switch (cell) {
    case TreeCell::kRnn: return "rnn";
    case TreeCell::kTreeLstm: return "treelstm";
    case TreeCell::kChildSum: return "childsum";
  }
  return "?";
}

TreeModel::TreeModel(const TreeConfig& cfg, core::Rng& rng)
    : cfg_(cfg),
      store_(std::make_unique<nn::ParamStore>()),
      embedding_(*store_, "embedding", checked_embedding(cfg), rng),
      classifier_(*store_, "classifier", nn::LinearConfig{.in_dim = cfg.hidden, .out_dim = cfg.classes}, rng),
      dropout_(cfg.dropout) {
  nn::init::uniform(*store_, embedding_.weight(), rng, -cfg.embed_init, cfg.embed_init);
  switch (cfg.cell) {
    case TreeCell::kRnn:
      rnn_ = std::make_unique<RecursiveCell>(*store_, "cell", cfg.embed, cfg.hidden, cfg.arity, rng);
      break;
    case TreeCell::kTreeLstm:
      nary_ = std::make_unique<NaryTreeLstmCell>(*store_, "cell", cfg.embed, cfg.hidden, cfg.arity, rng);
      break;
    case TreeCell::kChildSum:
      childsum_ = std::make_unique<ChildSumTreeLstmCell>(*store_, "cell", cfg.embed, cfg.hidden, rng);
      break;
  }
}

YAML::Node TreeModel::config() const { return io::to_yaml(cfg_); }

Var TreeModel::node_states(Graph& g, std::span<const data::Tree> trees, TreeExecution exec) const {
  ENGRAM_CHECK(!trees.empty(), "tree: no trees to run");
  for (const data::Tree& t : trees)
    ENGRAM_CHECK(t.word_ids.size() == t.tokens.size(), "tree (line {}): word ids not assigned ({} for {} tokens)",
                 t.line, t.word_ids.size(), t.tokens.size());
  return exec == TreeExecution::kPerNode ? states_per_node(g, trees) : states_by_level(g, trees);
}

// logits [N_all, C] = W_s dropout(h) + b_s
Var TreeModel::node_logits(Graph& g, std::span<const data::Tree> trees, TreeExecution exec,
                           core::Rng* dropout_rng) const {
  Var h = node_states(g, trees, exec);  // [N_all, H]
  if (dropout_rng) h = dropout_.forward(g, h, *dropout_rng, true);
  return classifier_.forward(g, h);
}

TreeLoss TreeModel::loss(Graph& g, std::span<const data::Tree> trees, TreeExecution exec, core::Rng* dropout_rng,
                         float l2, int64_t per) const {
  ENGRAM_CHECK(per >= 0, "tree loss: divisor {} must be >= 0", per);
  std::vector<int32_t> labels;
  TreeLoss out;
  for (const data::Tree& t : trees)
    for (int32_t n = 0; n < t.size(); ++n) {
      const int32_t y = t.node(n).label;
      ENGRAM_CHECK(y == data::kNoLabel || (y >= 0 && y < cfg_.classes),
                   "tree (line {}): node {} has label {}, outside 0..{} of a {}-class model", t.line, n, y,
                   cfg_.classes - 1, cfg_.classes);
      labels.push_back(y);
      out.labelled += y != data::kNoLabel;
    }
  const Var logits = node_logits(g, trees, exec, dropout_rng);  // [N_all, C]
  const Var ce = core::cross_entropy(logits, labels, {.ignore_index = data::kNoLabel, .mean = false});
  out.ce_sum = ce.data()[0];
  out.loss = core::scale(ce, 1.0f / static_cast<float>(per > 0 ? per : static_cast<int64_t>(trees.size())));
  if (l2 > 0.0f) {
    // l2/2 sum ||w||^2 over every parameter but the embeddings (Tai et al.'s regulariser)
    Var sq;
    for (nn::ParamId id = 0; id < store_->count(); ++id) {
      if (id == embedding_.weight()) continue;
      const Var s = core::sum_all(core::square(store_->var(g, id)));
      sq = sq.valid() ? core::add(sq, s) : s;
    }
    if (sq.valid()) out.loss = core::add(out.loss, core::scale(sq, 0.5f * l2));
  }
  return out;
}

// ---- inference ----------------------------------------------------------------------------

std::vector<TreePrediction> predict_trees(const ModelSet<TreeModel>& models, std::span<const data::Tree> trees,
                                          int batch) {
  ENGRAM_CHECK(batch >= 1, "tree: batch {} must be >= 1", batch);
  const int c = models.first().tree_config().classes;
  for (const TreeModel* m : models.models)
    ENGRAM_CHECK(m->tree_config().classes == c, "tree ensemble: a member of {} classes with one of {}",
                 m->tree_config().classes, c);
  std::vector<TreePrediction> out;
  out.reserve(trees.size());
  core::Graph g(false, size_t{1} << 24);
  models.set_weights(g);
  std::vector<float> mean;  // [N_all, C] the members' mean probabilities (an ensemble)
  for (size_t start = 0; start < trees.size(); start += static_cast<size_t>(batch)) {
    const std::span<const data::Tree> part = trees.subspan(start, std::min(trees.size() - start, size_t(batch)));
    g.reset();
    const float* p = nullptr;
    for (const TreeModel* m : models.models) {
      const Var probs = core::softmax(m->node_logits(g, part, TreeExecution::kByLevel));  // [N_all, C]
      if (models.size() == 1) {
        p = probs.data();
        break;
      }
      if (m == models.models.front()) mean.assign(static_cast<size_t>(probs.numel()), 0.0f);
      for (size_t i = 0; i < mean.size(); ++i) mean[i] += probs.data()[i] / static_cast<float>(models.size());
      p = mean.data();
    }
    for (const data::Tree& t : part) {
      TreePrediction pr;
      pr.classes = c;
      pr.probs.assign(p, p + static_cast<size_t>(t.size()) * c);
      for (int32_t n = 0; n < t.size(); ++n) {
        const float* row = p + static_cast<size_t>(n) * c;
        pr.labels.push_back(static_cast<int32_t>(std::max_element(row, row + c) - row));
      }
      p += static_cast<size_t>(t.size()) * c;
      out.push_back(std::move(pr));
    }
  }
  return out;
}

double TreeScore::loss() const {
  return has_loss && nodes ? ce_sum / double(nodes) : std::numeric_limits<double>::quiet_NaN();
}

TreeScore score_trees(const ModelSet<TreeModel>& models, std::span<const data::Tree> trees, data::SentimentView view,
                      int batch) {
  const int c = models.first().tree_config().classes, want = data::num_sentiment_classes(view);
  ENGRAM_CHECK(c == want || (c == data::kNumFineSentiments && view == data::SentimentView::kBinary),
               "a {}-class tree model cannot be scored on the {} view ({} classes)", c,
               data::sentiment_view_name(view), want);
  const bool fine_as_binary = c != want;  // positive iff p(3) + p(4) > p(0) + p(1)
  TreeScore s;
  s.has_loss = !fine_as_binary;
  const std::vector<TreePrediction> preds = predict_trees(models, trees, batch);
  for (size_t i = 0; i < trees.size(); ++i) {
    const data::Tree& t = trees[i];
    const TreePrediction& p = preds[i];
    for (int32_t n = 0; n < t.size(); ++n) {
      const int32_t y = t.node(n).label;
      if (y == data::kNoLabel) continue;
      ENGRAM_CHECK(y >= 0 && y < want, "tree (line {}): label {} outside the {} view", t.line, y,
                   data::sentiment_view_name(view));
      const float* row = p.probs.data() + static_cast<size_t>(n) * c;
      const int32_t pred = fine_as_binary ? (row[3] + row[4] > row[0] + row[1] ? 1 : 0) : p.labels[n];
      const bool ok = pred == y;
      s.nodes += 1, s.node_correct += ok;
      if (n == t.root()) s.roots += 1, s.root_correct += ok;
      if (s.has_loss) s.ce_sum -= std::log(std::max(row[y], 1e-30f));
    }
  }
  return s;
}

}  // namespace engram::models
