// The inference contract under every family's front ends (CTranslate2's one translate_batch over
// every model): a request is parsed once into the family's inputs and the decode options it asks
// for (decode/options.h); requests are run together, grouped by equal options, each group as one
// batch of inputs; each input's result is formatted as JSON carrying its pictures' data. A family
// supplies an InferenceSpec, a parse of its input fields and a batched run; the field checks, the
// grouping and the restoring of order live here once.
// Dims: R requests, I inputs of a request, G inputs of one options group.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/core/error.h"
#include "engram/decode/options.h"

namespace engram::models {

// Caps the server puts on one request of any family (`engram serve` flags, docs/limits.md); a
// request over one is refused with HTTP 400 and a message naming the cap.
struct ServeLimits {
  int max_items = 64;    // seq2seq: sentences per request; pointer: points; memn2n: story sentences
  int max_tokens = 256;  // tokens of one sentence (seq2seq source, a bAbI sentence, a tree's words)
  int max_beam = 16;     // beam, samples and pointer views of a request
  int max_n_best = 16;   // n-best (<= beam)
  int max_length = 200;  // output length (max_length, min_length); ntm: sequence length
};

// What a family's requests may hold: its input fields and the decode options it honours (with the
// family's defaults). Fields of neither kind are refused by name.
struct InferenceSpec {
  std::vector<std::string> inputs;  // JSON fields of the family's input ("src", "points", ...)
  decode::OptionSet options;        // honoured options and their defaults
};

// Where a streaming request's token events go (the server's Job: Server-Sent Events). Called on
// the worker thread that runs the request, in the order the tokens are chosen.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Input `input` of the request (its index in the request) chose a token: `event` is the
  // family's token event ({"token", "id", "alpha"?, ...}).
  virtual void token(int input, nlohmann::json event) = 0;
};

// One request, parsed once: the options it asks for and its inputs (a family's RequestOf<In>).
struct Request {
  virtual ~Request() = default;
  decode::DecodeOptions options;
  int units = 1;  // batch units: its inputs
  // Set by whoever runs a request with options.stream (borrowed; it outlives the run); null =
  // the events are dropped.
  EventSink* events = nullptr;
};

// The token events of one run call's inputs: emit(g, event) sends input g's event (g indexes the
// run's span of inputs) to its request's sink, tagged with the input's "index" in its request.
using Emit = std::function<void(size_t input, nlohmann::json event)>;

template <class In>
struct RequestOf final : Request {
  std::vector<In> inputs;  // [I]
};

// Options a server request may not set: the server's own (`engram serve --precision`, and its
// batcher decides the batches).
inline bool server_option(std::string_view field) { return field == "batch" || field == "precision"; }

// Checks a request body's fields against `spec` (each is "model", an input field or an honoured
// option; the server's own options are refused), reads its options (capped by `limits` where
// given), and its inputs with `parse` (json -> std::vector<In>, at least one).
template <class In, class Parse>
std::unique_ptr<Request> parse_request(const nlohmann::json& body, const InferenceSpec& spec, std::string_view family,
                                       const ServeLimits& limits, Parse&& parse);

// Runs requests parsed by parse_request<In>: groups of equal options, each group's inputs as one
// call of `run` (span<const In* const>, const DecodeOptions& -> std::vector<json>, one per input,
// in order; a family that streams takes a third argument, const Emit&, set where the options
// stream and empty otherwise); `respond` (std::vector<json> of one request's inputs -> its response body) builds
// each request's reply. Replies in request order.
template <class In, class Run, class Respond>
std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests, Run&& run, Respond&& respond);

// The cap checks of parse_request: beam, samples and views <= max_beam; n_best <= max_n_best;
// max_length and min_length <= max_length, each only where `given` names it.
void check_request_caps(const decode::DecodeOptions& o, const std::vector<std::string>& given,
                        const ServeLimits& limits);
// Errors on a key of `body` that is neither "model", an input field of `spec` nor a decode
// option; a server option (server_option) is refused with its reason.
void check_request_fields(const nlohmann::json& body, const InferenceSpec& spec, std::string_view family);

// ---- implementation ----

