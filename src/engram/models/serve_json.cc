// Typed, range-checked reads of request fields (serve_json.h).
#include "engram/models/serve_json.h"

#include <cmath>

#include "engram/core/error.h"

namespace engram::models::serve_json {

const json* find(const json& request, const char* key) {
  const auto it = request.find(key);
  return it == request.end() || it->is_null() ? nullptr : &*it;
}

int int_field(const json& request, const char* key, int fallback, int lo, int hi) {
  const json* v = find(request, key);
  if (!v) return fallback;
  ENGRAM_CHECK(v->is_number_integer(), "'{}' must be an integer, got {}", key, v->type_name());
  // nlohmann keeps an integer past int64 as uint64: compared as such, never read back wrapped negative.
  ENGRAM_CHECK(!v->is_number_unsigned() || (hi >= 0 && v->get<uint64_t>() <= static_cast<uint64_t>(hi)),
               "'{}' is {}; it must be in [{}, {}]", key, v->dump(), lo, hi);
  const int64_t x = v->get<int64_t>();
  ENGRAM_CHECK(x >= lo && x <= hi, "'{}' is {}; it must be in [{}, {}]", key, x, lo, hi);
  return static_cast<int>(x);
}

namespace {

std::string checked_string(const json& v, const std::string& what, size_t max_bytes) {
  ENGRAM_CHECK(v.is_string(), "{} must be a string, got {}", what, v.type_name());
  const std::string& s = v.get_ref<const std::string&>();
  ENGRAM_CHECK(s.size() <= max_bytes, "{} is {} bytes, more than the limit of {}", what, s.size(), max_bytes);
  return s;
}

}  // namespace

std::string string_field(const json& request, const char* key, size_t max_bytes) {
  const json* v = find(request, key);
  ENGRAM_CHECK(v != nullptr, "the request needs '{}'", key);
  return checked_string(*v, fmt::format("'{}'", key), max_bytes);
}

std::vector<std::string> strings_field(const json& request, const char* key, int max_items, size_t max_bytes) {
  const json* v = find(request, key);
  ENGRAM_CHECK(v != nullptr, "the request needs '{}'", key);
  if (v->is_string()) return {checked_string(*v, fmt::format("'{}'", key), max_bytes)};
  ENGRAM_CHECK(v->is_array(), "'{}' must be a string or an array of strings, got {}", key, v->type_name());
  ENGRAM_CHECK(!v->empty() && v->size() <= static_cast<size_t>(max_items), "'{}' has {} items; it must have 1 to {}",
               key, v->size(), max_items);
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) out.push_back(checked_string((*v)[i], fmt::format("'{}'[{}]", key, i), max_bytes));
  return out;
}

std::string base64_field(const json& request, const char* key, size_t max_bytes) {
  const std::string text = string_field(request, key, (max_bytes / 3 + 1) * 4);
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    const char c = text[i];
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    ENGRAM_CHECK(v >= 0, "'{}' is not base64: character {} at {}", key, static_cast<int>(static_cast<unsigned char>(c)), i);
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  const size_t pad = text.size() - i;
  const size_t data = text.size() - pad;  // characters before the padding
  const bool padded_ok = pad == 0 ? data % 4 != 1 : pad <= 2 && text.size() % 4 == 0 && data % 4 == 4 - pad;
  ENGRAM_CHECK(padded_ok && text.find_first_not_of('=', i) == std::string::npos,
               "'{}' is not base64: bad padding or length", key);
  ENGRAM_CHECK(out.size() <= max_bytes, "'{}' holds {} bytes, more than the limit of {}", key, out.size(), max_bytes);
  return out;
}

std::vector<double> numbers_field(const json& request, const char* key, int max_items) {
  const json* v = find(request, key);
  ENGRAM_CHECK(v != nullptr, "the request needs '{}'", key);
  ENGRAM_CHECK(v->is_array(), "'{}' must be an array of numbers, got {}", key, v->type_name());
  ENGRAM_CHECK(!v->empty() && v->size() <= static_cast<size_t>(max_items), "'{}' has {} items; it must have 1 to {}",
               key, v->size(), max_items);
  std::vector<double> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& x = (*v)[i];
    ENGRAM_CHECK(x.is_number() && std::isfinite(x.get<double>()), "'{}'[{}] must be a finite number, got {}", key, i,
                 x.dump().substr(0, 40));
    out.push_back(x.get<double>());
  }
  return out;
}

json rows(std::span<const float> values, size_t cols) {
  json out = json::array();
  for (size_t r = 0; cols > 0 && (r + 1) * cols <= values.size(); ++r)
    out.push_back(std::vector<float>(values.begin() + r * cols, values.begin() + (r + 1) * cols));
  return out;
}

}  // namespace engram::models::serve_json
