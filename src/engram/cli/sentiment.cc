// `engram sentiment eval|show`: recursive nets and Tree-LSTMs on the Stanford Sentiment
// Treebank; training is `engram train configs/sst-*.yaml`. A thin adapter over models/tree/.
//   engram sentiment eval -m DIR [--split test] [--view fine|binary] [--ensemble DIR ...] [--precision fp32|bf16|int8]
//                                                                      root and all-node accuracy
//   engram sentiment show -m DIR "(3 (2 It) (4 (4 rocks)))" -o tree.svg  (or a plain sentence)
// Training speed per epoch: build/bench/tree_speed.
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/tree/task.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

struct SentimentEvalArgs {
  ModelArgs model;
  std::string split = "test", view, data;
};

void run_eval(const SentimentEvalArgs& a) {
  std::string names;
  decode::DecodeOptions d;
  const auto m = load_model_flags<models::LoadedTreeModel>(a.model, "tree", d, &names);
  const decode::Precision precision = d.precision;
  const data::SentimentView view = a.view.empty() ? m->data.view : data::parse_sentiment_view(a.view);
  const models::SentimentEval e = models::evaluate_sentiment(*m, a.split, view, a.data);
  const int classes = m->model->tree_config().classes;
  std::printf("%s (%s, %d classes%s) on %s/%s.txt, %s view: %lld trees\n", names.c_str(),
              models::tree_cell_name(m->model->tree_config().cell), classes,
              precision == decode::Precision::kFp32
                  ? ""
                  : fmt::format(", {} weights", decode::precision_name(precision)).c_str(),
              e.dir.c_str(), e.split.c_str(),
              data::sentiment_view_name(view).data(), static_cast<long long>(e.trees));
  std::printf("root accuracy     %.2f%% (%lld / %lld)\n", 100 * e.score.root_accuracy(),
              static_cast<long long>(e.score.root_correct), static_cast<long long>(e.score.roots));
  std::printf("all-node accuracy %.2f%% (%lld / %lld labelled nodes)\n", 100 * e.score.node_accuracy(),
              static_cast<long long>(e.score.node_correct), static_cast<long long>(e.score.nodes));
  if (e.score.has_loss) std::printf("loss              %.4f per labelled node\n", e.score.loss());
}

struct SentimentShowArgs {
  ModelArgs model;
  std::string text, out = "tree.svg";
};

void run_show(const SentimentShowArgs& a) {
  decode::DecodeOptions d;
  const auto m = load_model_flags<models::LoadedTreeModel>(a.model, "tree", d);
  io::write_output_file(a.out, models::sentiment_svg(*m, a.text));
  std::printf("%s\n", m->run_line(a.text).c_str());
  std::printf("tree written to %s\n", a.out.c_str());
}

}  // namespace

void register_sentiment(CLI::App& app) {
  auto* cmd = app.add_subcommand("sentiment", "recursive nets and Tree-LSTMs on the Stanford Sentiment Treebank");
  cmd->require_subcommand(1);

  auto ea = std::make_shared<SentimentEvalArgs>();
  auto* eval = cmd->add_subcommand("eval", "root and all-node accuracy on an SST split");
  add_model_flags(eval, ea->model);
  eval->add_option("--split", ea->split, "train | dev | test");
  eval->add_option("--view", ea->view, "fine | binary (default: the view the model was trained on)");
  eval->add_option("--data", ea->data, "SST directory (default: the one the model was trained on)");
  eval->callback([ea] { run_eval(*ea); });

  auto sa = std::make_shared<SentimentShowArgs>();
  auto* show = cmd->add_subcommand("show", "SVG of a tree with every node coloured by its predicted sentiment");
  add_model_flags(show, sa->model);
  show->add_option("text", sa->text, "a tree such as \"(3 (2 It) (4 (4 rocks)))\" or a plain sentence")->required();
  add_output_option(show, sa->out, "SVG file to write");
  show->callback([sa] { run_show(*sa); });
}

}  // namespace engram::cli
