// The summarize route of the server (LoadedPointerGenerator::serve_check / serve): one article per
// request; the reply carries every output token with its p_gen, whether it was copied, and its
// attention over the article's tokens (the picture of engram pointer-generator show).
#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;

// The search a request asks for, within the server's caps.
SummarizeOptions request_options(const json& r, const ServeLimits& limits) {
  SummarizeOptions o;
  o.search.beam = serve_json::int_field(r, "beam", 1, 1, limits.max_beam);
  o.search.alpha = static_cast<float>(serve_json::number_field(r, "alpha", 0.0, 0.0, 10.0));
  o.search.max_length = serve_json::int_field(r, "max_length", 100, 1, limits.max_length);
  o.search.max_length_ratio = 100.0f;  // summaries: max_length bounds the output
  o.search.min_length = serve_json::int_field(r, "min_length", 0, 0, limits.max_length);
  o.search.block_ngram_repeat = serve_json::int_field(r, "block_ngram_repeat", 0, 0, 16);
  o.search.coverage_penalty = static_cast<float>(serve_json::number_field(r, "coverage_penalty", 0.0, 0.0, 10.0));
  o.batch_size = 1;
  o.validate();
  return o;
}

}  // namespace

int LoadedPointerGenerator::serve_check(const json& r, const ServeLimits& limits) const {
  serve_json::check_object(r);
  request_options(r, limits);
  const std::string article = serve_json::string_field(r, "article", kPgMaxLineBytes);
  ENGRAM_CHECK(!article.empty(), "'article' is empty");
  return 1;
}

std::vector<json> LoadedPointerGenerator::serve(std::span<const json* const> requests) const {
  const ServeLimits unlimited{1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30};  // checked by serve_check
  std::vector<json> out;
  for (const json* r : requests) {
    const SummarizeOptions o = request_options(*r, unlimited);
    const std::vector<Summary> s =
        summarize_lines(*model, *codec, {serve_json::string_field(*r, "article", kPgMaxLineBytes)}, o);
    const Summary& sum = s.at(0);
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
    out.push_back({{"summary", sum.text}, {"finished", sum.finished}, {"source_tokens", sum.source.tokens},
                   {"tokens", std::move(tokens)}});
  }
  return out;
}

}  // namespace engram::models
