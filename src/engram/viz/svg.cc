// SVG building blocks (see svg.h): escaping, width estimates, number formatting, colour scale.
#include "engram/viz/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace engram::viz {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes one UTF-8 code point at s[i]; invalid sequences (bad lead/continuation bytes,
// overlong forms, surrogates, > U+10FFFF) give kReplacement and consume one byte.
char32_t decode(std::string_view s, size_t i, size_t* len) {
  const auto b = static_cast<unsigned char>(s[i]);
  *len = 1;
  if (b < 0x80) return b;
  int n = 0;
  char32_t cp = 0;
  if (b >= 0xC2 && b <= 0xDF) n = 1, cp = b & 0x1F;
  else if (b >= 0xE0 && b <= 0xEF) n = 2, cp = b & 0x0F;
  else if (b >= 0xF0 && b <= 0xF4) n = 3, cp = b & 0x07;
  else return kReplacement;
  if (i + n >= s.size()) return kReplacement;  // truncated sequence
  for (int k = 1; k <= n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return kReplacement;
    cp = (cp << 6) | (c & 0x3F);
  }
  if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return kReplacement;
  }
  *len = static_cast<size_t>(n) + 1;
  return cp;
}

void append_utf8(std::string* out, char32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Advance width of one code point in em (rough metrics of Noto Sans / DejaVu Sans).
double char_em(char32_t cp) {
  if (cp == ' ') return 0.27;
  if (cp < 0x80) {
    const char c = static_cast<char>(cp);
    if (std::string_view("ijlI.,:;'|!`").find(c) != std::string_view::npos) return 0.28;
    if (std::string_view("ftr()[]{}\"-/\\").find(c) != std::string_view::npos) return 0.37;
    if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '@' || c == '%') return 0.88;
    if (c >= 'A' && c <= 'Z') return 0.66;
    return 0.56;  // lower case, digits, other symbols
  }
  if (cp >= 0x0300 && cp <= 0x036F) return 0.0;  // combining diacritics
  if (cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0xFEFF) return 0.0;
  if (is_wide_char(cp)) return 1.0;
  return 0.6;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    char32_t cp = decode(text, i, &len);
    const bool forbidden = (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
                           cp == 0xFFFE || cp == 0xFFFF;
    if (forbidden) cp = kReplacement;
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: append_utf8(&out, cp);
    }
    i += len;
  }
  return out;
}

bool is_wide_char(char32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) ||
         (cp >= 0x3041 && cp <= 0x33FF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
         (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

double text_width(std::string_view text, double font_px) {
  double em = 0;
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    em += char_em(decode(text, i, &len));
    i += len;
  }
  return em * font_px;
}

std::string truncate_label(std::string_view text, int max_chars) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    decode(text, i, &len);
    starts.push_back(i);
    i += len;
  }
  if (max_chars <= 0 || static_cast<int>(starts.size()) <= max_chars) return std::string(text);
  return std::string(text.substr(0, starts[std::max(0, max_chars - 1)])) + "\u2026";
}

std::string svg_num(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

namespace {

// ColorBrewer "Blues" (9 classes): lightness falls monotonically from white to navy.
constexpr std::array<uint32_t, kScaleStops> kBlues = {0xf7fbff, 0xdeebf7, 0xc6dbef,
                                                     0x9ecae1, 0x6baed6, 0x4292c6,
                                                     0x2171b5, 0x08519c, 0x08306b};

std::array<double, 3> scale_rgb(double t) {
  if (!(t >= 0)) t = 0;  // NaN too
  t = std::min(t, 1.0);
  const double pos = t * (kScaleStops - 1);
  const int lo = std::min(static_cast<int>(pos), kScaleStops - 2);
  const double f = pos - lo;
  std::array<double, 3> rgb{};
  for (int c = 0; c < 3; ++c) {
    const double a = (kBlues[lo] >> (16 - 8 * c)) & 0xFF;
    const double b = (kBlues[lo + 1] >> (16 - 8 * c)) & 0xFF;
    rgb[c] = a + (b - a) * f;
  }
  return rgb;
}

}  // namespace

std::string scale_colour(double t) {
  const auto rgb = scale_rgb(t);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(rgb[0])),
                     static_cast<int>(std::lround(rgb[1])), static_cast<int>(std::lround(rgb[2])));
}

bool dark_text_ok(double t) {
  // Relative luminance (sRGB, WCAG): dark text (#222) on anything lighter than ~0.3.
  const auto rgb = scale_rgb(t);
  double lum = 0;
  const double w[3] = {0.2126, 0.7152, 0.0722};
  for (int c = 0; c < 3; ++c) {
    const double v = rgb[c] / 255.0;
    lum += w[c] * (v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4));
  }
  return lum > 0.3;
}

std::string scale_stop(int i) { return fmt::format("#{:06x}", kBlues[std::clamp(i, 0, kScaleStops - 1)]); }

}  // namespace engram::viz
