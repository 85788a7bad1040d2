// The tree family (models/tree): every cell against finite differences (leaf, N-ary node,
// child-sum with 0, 1 and 3 children and the batched child-sum), the two executions (node by node
// and batched by level) giving the same loss and gradients, the recipe and config checks, a
// checkpoint round trip through models::load_model, a learnability test (a few trees overfit in
// seconds) and the whole family path on a tiny SST directory.
// Dims: n nodes, m children, E embedding, H hidden, N arity.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/core/grad_check.h"
#include "engram/core/ops.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/models/registry.h"
#include "engram/models/tree/cells.h"
#include "engram/models/tree/task.h"
#include "engram/optim/factory.h"
#include "viz/xml_check.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;
using core::Graph;
using core::Shape;
using core::Tensor;
using core::Var;
using data::testing::CorpusTest;
using data::testing::TempDir;

// ---- cells against finite differences ------------------------------------------------------

struct CellCase {
  std::string name;
  std::vector<Shape> inputs;  // differentiable inputs, uniform in [-1, 1]
  // Builds the cell into the store and returns the output of the inputs.
  std::function<std::function<Var(Graph&, const std::vector<Var>&)>(nn::ParamStore&, core::Rng&)> build;
};

core::GradCheckResult check_cell(const CellCase& c) {
  nn::ParamStore store;
  core::Rng rng(11);
  auto forward = c.build(store, rng);
  for (nn::ParamId id = 0; id < store.count(); ++id) {  // non-zero biases, weights of a useful size
    Tensor v = store.value(id);
    for (int64_t i = 0; i < v.numel(); ++i) v.data[i] = rng.uniform(-0.6f, 0.6f);
  }
  core::Rng in_rng(5);
  std::vector<std::vector<float>> values(c.inputs.size()), grads(c.inputs.size());
  std::vector<core::GradTarget> targets;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const int64_t n = c.inputs[k].numel();
    values[k].resize(n), grads[k].resize(n);
    for (auto& v : values[k]) v = in_rng.uniform(-1.0f, 1.0f);
    targets.push_back({fmt::format("in{}", k), values[k].data(), grads[k].data(), n});
  }
  for (nn::ParamId id = 0; id < store.count(); ++id)
    targets.push_back({store.name(id), store.value(id).data, store.grad(id).data, store.shape(id).numel()});
  auto f = [&](Graph& g) {
    std::vector<Var> vars;
    for (size_t k = 0; k < c.inputs.size(); ++k) vars.push_back(g.leaf(Tensor{values[k].data(), c.inputs[k]}, grads[k].data()));
    return forward(g, vars);
  };
  return core::grad_check(f, targets, {.max_elements = 64});
}

constexpr int kE = 4, kH = 3;

Var both(const NodeState& s) { return s.c.valid() ? core::concat({s.h, s.c}, 1) : s.h; }  // [n, H or 2H]

std::vector<CellCase> cell_cases() {
  using Fwd = std::function<Var(Graph&, const std::vector<Var>&)>;
  std::vector<CellCase> cases;
  cases.push_back({"rnn/leaf (E != H: projection)", {{2, kE}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<RecursiveCell>(s, "cell", kE, kH, 2, r);
                     return [c](Graph& g, const std::vector<Var>& in) { return both(c->leaf(g, in[0])); };
                   }});
  cases.push_back({"rnn/binary node", {{2, 2 * kH}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<RecursiveCell>(s, "cell", kE, kH, 2, r);
                     return [c](Graph& g, const std::vector<Var>& in) { return both(c->compose(g, in[0])); };
                   }});
  cases.push_back({"treelstm/leaf", {{2, kE}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<NaryTreeLstmCell>(s, "cell", kE, kH, 2, r);
                     return [c](Graph& g, const std::vector<Var>& in) { return both(c->leaf(g, in[0])); };
                   }});
  cases.push_back({"treelstm/binary node", {{2, 2 * kH}, {2, 2 * kH}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<NaryTreeLstmCell>(s, "cell", kE, kH, 2, r);
                     return [c](Graph& g, const std::vector<Var>& in) { return both(c->compose(g, in[0], in[1])); };
                   }});
  cases.push_back({"treelstm/3-ary node", {{2, 3 * kH}, {2, 3 * kH}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<NaryTreeLstmCell>(s, "cell", kE, kH, 3, r);
                     return [c](Graph& g, const std::vector<Var>& in) { return both(c->compose(g, in[0], in[1])); };
                   }});
  cases.push_back({"childsum/0 children (leaf)", {{1, kE}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<ChildSumTreeLstmCell>(s, "cell", kE, kH, r);
                     return [c](Graph& g, const std::vector<Var>& in) { return both(c->leaf(g, in[0])); };
                   }});
  for (int k : {1, 3})
    cases.push_back({fmt::format("childsum/{} child{}", k, k == 1 ? "" : "ren"), {{k, kH}, {k, kH}},
                     [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                       auto c = std::make_shared<ChildSumTreeLstmCell>(s, "cell", kE, kH, r);
                       return [c](Graph& g, const std::vector<Var>& in) { return both(c->compose_one(g, in[0], in[1])); };
                     }});
  // Two nodes with 1 and 3 children in one batched call (the level-batched form).
  cases.push_back({"childsum/batched 1 + 3 children", {{4, kH}, {4, kH}}, [](nn::ParamStore& s, core::Rng& r) -> Fwd {
                     auto c = std::make_shared<ChildSumTreeLstmCell>(s, "cell", kE, kH, r);
                     return [c](Graph& g, const std::vector<Var>& in) {
                       return both(c->compose(g, in[0], in[1], {1, 0, 1, 1}, 2));
                     };
                   }});
  return cases;
}

