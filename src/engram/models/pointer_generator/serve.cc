// The summarize route of the server over the inference contract (inference.h): one article per
// request; articles asking for the same options are decoded as one batch (summarize_lines); the
// reply carries every output token with its p_gen, whether it was copied, and its attention over
// the article's tokens (the picture of engram pointer-generator show).
#include <algorithm>

#include "engram/models/pointer_generator/summarize.h"
#include "engram/data/vocab.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;

// One article of a request and its target prefix ("" = none).
struct PgInput {
  std::string article, prefix;
};

json summary_reply(const Summary& sum) {
  json attention = serve_json::rows(sum.attention, sum.source.tokens.size());  // [R][S]
  json tokens = json::array();
  for (size_t t = 0; t < sum.p_gen.size(); ++t) {
    const bool eos = t >= sum.tokens.size();
    tokens.push_back({{"token", eos ? std::string("<eos>") : sum.tokens[t]},
                      {"p_gen", sum.p_gen[t]},
                      {"copied", sum.copied(t)},
                      {"attention", t < attention.size() ? std::move(attention[t]) : json::array()}});
  }
  return {{"summary", sum.text}, {"finished", sum.finished}, {"source_tokens", sum.source.tokens},
          {"tokens", std::move(tokens)}};
}

}  // namespace

const InferenceSpec& LoadedPointerGenerator::inference() const {
  static const InferenceSpec spec{{"article", "target_prefix"}, summarize_option_set()};
  return spec;
}

std::unique_ptr<Request> LoadedPointerGenerator::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<PgInput>(body, inference(), family(), limits, [&](const json& r) {
    PgInput in;
    in.article = serve_json::string_field(r, "article", kPgMaxLineBytes);
    ENGRAM_CHECK(!in.article.empty(), "'article' is empty");
    if (serve_json::find(r, "target_prefix")) {
      in.prefix = serve_json::string_field(r, "target_prefix", kPgMaxLineBytes);
      ENGRAM_CHECK(codec->tokens(in.prefix).size() <= static_cast<size_t>(limits.max_tokens),
                   "'target_prefix' has more than the limit of {} tokens", limits.max_tokens);
    }
    return std::vector<PgInput>{std::move(in)};
  });
}

std::vector<json> LoadedPointerGenerator::run_requests(std::span<const Request* const> requests) const {
  auto run = [&](std::span<const PgInput* const> inputs, const decode::DecodeOptions& options, const Emit& emit) {
    SummarizeOptions o = summarize_options(options);
    o.batch_size = std::min(o.batch_size, static_cast<int>(inputs.size()));
    o.validate();
    if (emit) {
      o.batch_size = 1;
      ExtendedSource source;  // the article being decoded: its words name the copied tokens
      return stream_inputs(
          inputs.size(), o.search, data::kEosId, emit,
          [&](int32_t id) { return output_tokens(*codec, {id}, source).at(0); },
          [&](size_t i) {
            source = extend_source(*codec, inputs[i]->article, model->cfg().max_source_tokens);
            return summary_reply(summarize_lines(models(), *codec, {inputs[i]->article}, o,
                                                 std::span<const std::string>(&inputs[i]->prefix, 1))
                                     .at(0));
          });
    }
    std::vector<json> out;
    std::vector<std::string> lines, prefixes;
    for (const PgInput* in : inputs) lines.push_back(in->article), prefixes.push_back(in->prefix);
    for (const Summary& s : summarize_lines(models(), *codec, lines, o, prefixes)) out.push_back(summary_reply(s));
    return out;
  };
  return models::run_requests<PgInput>(requests, run, single_reply);
}

}  // namespace engram::models
