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

// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates, <= U+10FFFF),
// or 0 when the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text, size_t max_bytes) {
  std::string out;
  const size_t end = std::min(text.size(), max_bytes);
  for (size_t i = 0; i < end;) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02X}", c);
      ++i;
    }
  }
  if (text.size() > end) out += "...";
  return out;
}

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