TEST(TreeCells, EveryCellMatchesFiniteDifferences) {
  std::printf("%-36s %12s %8s  %s\n", "cell", "worst err", "checked", "worst element");
  for (const CellCase& c : cell_cases()) {
    core::GradCheckResult r;
    ASSERT_NO_THROW(r = check_cell(c)) << c.name;
    std::printf("%-36s %12.3e %8lld  %s\n", c.name.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << c.name;
    EXPECT_LE(r.max_error, 1e-2) << c.name << ": " << r.worst;
  }
}

TEST(TreeCells, BatchedChildSumEqualsOneNodeAtATime) {
  nn::ParamStore store;
  core::Rng rng(3);
  ChildSumTreeLstmCell cell(store, "cell", kE, kH, rng);
  Graph g;
  std::vector<float> hv(4 * kH), cv(4 * kH);
  for (auto* v : {&hv, &cv})
    for (float& x : *v) x = rng.uniform(-1.0f, 1.0f);
  const Var h = g.constant(Shape{4, kH}, hv.data()), c = g.constant(Shape{4, kH}, cv.data());
  // node 0 has child row 1; node 1 has rows 0, 2, 3
  const NodeState batched = cell.compose(g, h, c, {1, 0, 1, 1}, 2);
  const NodeState one = cell.compose_one(g, core::slice(h, 0, 1, 2), core::slice(c, 0, 1, 2));
  const NodeState three = cell.compose_one(g, core::select_rows(h, {0, 2, 3}), core::select_rows(c, {0, 2, 3}));
  for (int j = 0; j < kH; ++j) {
    EXPECT_NEAR(batched.h.data()[j], one.h.data()[j], 1e-6f);
    EXPECT_NEAR(batched.c.data()[j], one.c.data()[j], 1e-6f);
    EXPECT_NEAR(batched.h.data()[kH + j], three.h.data()[j], 1e-6f);
    EXPECT_NEAR(batched.c.data()[kH + j], three.c.data()[j], 1e-6f);
  }
}

// ---- the two executions --------------------------------------------------------------------

data::Vocab toy_vocab() {
  return data::Vocab::from_tokens({"It", "rocks", "good", "bad", "not", "very", "film", "a", "the", "is", "."});
}

// Trees of different heights, a unary node, an unlabelled node, a word outside the vocabulary
// and (with_ternary) a node of three children.
std::vector<data::Tree> toy_trees(const data::Vocab& v, bool with_ternary) {
  std::vector<std::string> lines = {
      "(3 (2 It) (4 (4 rocks)))",
      "(1 (2 the) (1 (2 film) (1 (2 is) (1 (2 not) (3 good)))))",
      "(4 (3 (2 a) (4 (4 very) (3 good))) (2 (2 film) (2 .)))",
      "(2 zebra)",
      "(0 (-1 (2 not) (3 good)) (0 bad))",
  };
  if (with_ternary) lines.push_back("(1 (2 a) (0 bad) (2 film))");
  std::vector<data::Tree> out;
  data::TreeReadOptions opt;
  opt.allow_unlabelled = true;
  for (const std::string& l : lines) out.push_back(data::parse_tree(l, opt));
  data::Tree rb = data::right_branching_tree("It is a very good film .");
  rb.nodes.back().label = 4;
  out.push_back(rb);
  data::assign_word_ids(v, &out);
  return out;
}

TreeConfig small_config(TreeCell cell, int vocab, int arity = 2) {
  TreeConfig c;
  c.cell = cell;
  c.embed = 6;
  c.hidden = 5;
  c.classes = 5;
  c.arity = arity;
  c.dropout = 0.3f;
  c.embed_init = 0.5f;
  c.vocab = vocab;
  return c;
}

struct RunResult {
  double loss = 0, ce = 0;
  int64_t labelled = 0;
  std::vector<float> grads;
};

RunResult run(TreeModel& m, const std::vector<data::Tree>& trees, TreeExecution exec) {
  m.params().zero_grad();
  Graph g;
  core::Rng dropout(77);
  const TreeLoss l = m.loss(g, trees, exec, &dropout, 1e-3f);
  g.backward(l.loss);
  return {l.loss.data()[0], l.ce_sum, l.labelled,
          std::vector<float>(m.params().grads(), m.params().grads() + m.params().numel())};
}

void expect_same(TreeModel& m, const std::vector<data::Tree>& trees, const std::string& what) {
  const RunResult a = run(m, trees, TreeExecution::kPerNode), b = run(m, trees, TreeExecution::kByLevel);
  EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::max(1.0, std::abs(a.loss))) << what;
  EXPECT_NEAR(a.ce, b.ce, 1e-5 * std::max(1.0, std::abs(a.ce))) << what;
  EXPECT_EQ(a.labelled, b.labelled) << what;
  ASSERT_EQ(a.grads.size(), b.grads.size());
  double scale = 0;
  for (float x : a.grads) scale = std::max(scale, double(std::abs(x)));
  ASSERT_GT(scale, 0) << what;
  for (nn::ParamId id = 0; id < m.params().count(); ++id) {
    const int64_t off = m.params().offset(id), n = m.params().shape(id).numel();
    double worst = 0, norm = 0;
    for (int64_t i = off; i < off + n; ++i)
      worst = std::max(worst, double(std::abs(a.grads[i] - b.grads[i]))), norm += double(a.grads[i]) * a.grads[i];
    EXPECT_LE(worst, 1e-5 * scale) << what << ": gradient of " << m.params().name(id);
    EXPECT_GT(norm, 0) << what << ": no gradient reached " << m.params().name(id);
  }
}

