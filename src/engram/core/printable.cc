// printable (printable.h).
#include "engram/core/printable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace engram::core {

namespace {

// Length of the valid UTF-8 sequence of a printable character at s[i] (RFC 3629: no overlongs, no
// surrogates, <= U+10FFFF; C1 controls U+0080-U+009F excluded), or 0 when the bytes are not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c == 0xC2) n = 2, lo = 0xA0;     // U+0080-U+009F are the C1 controls
  else if (c >= 0xC3 && c <= 0xDF) n = 2;
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
    } else if (const size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0 && i + n <= end) {
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

}  // namespace engram::core
