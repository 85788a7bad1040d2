// The summarize route of the server over the inference contract (inference.h): one article per
// request; articles asking for the same options are decoded as one batch (summarize_lines); the
// reply carries every output token with its p_gen, whether it was copied, and its attention over
// the article's tokens (the picture of engram pointer-generator show).
#include <algorithm>

#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;

json summary_reply(const Summary& sum) {
  const size_t n = sum.source.tokens.size();
  json tokens = json::array();
  for (size_t t = 0; t < sum.p_gen.size(); ++t) {
    const bool eos = t >= sum.tokens.size();
    json row = json::array();
    for (size_t i = 0; n > 0 && (t + 1) * n <= sum.attention.size() && i < n; ++i) row.push_back(sum.attention[t * n + i]);
    tokens.push_back({{"token", eos ? std::string("<eos>") : sum.tokens[t]},
                      {"p_gen", sum.p_gen[t]},
                      {"copied", sum.copied(t)},
                      {"attention", std::move(row)}});
  }
  return {{"summary", sum.text}, {"finished", sum.finished}, {"source_tokens", sum.source.tokens},
          {"tokens", std::move(tokens)}};
}

}  // namespace

const InferenceSpec& LoadedPointerGenerator::inference() const {
  static const InferenceSpec spec{{"article"}, summarize_option_set()};
  return spec;
}

std::unique_ptr<Request> LoadedPointerGenerator::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<std::string>(body, inference(), family(), limits, [&](const json& r) {
    std::string article = serve_json::string_field(r, "article", kPgMaxLineBytes);
    ENGRAM_CHECK(!article.empty(), "'article' is empty");
    return std::vector<std::string>{std::move(article)};
  });
}

std::vector<json> LoadedPointerGenerator::run_requests(std::span<const Request* const> requests) const {
  auto run = [&](std::span<const std::string* const> articles, const decode::DecodeOptions& options) {
    SummarizeOptions o = summarize_options(options);
    o.batch_size = std::min(o.batch_size, static_cast<int>(articles.size()));
    o.validate();
    std::vector<std::string> lines;
    for (const std::string* a : articles) lines.push_back(*a);
    std::vector<json> out;
    for (const Summary& s : summarize_lines(*model, *codec, lines, o)) out.push_back(summary_reply(s));
    return out;
  };
  return models::run_requests<std::string>(requests, run, single_reply);
}

}  // namespace engram::models
