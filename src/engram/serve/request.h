// The checks of a request body before and while it is parsed as JSON (docs/serve.md, "Request
// bodies"): a nesting depth limit found by a linear scan (so no parse, copy or destruction of the
// value ever recurses deeper than it), duplicate object keys refused by name, and the quoting of
// bytes from a request before they appear in an error message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engram/core/printable.h"

namespace engram::serve {

// The deepest nesting of arrays and objects in `text`, counted outside JSON strings (a '[' or '{'
// inside "..." does not count; backslash escapes are followed). Linear in the size, no recursion;
// defined for any bytes, JSON or not. Stops counting once the depth passes `stop_above`.
int json_nesting_depth(std::string_view text, int stop_above);

// A request body parsed as JSON, or the one-line reason it is refused (then `value` is null).
struct ParsedBody {
  nlohmann::json value;
  std::string error;  // empty when the body was accepted
};

// Parses `body` as one JSON value. Refused, with the reason: a body nesting arrays / objects deeper
// than `max_depth` (checked before parsing), text that is not JSON, and an object that holds a key
// twice (named, quoted with printable()).
ParsedBody parse_body(std::string_view body, int max_depth);

// `text` quoted for an error message (core::printable), cut after `max_bytes` of input.
inline std::string printable(std::string_view text, size_t max_bytes = 120) {
  return core::printable(text, max_bytes);
}

}  // namespace engram::serve
