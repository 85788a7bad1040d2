// A trained tree model directory: loading, one input line -> the predicted tree, evaluation on an
// SST split, and the sentiment picture.
// Dims: N nodes of one tree, C classes.
#include <fmt/format.h>

#include <cctype>

#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/models/tree/task.h"
#include "engram/models/loading.h"
#include "engram/viz/tree.h"

namespace engram::models {

namespace fs = std::filesystem;

namespace {

// DIR/name, else DIR/../name; "" when neither exists.
fs::path find_file(const fs::path& dir, const std::string& name) {
  for (const fs::path& p : {dir / name, dir.parent_path() / name})
    if (fs::exists(p)) return p;
  return {};
}

}  // namespace

const char* sentiment_name(int32_t label, int classes) {
  static const char* fine[5] = {"very negative", "negative", "neutral", "positive", "very positive"};
  static const char* binary[2] = {"negative", "positive"};
  if (classes == 5 && label >= 0 && label < 5) return fine[label];
  if (classes == 2 && label >= 0 && label < 2) return binary[label];
  return "unlabelled";
}

std::unique_ptr<LoadedTreeModel> load_tree_model(const fs::path& dir) {
  auto m = std::make_unique<LoadedTreeModel>();
  m->model_dir = dir;
  m->model = load_checkpoint_model<TreeModel, TreeConfig>(dir);
  const TreeConfig& cfg = m->model->tree_config();
  const fs::path vocab = find_file(dir, "vocab.txt");
  ENGRAM_CHECK(!vocab.empty(), "{}: no vocab.txt (in the directory or its parent)", dir.string());
  m->vocab = data::Vocab::load(vocab.string());
  ENGRAM_CHECK(m->vocab.size() == cfg.vocab, "{}: vocab.txt has {} words, the model {}", dir.string(), m->vocab.size(),
               cfg.vocab);
  if (const fs::path d = find_file(dir, "data.yaml"); !d.empty()) m->data = io::load_config<TreeDataConfig>(d);
  return m;
}

void LoadedTreeModel::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) {
  setup.set_members(*this, std::move(members), [&](const LoadedModel& member) {
    const auto& m = dynamic_cast<const LoadedTreeModel&>(member);
    check_same_vocab(vocab, m.vocab, *this, m);
    const int c = model->tree_config().classes, mc = m.model->tree_config().classes;
    ENGRAM_CHECK(mc == c, "--ensemble: {} predicts {} classes and {} {} (an ensemble shares its classes)",
                 m.dir().string(), mc, dir().string(), c);
  });
}

data::Tree LoadedTreeModel::read_input(const std::string& text) const {
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  data::Tree t;
  if (start < text.size() && text[start] == '(') {
    data::TreeReadOptions opt;
    opt.allow_unlabelled = true;
    t = data::parse_tree(text, opt, "<input>", 1);
  } else {
    t = data::right_branching_tree(text);
  }
  data::assign_word_ids(vocab, &t);
  return t;
}

std::pair<data::Tree, TreePrediction> LoadedTreeModel::predict(const std::string& text) const {
  data::Tree t = read_input(text);
  std::vector<TreePrediction> p = predict_trees(models(), std::span<const data::Tree>(&t, 1));
  return {std::move(t), std::move(p[0])};
}

std::string LoadedTreeModel::run_line(const std::string& line) {
  auto [t, p] = predict(line);
  const int c = p.classes;
  const int32_t root = t.root();
  data::Tree shown = t;
  for (int32_t n = 0; n < shown.size(); ++n) shown.nodes[static_cast<size_t>(n)].label = p.labels[n];
  return fmt::format("{} {} ({:.2f})  {}", p.labels[root], sentiment_name(p.labels[root], c), p.prob(root),
                     data::format_tree(shown));
}

SentimentEval evaluate_sentiment(const LoadedTreeModel& m, const std::string& split, data::SentimentView view,
                                 const std::string& data_dir) {
  SentimentEval e;
  TreeDataConfig d = m.data;
  if (!data_dir.empty()) d.dir = data_dir;
  e.dir = sst_data_dir(d);
  e.split = split;
  e.view = view;
  const std::vector<data::Tree> trees = load_sst_split(e.dir, split, view, m.vocab);
  e.trees = static_cast<int64_t>(trees.size());
  // No accuracy or loss of nothing: 0 / 0 is an error, not a score.
  ENGRAM_CHECK(e.trees > 0, "{}/{}.txt: no trees{}", e.dir, split,
               view == data::SentimentView::kBinary ? " with a non-neutral root (the binary view)" : "");
  e.score = score_trees(m.models(), trees, view, d.valid_batch);
  ENGRAM_CHECK(e.score.roots > 0, "{}/{}.txt: no tree has a labelled root in the {} view", e.dir, split,
               data::sentiment_view_name(view));
  return e;
}

std::string sentiment_svg(const LoadedTreeModel& m, const std::string& text, std::string* summary) {
  const auto [t, p] = m.predict(text);
  const int c = p.classes;
  viz::TreeDiagram d;
  d.root = t.root();
  d.nodes.resize(static_cast<size_t>(t.size()));
  for (int32_t n = 0; n < t.size(); ++n) {
    viz::TreeDiagramNode& v = d.nodes[static_cast<size_t>(n)];
    for (int32_t ch : t.children(n)) v.children.push_back(ch);
    if (t.is_leaf(n)) v.word = data::unescape_ptb_token(t.tokens[static_cast<size_t>(t.node(n).leaf)]);
    const int32_t y = p.labels[n];
    v.mark = viz::sentiment_mark(y, c);
    v.note = fmt::format("{:.2f}", p.prob(n));
    v.fill = viz::sentiment_fill(y, c);
    const int32_t gold = t.node(n).label;
    v.tooltip = fmt::format("{}{} {:.2f}{}", v.word.empty() ? "" : v.word + ": ", sentiment_name(y, c), p.prob(n),
                            gold == data::kNoLabel ? "" : fmt::format(" (given label {})", gold));
  }
  const int32_t root = t.root();
  const std::string line = fmt::format("{} {} ({:.2f})", p.labels[root], sentiment_name(p.labels[root], c), p.prob(root));
  d.title = fmt::format("{}  →  {}", data::display_sentence(t), line);
  for (int32_t y = 0; y < c; ++y) d.legend.emplace_back(viz::sentiment_fill(y, c), sentiment_name(y, c));
  if (summary) *summary = line;
  return viz::tree_svg(d);
}

}  // namespace engram::models
