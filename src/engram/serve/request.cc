// Request body checks (request.h).
#include "engram/serve/request.h"

#include <fmt/format.h>

#include <set>
#include <vector>

namespace engram::serve {

using nlohmann::json;

int json_nesting_depth(std::string_view text, int stop_above) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > stop_above) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

// Thrown by the parse callback at the first key an object already holds.
struct DuplicateKey {
  std::string key;
};

}  // namespace


ParsedBody parse_body(std::string_view body, int max_depth) {
  ParsedBody out;
  if (const int depth = json_nesting_depth(body, max_depth); depth > max_depth) {
    out.error = fmt::format("the request body nests arrays or objects deeper than max_json_depth {}", max_depth);
    return out;
  }
  // The keys of each object being read, innermost last.
  std::vector<std::set<std::string>> keys;
  const json::parser_callback_t check_keys = [&keys](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
          throw DuplicateKey{parsed.get<std::string>()};
        break;
      default:
        break;
    }
    return true;
  };
  try {
    out.value = json::parse(body.begin(), body.end(), check_keys, false);
  } catch (const DuplicateKey& d) {
    out.value = nullptr;
    out.error = fmt::format("the request body has the key \"{}\" twice in one object (keys must be unique)",
                            printable(d.key));
    return out;
  }
  if (out.value.is_discarded()) {
    out.value = nullptr;
    out.error = "the request body is not valid JSON";
  }
  return out;
}

}  // namespace engram::serve