template <class In, class Parse>
std::unique_ptr<Request> parse_request(const nlohmann::json& body, const InferenceSpec& spec, std::string_view family,
                                       const ServeLimits& limits, Parse&& parse) {
  check_request_fields(body, spec, family);
  auto r = std::make_unique<RequestOf<In>>();
  std::vector<std::string> given;
  r->options = decode::options_from_json(body, spec.options, family, &given, spec.inputs);
  check_request_caps(r->options, given, limits);
  r->inputs = parse(body);
  ENGRAM_CHECK(!r->inputs.empty(), "the request holds no input");
  r->units = static_cast<int>(r->inputs.size());
  return r;
}

template <class In, class Run, class Respond>
std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests, Run&& run, Respond&& respond) {
  const size_t n = requests.size();
  std::vector<const RequestOf<In>*> typed(n);
  for (size_t i = 0; i < n; ++i) {
    typed[i] = dynamic_cast<const RequestOf<In>*>(requests[i]);
    ENGRAM_CHECK(typed[i] != nullptr, "run_requests: a request of another family");
  }
  std::vector<std::vector<nlohmann::json>> results(n);
  std::vector<bool> done(n, false);
  for (size_t first = 0; first < n; ++first) {
    if (done[first]) continue;
    // The group of requests asking for the same options as `first`.
    std::vector<size_t> group;
    std::vector<const In*> inputs;  // [G]
    for (size_t i = first; i < n; ++i) {
      if (done[i] || !(typed[i]->options == typed[first]->options)) continue;
      group.push_back(i);
      done[i] = true;
      for (const In& x : typed[i]->inputs) inputs.push_back(&x);
    }
    std::vector<nlohmann::json> out;
    if constexpr (std::is_invocable_v<Run&, std::span<const In* const>, const decode::DecodeOptions&, const Emit&>) {
      Emit emit;
      if (typed[first]->options.stream) {
        std::vector<std::pair<EventSink*, int>> to;  // [G] each input's sink and index in its request
        for (size_t i : group)
          for (size_t k = 0; k < typed[i]->inputs.size(); ++k) to.emplace_back(typed[i]->events, static_cast<int>(k));
        emit = [to = std::move(to)](size_t g, nlohmann::json event) {
          if (to.at(g).first) to[g].first->token(to[g].second, std::move(event));
        };
      }
      out = run(std::span<const In* const>(inputs), typed[first]->options, emit);
    } else {
      ENGRAM_CHECK(!typed[first]->options.stream, "run_requests: this family does not stream");
      out = run(std::span<const In* const>(inputs), typed[first]->options);
    }
    ENGRAM_CHECK(out.size() == inputs.size(), "run_requests: {} results for {} inputs", out.size(), inputs.size());
    size_t next = 0;
    for (size_t i : group)
      for (size_t k = 0; k < typed[i]->inputs.size(); ++k) results[i].push_back(std::move(out[next++]));
  }
  std::vector<nlohmann::json> replies;
  replies.reserve(n);
  for (size_t i = 0; i < n; ++i) replies.push_back(respond(std::move(results[i])));
  return replies;
}

// Streaming (a run given an Emit): `n` inputs decoded one at a time, in order, each with
// search.on_token sending input i's token events through `emit`: {"step" (0, 1, ...), "id",
// "token" (name(id); "<eos>" for `eos`), "alpha" (the step's attention row)}, the first event
// with first(i)'s fields added. decode_one(i) decodes input i alone with `search` (batch 1).
// Returns decode_one's results in input order.
template <class Name, class DecodeOne>
auto stream_inputs(size_t n, decode::SearchOptions& search, int32_t eos, const Emit& emit, Name&& name,
                   DecodeOne&& decode_one, const std::function<nlohmann::json(size_t)>& first = nullptr) {
  std::vector<std::invoke_result_t<DecodeOne&, size_t>> out;
  for (size_t i = 0; i < n; ++i) {
    int step = 0;
    search.on_token = [&](int, int32_t token, std::span<const float> alpha) {
      nlohmann::json event = {{"step", step},
                              {"id", token},
                              {"token", token == eos ? std::string("<eos>") : std::string(name(token))},
                              {"alpha", std::vector<float>(alpha.begin(), alpha.end())}};
      if (step++ == 0 && first) event.update(first(i));
      emit(i, std::move(event));
    };
    out.push_back(decode_one(i));
  }
  search.on_token = nullptr;
  return out;
}

// The reply of a family whose request holds one input: that input's result.
inline nlohmann::json single_reply(std::vector<nlohmann::json> results) { return std::move(results.at(0)); }

}  // namespace engram::models
