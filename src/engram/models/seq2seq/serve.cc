// The translate route of the server over the inference contract (inference.h): a request holds
// one or more sentences, each with an optional target prefix, encoded once when parsed; requests asking for the same options are decoded as one batch by
// translate_lines; each response gets its own rows.
#include <algorithm>

#include "engram/core/kernels/blas.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/models/serve_json.h"

namespace engram::models {

using nlohmann::json;

const InferenceSpec& Translator::inference() const {
  static const InferenceSpec spec{{"src", "target_prefix"}, translate_option_set()};
  return spec;
}

std::unique_ptr<Request> Translator::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<EncodedInput>(body, inference(), family(), limits, [&](const json& r) {
    const std::vector<std::string> lines = serve_json::strings_field(r, "src", limits.max_items, kMaxLineBytes);
    if (const json* sl = serve_json::find(r, "shortlist"); sl && sl->is_boolean() && sl->get<bool>())
      shortlist_table();  // a model without one: the request's error, before it is queued
    std::vector<std::string> prefixes(lines.size());
    if (serve_json::find(r, "target_prefix")) {
      prefixes = serve_json::strings_field(r, "target_prefix", limits.max_items, kMaxLineBytes);
      ENGRAM_CHECK(prefixes.size() == lines.size(), "'target_prefix' holds {} prefixes for {} sentences of 'src'",
                   prefixes.size(), lines.size());
    }
    std::vector<EncodedInput> out;
    for (size_t i = 0; i < lines.size(); ++i) {
      EncodedInput e = encode_input(src, tgt, lines[i], prefixes[i], i);
      ENGRAM_CHECK(e.ids.size() <= static_cast<size_t>(limits.max_tokens),
                   "'src'[{}] has {} tokens, more than the limit of {}", i, e.ids.size(), limits.max_tokens);
      ENGRAM_CHECK(e.prefix.size() <= static_cast<size_t>(limits.max_tokens),
                   "'target_prefix'[{}] has {} tokens, more than the limit of {}", i, e.prefix.size(),
                   limits.max_tokens);
      out.push_back(std::move(e));
    }
    return out;
  });
}

std::vector<json> Translator::run_requests(std::span<const Request* const> requests) const {
  auto to_json = [](const Translation& t, bool alignments) {
    json hyps = json::array();
    for (size_t h = 0; h < t.nbest.size(); ++h) {
      json one = {{"tgt", t.texts[h]}, {"score", t.nbest[h].score}};
      if (alignments) {
        one["alignment"] = serve_json::rows(t.nbest[h].alignment, static_cast<size_t>(t.nbest[h].src_len));
        one["src_tokens"] = t.src_tokens;
        one["tgt_tokens"] = t.tgt_tokens[h];
      }
      hyps.push_back(std::move(one));
    }
    return hyps;
  };
  auto run = [&](std::span<const EncodedInput* const> inputs, const decode::DecodeOptions& options, const Emit& emit) {
    TranslateOptions o = translate_options(options);
    std::vector<json> out;
    if (emit) {
      o.batch_size = 1;
      return stream_inputs(
          inputs.size(), o.search, seq2seq().eos_id(), emit, [&](int32_t id) { return tgt.token(id); },
          [&](size_t i) { return to_json(translate(inputs.subspan(i, 1), o).at(0), o.search.alignments); },
          [&](size_t i) { return json{{"src_tokens", inputs[i]->tokens}}; });  // the columns of every α row
    }
    // Decoded kSmallRows sentences at a time (sorted by length over the whole batch): those
    // products run on the packed few-row kernel; a beam multiplies the rows anyway. A caller
    // decoding its own inputs may ask for larger chunks (options.chunk).
    o.batch_size = options.chunk > 0 ? options.chunk
                                     : std::min(static_cast<int>(inputs.size()), core::kernels::kSmallRows);
    for (const Translation& t : translate(inputs, o)) out.push_back(to_json(t, o.search.alignments));
    return out;
  };
  auto respond = [](std::vector<json> sentences) { return json{{"translations", std::move(sentences)}}; };
  return models::run_requests<EncodedInput>(requests, run, respond);
}

void Translator::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> ms) {
  setup.set_members(*this, std::move(ms),
                    [&](const LoadedModel& m) { check_same_codecs(*this, dynamic_cast<const Translator&>(m)); });
}

void Translator::set_precision(decode::Precision p) {
  setup.set_precision(*this, p);
  packed = p == decode::Precision::kFp32 ? std::make_unique<core::PackedWeights>(nn::packed_weights(model->params()))
                                         : nullptr;
}

}  // namespace engram::models
