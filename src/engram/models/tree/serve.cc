// The sentiment route of the server (LoadedTreeModel::serve_check / serve): one tree or sentence
// per request; the reply labels every node of the tree with its predicted class distribution.
#include "engram/data/tree.h"
#include "engram/models/serve_json.h"
#include "engram/models/tree/task.h"

namespace engram::models {

namespace {

using nlohmann::json;

std::string read_text(const json& r, const ServeLimits& limits) {
  const std::string text = serve_json::string_field(r, "text", static_cast<size_t>(limits.max_tokens) * 32);
  ENGRAM_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, "'text' is empty");
  return text;
}

}  // namespace

int LoadedTreeModel::serve_check(const json& r, const ServeLimits& limits) const {
  serve_json::check_object(r);
  const std::string text = read_text(r, limits);
  const auto [t, p] = predict(text);  // parses the tree: a malformed one is refused here
  ENGRAM_CHECK(t.tokens.size() <= static_cast<size_t>(limits.max_tokens), "'text' has {} words, more than the limit of {}",
               t.tokens.size(), limits.max_tokens);
  return 1;
}

std::vector<json> LoadedTreeModel::serve(std::span<const json* const> requests) const {
  const ServeLimits unlimited{1, 1 << 20, 1, 1, 1};  // checked by serve_check
  std::vector<json> out;
  for (const json* r : requests) {
    auto [t, p] = predict(read_text(*r, unlimited));
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
    out.push_back({{"label", p.labels[root]},
                   {"name", sentiment_name(p.labels[root], c)},
                   {"probability", p.prob(root)},
                   {"tree", data::format_tree(shown)},
                   {"root", root},
                   {"nodes", std::move(nodes)}});
  }
  return out;
}

}  // namespace engram::models
