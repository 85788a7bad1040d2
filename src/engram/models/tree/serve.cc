// The sentiment route of the server over the inference contract (inference.h): one tree or
// sentence per request, parsed once; the trees of a batch are predicted together
// (predict_trees); the reply labels every node with its predicted class distribution.
#include "engram/data/tree.h"
#include "engram/models/serve_json.h"
#include "engram/models/tree/task.h"

namespace engram::models {

namespace {

using nlohmann::json;

json tree_reply(const data::Tree& t, const TreePrediction& p) {
  const int c = p.classes;
  json nodes = json::array();
  for (int32_t n = 0; n < t.size(); ++n) {
    json node = {{"children", json::array()},
                 {"label", p.labels[n]},
                 {"probability", p.prob(n)},
                 {"probs", std::vector<float>(p.probs.begin() + static_cast<int64_t>(n) * c,
                                              p.probs.begin() + static_cast<int64_t>(n + 1) * c)}};
    for (int32_t ch : t.children(n)) node["children"].push_back(ch);
    if (t.is_leaf(n)) node["word"] = data::unescape_ptb_token(t.tokens[static_cast<size_t>(t.node(n).leaf)]);
    nodes.push_back(std::move(node));
  }
  const int32_t root = t.root();
  data::Tree shown = t;
  for (int32_t n = 0; n < shown.size(); ++n) shown.nodes[static_cast<size_t>(n)].label = p.labels[n];
  return {{"label", p.labels[root]},
          {"name", sentiment_name(p.labels[root], c)},
          {"probability", p.prob(root)},
          {"tree", data::format_tree(shown)},
          {"root", root},
          {"nodes", std::move(nodes)}};
}

}  // namespace

const InferenceSpec& LoadedTreeModel::inference() const {
  static const InferenceSpec spec{{"text"}, {{"batch", "precision"}, {}}};
  return spec;
}

std::unique_ptr<Request> LoadedTreeModel::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<data::Tree>(body, inference(), family(), limits, [&](const json& r) {
    const std::string text = serve_json::string_field(r, "text", static_cast<size_t>(limits.max_tokens) * 32);
    ENGRAM_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, "'text' is empty");
    data::Tree t = read_input(text);  // a malformed tree is refused here
    ENGRAM_CHECK(t.tokens.size() <= static_cast<size_t>(limits.max_tokens),
                 "'text' has {} words, more than the limit of {}", t.tokens.size(), limits.max_tokens);
    return std::vector<data::Tree>{std::move(t)};
  });
}

std::vector<json> LoadedTreeModel::run_requests(std::span<const Request* const> requests) const {
  auto run = [&](std::span<const data::Tree* const> trees, const decode::DecodeOptions&) {
    std::vector<data::Tree> batch;
    for (const data::Tree* t : trees) batch.push_back(*t);
    const std::vector<TreePrediction> ps = predict_trees(models(), batch);
    std::vector<json> out;
    for (size_t i = 0; i < batch.size(); ++i) out.push_back(tree_reply(batch[i], ps[i]));
    return out;
  };
  return models::run_requests<data::Tree>(requests, run, single_reply);
}

}  // namespace engram::models
