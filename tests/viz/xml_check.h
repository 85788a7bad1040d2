// A tiny strict XML reader for tests: checks that a document is well-formed (one root element,
// balanced tags, quoted attributes, only the five predefined or numeric entities, no raw '<' or
// '&' in text or attributes, valid UTF-8, no XML-forbidden control characters) and returns a
// small DOM with entities decoded, so tests can look for labels and attributes.
#pragma once

#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace engram::viz::testing {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;  // decoded values
  std::string text;                          // decoded character data directly inside (concatenated)
  std::vector<XmlElement> children;

  std::string attr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
  // Every descendant (self included) with this tag name, in document order.
  std::vector<const XmlElement*> find_all(const std::string& tag) const {
    std::vector<const XmlElement*> out;
    std::function<void(const XmlElement&)> walk = [&](const XmlElement& e) {
      if (e.name == tag) out.push_back(&e);
      for (const auto& c : e.children) walk(c);
    };
    walk(*this);
    return out;
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string_view doc) : s_(doc) {}

  XmlElement parse() {
    check_utf8();
    skip_space();
    if (starts("<?xml")) {
      const size_t end = s_.find("?>", i_);
      if (end == std::string_view::npos) fail("unterminated XML declaration");
      i_ = end + 2;
    }
    skip_misc();
    if (!starts("<")) fail("expected the root element");
    XmlElement root = element();
    skip_misc();
    if (i_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML error at byte " + std::to_string(i_) + ": " + what);
  }
  bool starts(std::string_view p) const { return s_.substr(i_, p.size()) == p; }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  void skip_misc() {  // whitespace and comments
    for (;;) {
      skip_space();
      if (!starts("<!--")) return;
      const size_t end = s_.find("-->", i_);
      if (end == std::string_view::npos) fail("unterminated comment");
      i_ = end + 3;
    }
  }
  void check_utf8() {
    for (size_t k = 0; k < s_.size();) {
      const auto b = static_cast<unsigned char>(s_[k]);
      i_ = k;
      if (b < 0x80) {
        if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') fail("control character");
        ++k;
        continue;
      }
      const int n = (b >= 0xC2 && b <= 0xDF) ? 1 : (b >= 0xE0 && b <= 0xEF) ? 2 : (b >= 0xF0 && b <= 0xF4) ? 3 : -1;
      if (n < 0 || k + n >= s_.size()) fail("invalid UTF-8");
      for (int j = 1; j <= n; ++j) {
        if ((static_cast<unsigned char>(s_[k + j]) & 0xC0) != 0x80) fail("invalid UTF-8");
      }
      k += n + 1;
    }
    i_ = 0;
  }
  std::string name() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '_' || s_[i_] == ':' || s_[i_] == '.')) {
      ++i_;
    }
    if (i_ == start) fail("expected a name");
    return std::string(s_.substr(start, i_ - start));
  }
  // Decodes character data up to (not including) one of `stops`; rejects raw '<' and bad '&'.
  std::string chars(char stop) {
    std::string out;
    while (i_ < s_.size() && s_[i_] != stop) {
      const char c = s_[i_];
      if (c == '<') fail("raw '<' in text or attribute");
      if (c == '&') {
        const size_t semi = s_.find(';', i_);
        if (semi == std::string_view::npos || semi - i_ > 10) fail("bad entity");
        const std::string_view ent = s_.substr(i_ + 1, semi - i_ - 1);
        if (ent == "amp") out += '&';
        else if (ent == "lt") out += '<';
        else if (ent == "gt") out += '>';
        else if (ent == "quot") out += '"';
        else if (ent == "apos") out += '\'';
        else if (!ent.empty() && ent[0] == '#') out += "?";  // numeric reference: accepted
        else fail("unknown entity &" + std::string(ent) + ";");
        i_ = semi + 1;
        continue;
      }
      out += c;
      ++i_;
    }
    return out;
  }
  XmlElement element() {
    ++i_;  // '<'
    XmlElement e;
    e.name = name();
    for (;;) {
      skip_space();
      if (starts("/>")) { i_ += 2; return e; }
      if (starts(">")) { ++i_; break; }
      const std::string key = name();
      skip_space();
      if (!starts("=")) fail("expected '=' after attribute " + key);
      ++i_;
      skip_space();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) fail("unquoted attribute " + key);
      const char q = s_[i_++];
      std::string value = chars(q);
      if (i_ >= s_.size()) fail("unterminated attribute " + key);
      ++i_;
      if (!e.attrs.emplace(key, value).second) fail("duplicate attribute " + key);
    }
    for (;;) {
      e.text += chars('<');
      if (i_ >= s_.size()) fail("unclosed element <" + e.name + ">");
      if (starts("<!--")) { skip_misc(); continue; }
      if (starts("</")) {
        i_ += 2;
        const std::string closing = name();
        if (closing != e.name) fail("</" + closing + "> closes <" + e.name + ">");
        skip_space();
        if (!starts(">")) fail("expected '>'");
        ++i_;
        return e;
      }
      e.children.push_back(element());
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

inline XmlElement parse_xml(std::string_view doc) { return XmlReader(doc).parse(); }

}  // namespace engram::viz::testing
