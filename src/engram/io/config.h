// Typed configs declared once. A Config struct lists its fields in one visit() template; the
// visitors here derive from it YAML load (strict: unknown keys and type errors name the key and
// the file), YAML save (with the help text as comments), `--set key=value` overrides (dotted keys
// for nested structs) and the field list the CLI turns into flags. Model code reads typed fields,
// never strings.
//
//   enum class Cell { lstm, gru };
//   template <> struct engram::io::EnumNames<Cell> {
//     static constexpr std::pair<Cell, const char*> items[] = {{Cell::lstm, "lstm"}, {Cell::gru, "gru"}};
//   };
//   struct EncoderConfig {
//     int hidden = 256;
//     Cell cell = Cell::lstm;
//     template <class V> void visit(V& v) {
//       v("hidden", hidden, "hidden units");
//       v("cell", cell, "recurrent cell");
//     }
//   };
//   struct ModelConfig {
//     EncoderConfig encoder;  // nested: keys "encoder.hidden", "encoder.cell"
//     float dropout = 0.1f;
//     template <class V> void visit(V& v) { v("encoder", encoder, "encoder"); v("dropout", dropout, "drop rate"); }
//   };
//
// Field types: bool, integers, float, double, std::string, enums with EnumNames, std::vector of
// those, and nested structs with a visit().
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "engram/core/error.h"

namespace engram::io {

// Specialise for each enum used in a config:
//   static constexpr std::pair<E, const char*> items[] = {{E::a, "a"}, ...};
template <class E>
struct EnumNames;

// One leaf field, for CLI flags and --help: key "encoder.hidden", type "int" / "float" / "bool"
// / "string" / "list" / "lstm|gru", the current value as YAML text, and the help line.
struct ConfigField {
  std::string key;
  std::string type;
  std::string value;
  std::string help;
};

namespace detail {

struct NullVisitor {
  template <class T>
  void operator()(const char*, T&, const char* = "") {}
};
template <class T>
concept Visitable = requires(T& t, NullVisitor& v) { t.visit(v); };
template <class T>
concept NamedEnum = std::is_enum_v<T> && requires { EnumNames<T>::items; };
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

// Where a value comes from, for error messages.
struct Where {
  std::string key;     // dotted: "encoder.hidden"
  std::string source;  // a file name, or "--set encoder.hidden=3"
};

[[noreturn]] void type_error(const Where& w, std::string_view expected, const YAML::Node& node);
int64_t parse_int(const YAML::Node& node, const Where& w, int64_t lo, int64_t hi);
double parse_float(const YAML::Node& node, const Where& w);
bool parse_bool(const YAML::Node& node, const Where& w);
std::string parse_string(const YAML::Node& node, const Where& w);
// Errors unless the node is a map (or null, read as an empty map).
void check_map(const YAML::Node& node, const Where& w);
// Errors on the first key of `map` not in `known`, suggesting the closest known key.
void check_unknown_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& prefix,
                        const std::string& source);
// Shortest text that reads back to the same value; always has a '.' or exponent (".inf", ".nan").
std::string format_float(float v);
std::string format_float(double v);
// {a: {b: value}} for "a.b=value"; the value stays a plain string unless it starts with [ or {.
YAML::Node override_tree(std::string_view assignment);
std::string yaml_text(const YAML::Node& node);  // a node as one-line flow YAML

template <class T>
void read_value(const YAML::Node& node, T& field, const Where& w);

template <class E>
std::string enum_choices() {
  std::string s;
  for (const auto& [value, name] : EnumNames<E>::items) s += (s.empty() ? "" : "|") + std::string(name);
  return s;
}

// YAML map -> struct fields. Absent keys keep their current values.
class YamlReader {
 public:
  YamlReader(const YAML::Node& node, std::string prefix, std::string source)
      : node_(node), prefix_(std::move(prefix)), source_(std::move(source)) {}
  template <class T>
  void operator()(const char* name, T& field, const char* help = "") {
    known_.emplace_back(name);
    if (!node_.IsMap()) return;
    const YAML::Node child = node_[name];
    if (child.IsDefined()) read_value(child, field, Where{prefix_ + name, source_});
  }
  void finish() const { check_unknown_keys(node_, known_, prefix_, source_); }

 private:
  const YAML::Node node_;
  std::string prefix_;
  std::string source_;
  std::vector<std::string> known_;
};

template <class T>
void read_value(const YAML::Node& node, T& field, const Where& w) {
  if constexpr (Visitable<T>) {
    check_map(node, w);
    YamlReader sub(node, w.key + ".", w.source);
    field.visit(sub);
    sub.finish();
  } else if constexpr (std::is_same_v<T, bool>) {
    field = parse_bool(node, w);
  } else if constexpr (std::is_integral_v<T>) {
    constexpr int64_t hi = std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)
                               ? std::numeric_limits<int64_t>::max()
                               : static_cast<int64_t>(std::numeric_limits<T>::max());
    field = static_cast<T>(parse_int(node, w, static_cast<int64_t>(std::numeric_limits<T>::min()), hi));
  } else if constexpr (std::is_floating_point_v<T>) {
    field = static_cast<T>(parse_float(node, w));
  } else if constexpr (std::is_same_v<T, std::string>) {
    field = parse_string(node, w);
  } else if constexpr (NamedEnum<T>) {
    const std::string s = parse_string(node, w);
    for (const auto& [value, name] : EnumNames<T>::items)
      if (s == name) {
        field = value;
        return;
      }
    throw Error(fmt::format("config key '{}' in {}: '{}' is not one of {}", w.key, w.source, s, enum_choices<T>()));
  } else if constexpr (IsVector<T>::value) {
    if (!node.IsSequence()) type_error(w, "a list", node);
    T out(node.size());
    for (size_t i = 0; i < node.size(); ++i) read_value(node[i], out[i], Where{fmt::format("{}[{}]", w.key, i), w.source});
    field = std::move(out);
  } else {
    static_assert(sizeof(T) == 0, "unsupported config field type (add visit() or EnumNames)");
  }
}

