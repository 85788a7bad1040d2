// DecodeOptions: ranges, the search part, and the JSON reader generated from visit() (options.h).
#include "engram/decode/options.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/ranges.h>

#include "engram/core/error.h"

namespace engram::decode {

namespace {

using nlohmann::json;

// Lists the field names in declaration order.
struct NameLister {
  std::vector<std::string>& out;
  template <class T>
  void operator()(const char* name, T&, const char* = "") {
    out.emplace_back(name);
  }
};

// Reads each present, honoured field of a JSON object by its C++ type.
class JsonReader {
 public:
  JsonReader(const json& object, const OptionSet& set, std::string_view family, std::vector<std::string>& given,
             const std::vector<std::string>& inputs)
      : object_(object), set_(set), family_(family), given_(given), inputs_(inputs) {}

  template <class T>
  void operator()(const char* name, T& field, const char* = "") {
    const auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return;
    if (std::find(inputs_.begin(), inputs_.end(), name) != inputs_.end()) return;
    ENGRAM_CHECK(set_.has(name), "'{}' is not an option of the {} family (its options: {})", name, family_,
                 set_.fields.empty() ? std::string("none") : fmt::format("{}", fmt::join(set_.fields, ", ")));
    read(name, *it, field);
    given_.emplace_back(name);
  }

 private:
  template <class T>
  static void read(const char* name, const json& v, T& field) {
    if constexpr (std::is_same_v<T, bool>) {
      ENGRAM_CHECK(v.is_boolean(), "'{}' must be true or false, got {}", name, v.type_name());
      field = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      ENGRAM_CHECK(v.is_number_integer(), "'{}' must be an integer, got {}", name, v.type_name());
      if constexpr (std::is_unsigned_v<T>) {
        ENGRAM_CHECK(v.is_number_unsigned(), "'{}' must not be negative", name);
        const uint64_t x = v.get<uint64_t>();
        ENGRAM_CHECK(x <= std::numeric_limits<T>::max(), "'{}' is {}; it must be at most {}", name, x,
                     std::numeric_limits<T>::max());
        field = static_cast<T>(x);
      } else {
        ENGRAM_CHECK(!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()),
                     "'{}' is out of range", name);
        const int64_t x = v.get<int64_t>();
        ENGRAM_CHECK(x >= std::numeric_limits<T>::min() && x <= std::numeric_limits<T>::max(),
                     "'{}' is {}; it must be in [{}, {}]", name, x, std::numeric_limits<T>::min(),
                     std::numeric_limits<T>::max());
        field = static_cast<T>(x);
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      ENGRAM_CHECK(v.is_number(), "'{}' must be a number, got {}", name, v.type_name());
      const double x = v.get<double>();
      ENGRAM_CHECK(std::isfinite(x) && std::fabs(x) <= std::numeric_limits<T>::max(), "'{}' must be a finite number",
                   name);
      field = static_cast<T>(x);
    } else if constexpr (io::detail::NamedEnum<T>) {
      ENGRAM_CHECK(v.is_string(), "'{}' must be one of {}, got {}", name, io::detail::enum_choices<T>(), v.type_name());
      const std::string& s = v.get_ref<const std::string&>();
      for (const auto& [value, n] : io::EnumNames<T>::items)
        if (s == n) {
          field = value;
          return;
        }
      throw Error(fmt::format("'{}' must be one of {}", name, io::detail::enum_choices<T>()));
    } else {
      static_assert(sizeof(T) == 0, "a DecodeOptions field type the JSON reader does not know");
    }
  }