TEST(TreeModel, PerNodeAndLevelBatchedGiveTheSameLossAndGradients) {
  const data::Vocab v = toy_vocab();
  for (TreeCell cell : {TreeCell::kRnn, TreeCell::kTreeLstm, TreeCell::kChildSum}) {
    const bool ternary = cell == TreeCell::kChildSum;
    const std::vector<data::Tree> trees = toy_trees(v, ternary);
    core::Rng rng(9);
    TreeModel m(small_config(cell, v.size()), rng);
    expect_same(m, trees, tree_cell_name(cell));
  }
  // The 3-ary Tree-LSTM (and a recursive net with E == H: the leaves are the embeddings).
  {
    core::Rng rng(9);
    TreeModel m(small_config(TreeCell::kTreeLstm, v.size(), 3), rng);
    expect_same(m, toy_trees(v, true), "treelstm arity 3");
  }
  {
    TreeConfig c = small_config(TreeCell::kRnn, v.size());
    c.embed = c.hidden;
    core::Rng rng(9);
    TreeModel m(c, rng);
    expect_same(m, toy_trees(v, false), "rnn embed == hidden");
  }
}

TEST(TreeModel, ErrorsOnTooManyChildrenMissingWordIdsAndBadLabels) {
  const data::Vocab v = toy_vocab();
  core::Rng rng(1);
  TreeModel m(small_config(TreeCell::kTreeLstm, v.size()), rng);
  std::vector<data::Tree> t = {data::parse_tree("(1 (2 a) (0 bad) (2 film))")};
  Graph g;
  EXPECT_THROW(m.node_states(g, t, TreeExecution::kByLevel), Error);  // no word ids yet
  data::assign_word_ids(v, &t);
  for (TreeExecution e : {TreeExecution::kPerNode, TreeExecution::kByLevel}) {
    try {
      m.node_states(g, t, e);
      ADD_FAILURE() << "a 3-child node passed a binary Tree-LSTM";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("at most tree.arity = 2"), std::string::npos) << err.what();
    }
  }
  TreeConfig two = small_config(TreeCell::kRnn, v.size());
  two.classes = 2;
  TreeModel binary(two, rng);
  std::vector<data::Tree> fine = {data::parse_tree("(4 (3 good) (2 film))")};
  data::assign_word_ids(v, &fine);
  EXPECT_THROW(binary.loss(g, fine, TreeExecution::kByLevel), Error);
}

