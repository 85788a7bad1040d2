// The shared checks of a request's fields and caps (inference.h).
#include "engram/models/inference.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "engram/core/printable.h"

namespace engram::models {

void check_request_caps(const decode::DecodeOptions& o, const std::vector<std::string>& given,
                        const ServeLimits& limits) {
  const auto has = [&](std::string_view f) { return std::find(given.begin(), given.end(), f) != given.end(); };
  auto cap = [&](const char* field, long long value, long long max, const char* flag) {
    ENGRAM_CHECK(!has(field) || value <= max, "'{}' is {}, more than the server's limit of {} (--{})", field, value,
                 max, flag);
  };
  cap("beam", o.beam, limits.max_beam, "max-beam");
  cap("samples", o.samples, limits.max_beam, "max-beam");
  cap("views", o.views, limits.max_beam, "max-beam");
  cap("n_best", o.n_best, limits.max_n_best, "max-n-best");
  cap("max_length", o.max_length, limits.max_length, "max-length");
  cap("min_length", o.min_length, limits.max_length, "max-length");
}

void check_request_fields(const nlohmann::json& body, const InferenceSpec& spec, std::string_view family) {
  ENGRAM_CHECK(body.is_object(), "the request body must be a JSON object, got {}", body.type_name());
  const std::vector<std::string>& options = decode::option_names();
  // The option fields a request may give, for an error's message: the family's, less the server's own.
  auto request_options = [&] {
    std::vector<std::string> out;
    for (const std::string& f : spec.options.fields)
      if (!server_option(f)) out.push_back(f);
    return out;
  };
  for (const auto& item : body.items()) {
    const std::string& key = item.key();
    if (key == "model" || std::find(spec.inputs.begin(), spec.inputs.end(), key) != spec.inputs.end()) continue;
    if (std::find(options.begin(), options.end(), key) != options.end()) {
      ENGRAM_CHECK(!server_option(key), "'{}' is the server's own option (engram serve --{}), not a request's", key,
                   key);
      if (!spec.options.has(key)) {
        const std::vector<std::string> honoured = request_options();
        throw Error(fmt::format("'{}' is not an option of the {} family (its options: {})", key, family,
                                honoured.empty() ? std::string("none") : fmt::format("{}", fmt::join(honoured, ", "))));
      }
      continue;
    }
    std::vector<std::string> known = spec.inputs;
    for (std::string& f : request_options()) known.push_back(std::move(f));
    throw Error(fmt::format("unknown field '{}' for a {} model (its fields: model, {})", core::printable(key, 64),
                            family, fmt::join(known, ", ")));
  }
}

}  // namespace engram::models
