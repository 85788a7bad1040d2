// Fuzz harness: the HTTP layer of `engram serve` itself (serve/connection.h, serve/server.cc):
// request line, headers, chunked framing and body, as one client's bytes on one connection
// (pipelined requests included), answered by Server::answer_bytes — cpp-httplib's parser, the
// framing checks, the body reader with its max_body_bytes cut-off, the JSON depth and
// duplicate-key checks, the routes, over the golden pointer model (tests/golden/models/pointer,
// cheap to decode). Invariants: no exception escapes; everything written back is a sequence of
// whole HTTP/1.1 responses (and 100 Continue), each with a status the server documents
// (docs/serve.md) and never a 500 (an exception that is not an engram::Error); a JSON body parses
// and an error is one line with no control byte; no more responses than requests could be sent.
// cpp-httplib is Debian's shared library, not instrumented: the coverage that guides the fuzzer
// is engram's side (the framing checks, the body reader, request.h, the routes).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engram/serve/server.h"
#include "fuzz_common.h"

namespace {

engram::serve::Server& server() {
  static const std::unique_ptr<engram::serve::Server> s = [] {
    const char* src = std::getenv("ENGRAM_SOURCE_DIR");
    const std::string dir = std::string(src && *src ? src : ENGRAM_FUZZ_SOURCE_DIR) + "/tests/golden/models/pointer";
    engram::serve::ServeOptions o;
    o.workers = 1;
    o.max_wait_ms = 0;
    o.max_body_bytes = 64 << 10;
    o.max_header_bytes = 8 << 10;
    o.limits.max_items = 16;
    return std::make_unique<engram::serve::Server>(engram::serve::load_models({dir}), o);
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  const std::string_view in = engram::fuzz::as_text(data, size);
  std::string out;
  engram::fuzz::guard("http", [&] { out = server().answer_bytes(in); });
  static const std::set<int> documented = {100, 200, 400, 404, 405, 408, 411, 413, 414, 415, 416, 431, 503, 504};
  std::string_view rest = out;
  size_t responses = 0;
  while (!rest.empty()) {
    FUZZ_CHECK("http", rest.starts_with("HTTP/1.1 ") && rest.size() >= 12, "the output is not a response: '{}'",
               std::string(rest.substr(0, 60)));
    const int status = std::atoi(std::string(rest.substr(9, 3)).c_str());
    FUZZ_CHECK("http", documented.count(status) == 1, "status {} is not one the server documents: '{}'", status,
               std::string(rest.substr(0, 200)));
    const size_t head = rest.find("\r\n\r\n");
    FUZZ_CHECK("http", head != std::string_view::npos, "a response without the end of its headers");
    if (status == 100) {  // the interim answer to "Expect: 100-continue": headers only
      rest.remove_prefix(head + 4);
      continue;
    }
    const std::string_view headers = rest.substr(0, head);
    const size_t cl = headers.find("\r\nContent-Length: ");
    FUZZ_CHECK("http", cl != std::string_view::npos, "a response without Content-Length");
    size_t length = std::strtoull(std::string(headers.substr(cl + 18, 12)).c_str(), nullptr, 10);
    // The answer to a HEAD request has the headers of a GET and no body (no body of ours starts
    // with "HTTP/1.1 ").
    const std::string_view after = rest.substr(head + 4);
    const bool head_only = in.find("HEAD") != std::string_view::npos && (after.empty() || after.starts_with("HTTP/1.1 "));
    if (head_only) length = 0;
    FUZZ_CHECK("http", rest.size() >= head + 4 + length, "a response cut short");
    const std::string_view body = rest.substr(head + 4, length);
    if (!head_only && headers.find("Content-Type: application/json") != std::string_view::npos) {
      const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
      FUZZ_CHECK("http", !j.is_discarded(), "a JSON response that does not parse: '{}'", std::string(body.substr(0, 200)));
      if (status >= 400 && j.is_object() && j.contains("error")) {
        FUZZ_CHECK("http", j["error"].is_string(), "an error that is not a string");
        for (const char c : j["error"].get<std::string>())
          FUZZ_CHECK("http", static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, "a control byte in an error: {}",
                     j["error"].dump());
      }
    }
    rest.remove_prefix(head + 4 + length);
    ++responses;
  }
  // Every request ends with "\n\n" or "\r\n\r\n" after at least a request line: a bound on the count.
  FUZZ_CHECK("http", responses <= size / 4 + 1, "{} responses to {} bytes", responses, size);
  return 0;
}
