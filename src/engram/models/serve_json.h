// Reading the fields of a server request body (LoadedModel::parse_request): each accessor checks
// the field's type and range and throws engram::Error with a one-line message naming the field,
// which the server returns as HTTP 400; and the one writer of a reply's picture data (rows).
// Used by every family's serve.cc.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace engram::models::serve_json {

using nlohmann::json;

// The field, or nullptr when it is absent or null.
const json* find(const json& request, const char* key);
// An integer in [lo, hi]; `fallback` when absent.
int int_field(const json& request, const char* key, int fallback, int lo, int hi);
// A string of at most max_bytes bytes; required.
std::string string_field(const json& request, const char* key, size_t max_bytes);
// A string, or an array of 1..max_items strings (each at most max_bytes bytes); required.
std::vector<std::string> strings_field(const json& request, const char* key, int max_items, size_t max_bytes);
// The bytes of a base64 string (RFC 4648, '=' padding optional) of at most max_bytes decoded
// bytes; required.
std::string base64_field(const json& request, const char* key, size_t max_bytes);
// An array of 1..max_items finite numbers; required.
std::vector<double> numbers_field(const json& request, const char* key, int max_items);

// A row-major [R, cols] matrix (attention: one row per output step over the source; a
// spectrogram: one row per frame) as [[cols values] per row]: every whole row `values` holds
// (none when cols is 0).
json rows(std::span<const float> values, size_t cols);

}  // namespace engram::models::serve_json