class TreeSst : public CorpusTest {};

// 25 real dev trees (up to ~30 levels) in one batch: the executions agree on every cell.
TEST_F(TreeSst, LevelBatchedMatchesPerNodeOnSstTrees) {
  std::vector<data::Tree> trees = data::read_tree_file(path("sst/dev.txt"));
  trees.resize(25);
  data::TokenCounts counts;
  data::count_tree_tokens(trees, &counts);
  const data::Vocab v = data::Vocab::build(counts, {.min_count = 2});
  data::assign_word_ids(v, &trees);
  int max_height = 0;
  for (const auto& t : trees) max_height = std::max(max_height, t.height());
  EXPECT_GT(max_height, 10);
  for (TreeCell cell : {TreeCell::kRnn, TreeCell::kTreeLstm, TreeCell::kChildSum}) {
    core::Rng rng(4);
    TreeModel m(small_config(cell, v.size()), rng);
    expect_same(m, trees, std::string("sst ") + tree_cell_name(cell));
  }
}

// ---- recipe, checkpoint, learning ----------------------------------------------------------

TEST(TreeRun, RecipeDefaultsAndConfigChecks) {
  const YAML::Node node = YAML::Load("model: tree\ndata: {view: binary}\ntree: {cell: rnn}\n");
  const TreeRunConfig c = read_tree_config(node, "<test>", {});
  EXPECT_EQ(c.tree.classes, 2);
  EXPECT_EQ(c.train.optimizer.name, "adagrad");
  EXPECT_FLOAT_EQ(c.train.optimizer.lr, 0.05f);
  EXPECT_EQ(c.data.batch_size, 25);
  EXPECT_FLOAT_EQ(c.task.l2, 1e-4f);
  EXPECT_FLOAT_EQ(c.tree.dropout, 0.5f);
  EXPECT_EQ(c.tree.hidden, 150);
  EXPECT_EQ(c.tree.embed, 300);
  EXPECT_EQ(c.train.run_dir, "runs/sst-rnn-binary");
  EXPECT_EQ(read_tree_config(YAML::Load("model: tree\n"), "<test>", {}).tree.classes, 5);
  EXPECT_THROW(read_tree_config(node, "<test>", {"tree.classes=5"}), Error);
  EXPECT_THROW(read_tree_config(node, "<test>", {"data.veiw=fine"}), Error);
  EXPECT_THROW(read_tree_config(node, "<test>", {"tree.cell=gru"}), Error);
  const std::string dumped = family("tree").dump_config(node, "<test>", {"task.execution=node"});
  EXPECT_NE(dumped.find("execution: node"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("name: adagrad"), std::string::npos) << dumped;
  ASSERT_EQ(c.train.optimizer.param_lr.size(), 1u);
  EXPECT_EQ(c.train.optimizer.param_lr[0].params, "embedding");
  EXPECT_FLOAT_EQ(c.train.optimizer.param_lr[0].lr, 0.1f);
  EXPECT_TRUE(read_tree_config(node, "<test>", {"train.optimizer.param_lr=[]"}).train.optimizer.param_lr.empty());
  EXPECT_THROW(read_tree_config(node, "<test>", {"train.optimizer.param_lr=[{params: embedding, rate: 1}]"}), Error);
}

// Tai et al. train the word vectors at their own rate, 0.1, the rest with AdaGrad at 0.05: with
// the recipe's optimizer (and every configs/sst-*.yaml) one AdaGrad step, which moves each value
// by exactly its rate (lr * g / |g|), moves the embeddings by 0.1 and every other weight by 0.05.
TEST(TreeRun, EmbeddingsTrainAtThePapersRate) {
  const data::Vocab v = toy_vocab();
  std::vector<fs::path> configs;
  for (const auto& e : fs::directory_iterator(fs::path(ENGRAM_SOURCE_DIR) / "configs"))
    if (e.path().filename().string().rfind("sst-", 0) == 0) configs.push_back(e.path());
  ASSERT_EQ(configs.size(), 6u);
  for (const fs::path& file : configs) {
    const YAML::Node node = io::load_yaml_file(file);
    EXPECT_TRUE(node["train"]["optimizer"]["param_lr"].IsSequence()) << file << ": the rate is written out";
    const TreeRunConfig cfg = read_tree_config(node, file.string(), {});
    core::Rng rng(3);
    TreeModel m(small_config(cfg.tree.cell, v.size()), rng);
    nn::ParamStore& p = m.params();
    std::vector<float> before(p.values(), p.values() + p.numel());
    for (int64_t i = 0; i < p.numel(); ++i) p.grads()[i] = (i % 2 ? 0.5f : -2.0f);
    optim::make_optimizer(p, cfg.train.optimizer)->step();
    for (nn::ParamId id = 0; id < p.count(); ++id) {
      const float rate = id == m.embedding_weight() ? 0.1f : 0.05f;
      const int64_t at = p.offset(id);
      EXPECT_NEAR(std::fabs(p.values()[at] - before[static_cast<size_t>(at)]), rate, 1e-6) << file << " " << p.name(id);
    }
  }
}

// A run stopped after one epoch and resumed for a second ends with the parameters of a run of two
// epochs in one go (the embeddings' own rate comes back from the config, not the checkpoint).
TEST(TreeFamily, ResumedRunMatchesAnUninterruptedOne) {
  TempDir dir;
  const std::string trees =
      "(3 (2 It) (4 (4 rocks)))\n(1 (2 the) (1 (2 film) (1 (2 is) (1 bad))))\n(4 (2 a) (4 (4 very) (3 good)))\n"
      "(0 (2 not) (0 (0 bad) (2 .)))\n(2 (2 the) (2 film))\n";
  fs::create_directories(dir.file("sst"));
  for (const char* split : {"train", "dev", "test"}) dir.write(std::string("sst/") + split + ".txt", trees);
  auto train = [&](const std::string& run, int epochs) {
    const std::vector<std::string> sets = {"data.dir=" + dir.file("sst"), "tree.embed=8", "tree.hidden=8",
                                           "train.max_epochs=" + std::to_string(epochs), "data.batch_size=2",
                                           "train.log_every=1000", "train.run_dir=" + dir.file(run)};
    ::testing::internal::CaptureStdout();
    family("tree").train(YAML::Load("model: tree\n"), "<test>", sets);
    ::testing::internal::GetCapturedStdout();
    return load_model_as<LoadedTreeModel>(fs::path(dir.file(run)) / "last", "tree");
  };
  train("split", 1);
  const auto resumed = train("split", 2);
  const auto whole = train("whole", 2);
  ASSERT_EQ(resumed->params().numel(), whole->params().numel());
  for (int64_t i = 0; i < whole->params().numel(); ++i)
    ASSERT_EQ(resumed->params().values()[i], whole->params().values()[i]) << i;
}

TEST(TreeFamily, CheckpointRoundTripsThroughLoadModel) {
  TempDir dir;
  const data::Vocab v = toy_vocab();
  core::Rng rng(5);
  TreeModel m(small_config(TreeCell::kTreeLstm, v.size()), rng);
  const fs::path model_dir = dir.file("model");
  const std::string vocab_file = dir.file("vocab.txt");
  v.save(vocab_file);
  io::CheckpointData d;
  d.model_name = m.name();
  d.config = m.config();
  d.params = &m.params();
  d.files = {vocab_file};
  io::save_checkpoint(model_dir, d);

  std::unique_ptr<LoadedModel> loaded = load_model(model_dir);
  EXPECT_EQ(loaded->family(), "tree");
  LoadedTreeModel& t = model_as<LoadedTreeModel>(*loaded, "tree");
  EXPECT_EQ(t.model->tree_config().cell, TreeCell::kTreeLstm);
  ASSERT_EQ(t.params().numel(), m.params().numel());
  for (int64_t i = 0; i < m.params().numel(); ++i) ASSERT_EQ(t.params().values()[i], m.params().values()[i]);
  const std::vector<data::Tree> trees = toy_trees(v, false);
  const auto a = predict_trees(m, trees), b = predict_trees(*t.model, trees);
  for (size_t i = 0; i < trees.size(); ++i) EXPECT_EQ(a[i].probs, b[i].probs);
  // run_line: a tree (its labels ignored) or a plain sentence (right-branching).
  const std::string line = t.run_line("(3 (2 It) (4 (4 rocks)))");
  EXPECT_NE(line.find("It) ("), std::string::npos) << line;
  const std::string plain = t.run_line("It rocks");
  EXPECT_NE(plain.find(" It) ("), std::string::npos) << plain;
  EXPECT_EQ(t.run_line("It rocks").substr(0, 1), t.run_line("(2 (2 It) (2 rocks))").substr(0, 1));
  EXPECT_THROW(t.run_line("(3 (2 It) (4 rocks)"), Error);  // unbalanced
  EXPECT_THROW(t.run_line("   "), Error);
  // The damaged: a model directory of another vocabulary size.
  data::Vocab::from_tokens({"x"}).save((model_dir / "vocab.txt").string());
  EXPECT_THROW(load_model(model_dir), Error);
}

// Six labelled trees overfit (every node right) within a few hundred AdaGrad steps, each cell.
TEST(TreeModel, OverfitsAFewTreesInSeconds) {
  const data::Vocab v = toy_vocab();
  const std::vector<data::Tree> trees = toy_trees(v, false);
  for (TreeCell cell : {TreeCell::kRnn, TreeCell::kTreeLstm, TreeCell::kChildSum}) {
    const auto t0 = std::chrono::steady_clock::now();
    TreeConfig c = small_config(cell, v.size());
    c.embed = 16, c.hidden = 16, c.dropout = 0.0f, c.embed_init = 0.1f;
    core::Rng rng(21);
    TreeModel m(c, rng);
    auto opt = optim::make_optimizer(m.params(), {.name = "adagrad", .lr = 0.1f});
    Graph g;
    double first = 0, last = 0;
    for (int step = 0; step < 300; ++step) {
      m.params().zero_grad();
      g.reset();
      const TreeLoss l = m.loss(g, trees, TreeExecution::kByLevel, nullptr, 1e-5f);
      g.backward(l.loss);
      opt->step();
      (step == 0 ? first : last) = l.ce_sum / double(l.labelled);
    }
    const TreeScore s = score_trees(m, trees, data::SentimentView::kFine);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-9s loss %.3f -> %.4f per node, all-node accuracy %.1f%%, %.2f s\n", tree_cell_name(cell), first,
                last, 100 * s.node_accuracy(), secs);
    EXPECT_LT(last, 0.05 * first) << tree_cell_name(cell);
    EXPECT_EQ(s.node_correct, s.nodes) << tree_cell_name(cell);
    EXPECT_EQ(s.root_correct, s.roots) << tree_cell_name(cell);
  }
}

