// Fuzz harness: the JSON request bodies of `engram serve`'s family routes (issue "Hardening":
// HTTP bodies). The input's first byte picks one of the committed golden models (seq2seq, memn2n,
// ntm, pointer, tree, pointer_generator: tests/golden/models/), the rest is the request body as
// the server receives it. Like the server (serve/server.cc), a body that is not JSON, nests deeper
// than max_json_depth or repeats a key (serve/request.h: parse_body, the server's own check) is
// answered before any model sees it; a JSON body goes to the model's parse_request (engram::Error =
// a 400 answer) and, when it passes, to run_requests(). Invariants: parse_request reports
// 1..max_items batch units; a request that passed parse_request is answered by run_requests() with
// exactly one JSON object
// and no exception of any kind; the answer serialises (as the server sends it). Tight limits
// keep one input's decoding short.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engram/models/registry.h"
#include "engram/serve/options.h"
#include "engram/serve/request.h"
#include "fuzz_common.h"

namespace {

using engram::models::LoadedModel;

struct Golden {
  std::vector<std::unique_ptr<LoadedModel>> models;
  Golden() {
    const char* src = std::getenv("ENGRAM_SOURCE_DIR");
    const std::string root = std::string(src && *src ? src : ENGRAM_FUZZ_SOURCE_DIR) + "/tests/golden/models/";
    for (const char* f : {"seq2seq", "memn2n", "ntm", "pointer", "tree", "pointer_generator"})
      models.push_back(engram::models::load_model(root + f));
  }
};

const Golden& golden() {
  static const Golden g;
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > engram::fuzz::kMaxInputBytes) return 0;
  const Golden& g = golden();
  const LoadedModel& model = *g.models[data[0] % g.models.size()];
  const engram::serve::ParsedBody parsed =
      engram::serve::parse_body(engram::fuzz::as_text(data + 1, size - 1), engram::serve::ServeOptions{}.max_json_depth);
  if (!parsed.error.empty()) return 0;  // the server's 400, no model involved
  const nlohmann::json& body = parsed.value;
  engram::models::ServeLimits limits;
  limits.max_items = 8;
  limits.max_tokens = 32;
  limits.max_beam = 4;
  limits.max_n_best = 4;
  limits.max_length = 20;
  std::unique_ptr<engram::models::Request> request;
  engram::fuzz::guard("serve", [&] { request = model.parse_request(body, limits); });
  if (!request) return 0;
  FUZZ_CHECK("serve", request->units >= 1 && request->units <= limits.max_items,
             "parse_request of a {} model returned {} units", model.family(), request->units);
  std::vector<nlohmann::json> out;
  try {
    const engram::models::Request* one = request.get();
    out = model.run_requests(std::span<const engram::models::Request* const>(&one, 1));
  } catch (const std::exception& e) {
    engram::fuzz::finding("serve", "a " + model.family() + " request that passed parse_request made run_requests() throw " +
                                       engram::fuzz::current_exception_type() + ": " + e.what());
  } catch (...) {
    engram::fuzz::finding("serve", "a " + model.family() + " request that passed parse_request made run_requests() throw " +
                                       engram::fuzz::current_exception_type());
  }
  FUZZ_CHECK("serve", out.size() == 1 && out[0].is_object(), "run_requests() of a {} model answered {} values",
             model.family(), out.size());
  (void)out[0].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
