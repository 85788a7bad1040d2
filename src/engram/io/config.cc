// Typed config support: strict scalar parsing, unknown-key detection with a did-you-mean, float
// formatting and --set parsing (the templates live in config.h).
#include "engram/io/config.h"

#include <set>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "engram/core/read_file.h"

namespace engram::io {
namespace detail {
namespace {

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Null: return "nothing (null)";
    default: return "an undefined value";
  }
}

const std::string& scalar(const YAML::Node& node, const Where& w, std::string_view expected) {
  if (!node.IsScalar()) type_error(w, expected, node);
  return node.Scalar();
}

// Levenshtein distance, for suggestions.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string prefixed(const std::string& prefix, const std::string& key) { return prefix + key; }

}  // namespace

void type_error(const Where& w, std::string_view expected, const YAML::Node& node) {
  throw Error(fmt::format("config key '{}' in {}: expected {}, got {}", w.key.empty() ? "(top level)" : w.key,
                          w.source, expected, describe(node)));
}

int64_t parse_int(const YAML::Node& node, const Where& w, int64_t lo, int64_t hi) {
  std::string_view s = scalar(node, w, "an integer");
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == s.data() + s.size() && (v < lo || v > hi)))
    throw Error(fmt::format("config key '{}' in {}: {} is out of range [{}, {}]", w.key, w.source, node.Scalar(), lo, hi));
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) type_error(w, "an integer", node);
  return v;
}

double parse_float(const YAML::Node& node, const Where& w) {
  std::string_view s = scalar(node, w, "a number");
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  for (const char* inf : {".inf", ".Inf", ".INF", "inf"})
    if (s == inf) return negative ? -HUGE_VAL : HUGE_VAL;
  for (const char* nan : {".nan", ".NaN", ".NAN", "nan"})
    if (s == nan) return std::nan("");
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw Error(fmt::format("config key '{}' in {}: {} is out of range", w.key, w.source, node.Scalar()));
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) type_error(w, "a number", node);
  return negative ? -v : v;
}

bool parse_bool(const YAML::Node& node, const Where& w) {
  const std::string& s = scalar(node, w, "a boolean (true/false)");
  for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
    if (s == t) return true;
  for (const char* f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})
    if (s == f) return false;
  type_error(w, "a boolean (true/false)", node);
}

std::string parse_string(const YAML::Node& node, const Where& w) { return scalar(node, w, "a string"); }

void check_map(const YAML::Node& node, const Where& w) {
  if (!node.IsMap() && !node.IsNull()) type_error(w, "a map of config keys", node);
}

void check_unknown_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& prefix,
                        const std::string& source) {
  if (!map.IsMap()) return;
  for (const auto& kv : map) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : yaml_text(kv.first);
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string* best = nullptr;
    size_t best_d = 0;
    for (const std::string& k : known) {
      const size_t d = edit_distance(key, k);
      if (!best || d < best_d) best = &k, best_d = d;
    }
    std::string hint;
    if (best && (best_d <= 2 || best_d * 3 <= key.size()))
      hint = fmt::format(" (did you mean '{}'?)", prefixed(prefix, *best));
    throw Error(fmt::format("unknown config key '{}' in {}{}", prefixed(prefix, key), source, hint));
  }
}

std::string format_float(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string format_float(float v) {
  if (std::isnan(v) || std::isinf(v)) return format_float(static_cast<double>(v));
  std::string s = fmt::format("{}", v);  // shortest text that reads back to the same float
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

YAML::Node override_tree(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  ENGRAM_CHECK(eq != std::string_view::npos && eq > 0, "--set expects key=value, got '{}'", assignment);
  const std::string key(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  YAML::Node value;
  if (!text.empty() && (text.front() == '[' || text.front() == '{'))
    value = parse_yaml(text, fmt::format("--set {}", assignment));
  else
    value = YAML::Node(text);  // a plain scalar, exactly as typed
  // Build {a: {b: value}} from the innermost key outwards.
  size_t end = key.size();
  while (true) {
    const size_t dot = key.rfind('.', end - 1);
    const std::string part = key.substr(dot == std::string::npos ? 0 : dot + 1,
                                        end - (dot == std::string::npos ? 0 : dot + 1));
    ENGRAM_CHECK(!part.empty(), "--set {}: empty component in key '{}'", assignment, key);
    YAML::Node parent(YAML::NodeType::Map);
    parent[part] = value;
    value = parent;
    if (dot == std::string::npos) break;
    end = dot;
    ENGRAM_CHECK(end > 0, "--set {}: empty component in key '{}'", assignment, key);
  }
  return value;
}

std::string yaml_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

}  // namespace detail

namespace {

// A key given twice in one map is an error (yaml-cpp would keep the first silently); so is a
// document nested deeper than kMaxDepth (bounded recursion, whatever the input) or with more than
// kMaxNodes nodes once its aliases are expanded (a "billion laughs" document of a few hundred
// bytes would otherwise cost exponential time here and in every walk of it).
constexpr int kMaxDepth = 64;
constexpr int64_t kMaxNodes = 1'000'000;
void check_keys(const YAML::Node& node, const std::string& source, int depth, int64_t& nodes) {
  ENGRAM_CHECK(depth <= kMaxDepth, "{}: YAML nested deeper than {} levels", source, kMaxDepth);
  ENGRAM_CHECK(++nodes <= kMaxNodes, "{}: YAML of more than {} nodes (counting each alias as what it repeats)",
               source, kMaxNodes);
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (kv.first.IsScalar()) {
        const std::string key = kv.first.Scalar();
        ENGRAM_CHECK(seen.insert(key).second, "{}: line {}: duplicate key '{}'", source, kv.first.Mark().line + 1,
                     key);
      }
      check_keys(kv.second, source, depth + 1, nodes);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) check_keys(item, source, depth + 1, nodes);
  }
}

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& source) {
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) {
      const int line = docs[1].Mark().line;
      throw Error(fmt::format("{}: {} YAML documents{} (a '---' line starts another); a config is one document", source,
                              docs.size(), line >= 0 ? fmt::format(", the second at line {}", line + 1) : ""));
    }
    YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
    int64_t nodes = 0;
    check_keys(root, source, 0, nodes);
    return root;
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}: YAML error at line {}, column {}: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

YAML::Node load_yaml_file(const std::filesystem::path& file) {
  std::error_code ec;
  ENGRAM_CHECK(std::filesystem::exists(file, ec), "{}: no such config file", file.string());
  return parse_yaml(core::read_file_limited(file.string(), kMaxConfigFileBytes, "a YAML config file"), file.string());
}

}  // namespace engram::io