TEST(TreeModel, FineModelScoredOnTheBinaryView) {
  const data::Vocab v = toy_vocab();
  core::Rng rng(2);
  TreeModel m(small_config(TreeCell::kRnn, v.size()), rng);
  std::vector<data::Tree> fine = toy_trees(v, false);
  std::vector<data::Tree> binary = data::sentiment_view(fine, data::SentimentView::kBinary);
  const auto preds = predict_trees(m, binary);
  const TreeScore s = score_trees(m, binary, data::SentimentView::kBinary);
  int64_t nodes = 0, correct = 0;
  for (size_t i = 0; i < binary.size(); ++i)
    for (int32_t n = 0; n < binary[i].size(); ++n) {
      const int32_t y = binary[i].node(n).label;
      if (y < 0) continue;
      const float* p = preds[i].probs.data() + n * 5;
      ++nodes, correct += (p[3] + p[4] > p[0] + p[1]) == (y == 1);
    }
  EXPECT_EQ(s.nodes, nodes);
  EXPECT_EQ(s.node_correct, correct);
  EXPECT_FALSE(s.has_loss);
  TreeConfig two = small_config(TreeCell::kRnn, v.size());
  two.classes = 2;
  TreeModel b(two, rng);
  EXPECT_THROW(score_trees(b, fine, data::SentimentView::kFine), Error);
}