template <class T>
YAML::Node write_value(const T& field);

// Struct fields -> YAML map, in declaration order.
class YamlWriter {
 public:
  template <class T>
  void operator()(const char* name, T& field, const char* help = "") {
    node_[name] = write_value(field);
  }
  YAML::Node node() const { return node_; }

 private:
  YAML::Node node_{YAML::NodeType::Map};
};

template <class T>
YAML::Node write_value(const T& field) {
  if constexpr (Visitable<T>) {
    T copy = field;  // visit() is non-const; configs are small
    YamlWriter w;
    copy.visit(w);
    return w.node();
  } else if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T> || std::is_same_v<T, std::string>) {
    return YAML::Node(field);
  } else if constexpr (std::is_floating_point_v<T>) {
    return YAML::Node(format_float(field));
  } else if constexpr (NamedEnum<T>) {
    for (const auto& [value, name] : EnumNames<T>::items)
      if (field == value) return YAML::Node(std::string(name));
    throw Error(fmt::format("enum value {} has no name in EnumNames", static_cast<int64_t>(field)));
  } else if constexpr (IsVector<T>::value) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for (const auto& x : field) seq.push_back(write_value(x));
    seq.SetStyle(YAML::EmitterStyle::Flow);
    return seq;
  } else {
    static_assert(sizeof(T) == 0, "unsupported config field type (add visit() or EnumNames)");
  }
}

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T>) return "int";
  else if constexpr (std::is_floating_point_v<T>) return "float";
  else if constexpr (std::is_same_v<T, std::string>) return "string";
  else if constexpr (NamedEnum<T>) return enum_choices<T>();
  else return "list";
}

// Struct -> YAML text with each leaf's help as a trailing comment.
class YamlEmitter {
 public:
  explicit YamlEmitter(YAML::Emitter& out) : out_(out) {}
  template <class T>
  void operator()(const char* name, T& field, const char* help = "") {
    out_ << YAML::Key << name << YAML::Value;
    if constexpr (Visitable<T>) {
      out_ << YAML::BeginMap;
      field.visit(*this);
      out_ << YAML::EndMap;
    } else {
      out_ << write_value(field);
      if (help && *help) out_ << YAML::Comment(help);
    }
  }

 private:
  YAML::Emitter& out_;
};

// Flattens to ConfigField rows.
class FieldLister {
 public:
  explicit FieldLister(std::vector<ConfigField>& out, std::string prefix = "") : out_(out), prefix_(std::move(prefix)) {}
  template <class T>
  void operator()(const char* name, T& field, const char* help = "") {
    if constexpr (Visitable<T>) {
      FieldLister sub(out_, prefix_ + name + ".");
      field.visit(sub);
    } else {
      out_.push_back({prefix_ + name, type_name<T>(), yaml_text(write_value(field)), help ? help : ""});
    }
  }

 private:
  std::vector<ConfigField>& out_;
  std::string prefix_;
};

}  // namespace detail

// The largest YAML file load_yaml_file reads (config.yaml, train.yaml, data.yaml, a run config;
// docs/limits.md); reading stops there.
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{16} << 20;

// Parses YAML text / a file (one document: a second one after '---' is an error, never ignored);
// syntax errors become one-line engram::Errors naming the source.
YAML::Node parse_yaml(const std::string& text, const std::string& source);
YAML::Node load_yaml_file(const std::filesystem::path& file);

// Sets cfg's fields from a YAML map (keys absent from it keep their values). Errors name the
// dotted key and `source`: unknown keys (with a did-you-mean), wrong types, bad enum names.
template <class Cfg>
void from_yaml(const YAML::Node& node, Cfg& cfg, const std::string& source = "<yaml>") {
  detail::check_map(node, detail::Where{"", source});
  detail::YamlReader r(node, "", source);
  cfg.visit(r);
  r.finish();
}

// Defaults of Cfg overridden by a YAML file.
template <class Cfg>
Cfg load_config(const std::filesystem::path& file, Cfg cfg = {}) {
  from_yaml(load_yaml_file(file), cfg, file.string());
  return cfg;
}

// Every field as a YAML map (nested structs as nested maps), in declaration order.
template <class Cfg>
YAML::Node to_yaml(const Cfg& cfg) {
  return detail::write_value(cfg);
}

// YAML text of every field, help texts as comments (for --dump-config and saved configs).
template <class Cfg>
std::string dump_config(const Cfg& cfg) {
  Cfg copy = cfg;
  YAML::Emitter out;
  out << YAML::BeginMap;
  detail::YamlEmitter e(out);
  copy.visit(e);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// Applies one "key=value" (`--set encoder.hidden=512`); the value is read as the field's type.
template <class Cfg>
void apply_override(Cfg& cfg, std::string_view assignment) {
  from_yaml(detail::override_tree(assignment), cfg, fmt::format("--set {}", assignment));
}

// Every leaf field with its dotted key, type, current value and help.
template <class Cfg>
std::vector<ConfigField> config_fields(const Cfg& cfg) {
  Cfg copy = cfg;
  std::vector<ConfigField> out;
  detail::FieldLister l(out);
  copy.visit(l);
  return out;
}

}  // namespace engram::io