  const json& object_;
  const OptionSet& set_;
  std::string_view family_;
  std::vector<std::string>& given_;
  const std::vector<std::string>& inputs_;
};

// Takes pointers to every field of one DecodeOptions, in visit() order.
struct FieldPointers {
  std::vector<const void*> out;
  template <class T>
  void operator()(const char*, T& field, const char* = "") {
    out.push_back(&field);
  }
};

// Copies the fields named in `names` from `from` (FieldPointers of a DecodeOptions, the same
// visit() order, so the same types) into the visited DecodeOptions.
struct CopyNamed {
  const std::vector<const void*>& from;
  const std::vector<std::string>& names;
  size_t i = 0;
  template <class T>
  void operator()(const char* name, T& field, const char* = "") {
    const T& value = *static_cast<const T*>(from[i++]);
    if (std::find(names.begin(), names.end(), name) != names.end()) field = value;
  }
};

// The run config's `decode:` section as one nested key, so that the config reader's errors name
// "decode.KEY".
struct DecodeSection {
  DecodeOptions& options;
  template <class V>
  void visit(V& v) {
    v("decode", options, "the model's decode defaults");
  }
};

bool named(const std::vector<std::string>& names, std::string_view f) {
  return std::find(names.begin(), names.end(), f) != names.end();
}

// `to` with the fields of `from` that `names` names.
void copy_named(DecodeOptions& to, const DecodeOptions& from, const std::vector<std::string>& names) {
  DecodeOptions values = from;
  FieldPointers pointers;
  values.visit(pointers);
  CopyNamed copy{pointers.out, names};
  to.visit(copy);
}

}  // namespace

void DecodeOptions::validate() const {
  search().validate();
  ENGRAM_CHECK(samples >= 0 && samples <= kMaxSamples, "samples {} must be in [0, {}]", samples, kMaxSamples);
  ENGRAM_CHECK(std::isfinite(temperature) && temperature > 0.0f && temperature <= 100.0f,
               "temperature {} must be in (0, 100]", temperature);
  ENGRAM_CHECK(views >= 1 && views <= kMaxViews, "views {} must be in [1, {}]", views, kMaxViews);
  ENGRAM_CHECK(batch >= 1 && batch <= kMaxBatch, "batch {} must be in [1, {}]", batch, kMaxBatch);
  ENGRAM_CHECK(!stream || (beam == 1 && n_best == 1),
               "stream: tokens are streamed from greedy decoding or sampling, not from a beam (beam {}, n_best {})",
               beam, n_best);
}

SearchOptions DecodeOptions::search() const {
  SearchOptions s;
  s.beam = beam;
  s.n_best = n_best;
  s.alpha = alpha;
  s.max_length_ratio = max_length_ratio;
  s.max_length_offset = max_length_offset;
  s.max_length = max_length;
  s.min_length = min_length;
  s.block_ngram_repeat = block_ngram_repeat;
  s.coverage_penalty = coverage_penalty;
  s.alignments = alignments;
  s.sampling_topk = sampling_topk;
  s.sampling_topp = sampling_topp;
  s.temperature = temperature;
  s.seed = seed;
  return s;
}

bool OptionSet::has(std::string_view field) const {
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

const std::vector<std::string>& option_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    DecodeOptions o;
    NameLister l{out};
    o.visit(l);
    return out;
  }();
  return names;
}

void finish_options(DecodeOptions& o, const std::vector<std::string>& given) {
  const auto has = [&](std::string_view f) { return std::find(given.begin(), given.end(), f) != given.end(); };
  if (has("n_best") && !has("beam")) o.beam = std::max(o.beam, o.n_best);
  o.validate();
}

DecodeOptions options_from_json(const json& object, const OptionSet& set, std::string_view family,
                                std::vector<std::string>* given, const std::vector<std::string>& inputs) {
  ENGRAM_CHECK(object.is_object(), "the request must be a JSON object, got {}", object.type_name());
  DecodeOptions o = set.defaults;
  std::vector<std::string> read;
  JsonReader r(object, set, family, read, inputs);
  o.visit(r);
  finish_options(o, read);
  if (given) *given = std::move(read);
  return o;
}

ModelDefaults read_model_defaults(const YAML::Node& section, const std::string& source, const OptionSet* set,
                                  std::string_view family) {
  ModelDefaults m;
  if (!section || section.IsNull()) return m;
  YAML::Node wrapped;
  wrapped["decode"] = section;
  DecodeSection read{m.values};
  io::from_yaml(wrapped, read, source);  // unknown keys, types and enum names
  for (const std::string& f : option_names())
    if (section[f]) m.fields.push_back(f);
  if (set)
    for (const std::string& f : m.fields)
      ENGRAM_CHECK(set->has(f), "{}: decode.{} is not an option of the {} family (its options: {})", source, f, family,
                   set->fields.empty() ? std::string("none") : fmt::format("{}", fmt::join(set->fields, ", ")));
  try {  // ranges, as a request naming the same fields would meet them
    DecodeOptions o = set ? set->defaults : DecodeOptions{};
    copy_named(o, m.values, m.fields);
    finish_options(o, m.fields);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: decode: {}", source, e.what()));
  }
  return m;
}

DecodeOptions with_model_defaults(const DecodeOptions& asked, const std::vector<std::string>& given,
                                  const ModelDefaults& model) {
  DecodeOptions o = asked;
  std::vector<std::string> taken;  // the model's fields the caller did not give
  for (const std::string& f : model.fields)
    if (!named(given, f)) taken.push_back(f);
  copy_named(o, model.values, taken);
  const bool beam_given = named(given, "beam");
  const bool n_best_given = named(given, "n_best");
  if (beam_given && !n_best_given) o.n_best = std::min(o.n_best, o.beam);  // an explicit beam caps the model's n_best
  if (!beam_given && (n_best_given || named(taken, "n_best"))) o.beam = std::max(o.beam, o.n_best);
  if (o.stream && named(given, "stream") && !beam_given && !n_best_given) o.beam = o.n_best = 1;  // streams are greedy
  o.validate();
  return o;
}

}  // namespace engram::decode