// The picture draws the model's prediction: one circle per node of the binarised tree, each
// node's tooltip its word, predicted class and probability, and the summary (the title's right
// side) is run_line's root part.
void expect_svg_draws_prediction(LoadedTreeModel& m, const std::string& text) {
  SCOPED_TRACE(m.dir().string());
  std::string root;
  const std::string svg = sentiment_svg(m, text, &root);
  const auto [tree, pred] = m.predict(text);
  const std::string line = m.run_line(text);
  EXPECT_EQ(root, line.substr(0, line.find("  "))) << line;
  viz::testing::XmlElement doc;
  ASSERT_NO_THROW(doc = viz::testing::parse_xml(svg)) << svg;
  EXPECT_EQ(doc.find_all("circle").size(), static_cast<size_t>(tree.size()));
  std::vector<std::string> tooltips, want;
  for (const viz::testing::XmlElement* t : doc.find_all("title")) tooltips.push_back(t->text);
  for (int32_t n = 0; n < tree.size(); ++n) {
    const std::string word = tree.is_leaf(n) ? tree.tokens[static_cast<size_t>(tree.node(n).leaf)] + ": " : "";
    want.push_back(fmt::format("{}{} {:.2f}", word, sentiment_name(pred.labels[n], pred.classes), pred.prob(n)));
  }
  std::sort(tooltips.begin(), tooltips.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(tooltips, want);
  bool title = false;
  for (const viz::testing::XmlElement* t : doc.find_all("text")) title = title || t->text == text + "  →  " + root;
  EXPECT_TRUE(title) << svg;
}

// The family path end to end on a tiny SST directory: engram train's entry, resume-safe files,
// load_model of the run directory, evaluation and the picture.
TEST(TreeFamily, TrainsEvaluatesAndDrawsFromATinySstDirectory) {
  TempDir dir;
  const std::string trees =
      "(3 (2 It) (4 (4 rocks)))\n(1 (2 the) (1 (2 film) (1 (2 is) (1 bad))))\n(4 (2 a) (4 (4 very) (3 good)))\n"
      "(0 (2 not) (0 (0 bad) (2 .)))\n(2 (2 the) (2 film))\n";
  fs::create_directories(dir.file("sst"));
  for (const char* split : {"train", "dev", "test"}) dir.write(std::string("sst/") + split + ".txt", trees);
  const std::vector<std::string> sets = {"data.dir=" + dir.file("sst"), "tree.embed=8",        "tree.hidden=8",
                                         "train.max_epochs=3",            "data.batch_size=2",   "train.log_every=1000",
                                         "train.run_dir=" + dir.file("run")};
  ::testing::internal::CaptureStdout();
  const std::string summary = family("tree").train(YAML::Load("model: tree\n"), "<test>", sets);
  ::testing::internal::GetCapturedStdout();
  EXPECT_NE(summary.find("done: 9 steps"), std::string::npos) << summary;
  for (const char* f : {"train.yaml", "vocab.txt", "data.yaml", "best/config.yaml", "best/vocab.txt", "last/data.yaml"})
    EXPECT_TRUE(fs::exists(fs::path(dir.file("run")) / f)) << f;
  auto m = load_model_as<LoadedTreeModel>(dir.file("run"), "tree");
  EXPECT_EQ(m->dir().filename(), "best");
  const SentimentEval e = evaluate_sentiment(*m, "test", data::SentimentView::kFine);
  EXPECT_EQ(e.trees, 5);
  EXPECT_EQ(e.score.roots, 5);
  EXPECT_EQ(e.score.nodes, 24);
  const SentimentEval b = evaluate_sentiment(*m, "dev", data::SentimentView::kBinary);
  EXPECT_EQ(b.trees, 4);  // the neutral-root tree dropped
  expect_svg_draws_prediction(*m, "It rocks");
  // The tiny run's probabilities are nearly uniform; the golden model's differ node by node.
  expect_svg_draws_prediction(
      *load_model_as<LoadedTreeModel>(fs::path(ENGRAM_SOURCE_DIR) / "tests" / "golden" / "models" / "tree", "tree"),
      "It rocks");
}

}  // namespace
}  // namespace engram::models
