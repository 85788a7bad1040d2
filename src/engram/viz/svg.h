// Small building blocks shared by the SVG writers of viz/: XML escaping that always yields
// well-formed output, label width estimates per code point (CJK counts double), compact number
// formatting for coordinates and tick labels, and the single-hue colour scale.
// Dims: none (strings and scalars only).
#pragma once

#include <string>
#include <string_view>

namespace engram::viz {

// CJK-capable sans-serif stack used by every SVG of this folder.
inline constexpr std::string_view kFontStack =
    "'Noto Sans CJK SC','Noto Sans CJK','WenQuanYi Micro Hei','Microsoft YaHei','PingFang SC',"
    "sans-serif";

// Escapes &, <, >, " and ' for text and attribute values. Invalid UTF-8 bytes and characters
// XML 1.0 forbids (C0 controls other than tab/newline/CR, U+FFFE, U+FFFF) become U+FFFD, so the
// result is always well-formed whatever the input.
std::string xml_escape(std::string_view text);

// True for East Asian wide / fullwidth code points (CJK ideographs, kana, hangul, fullwidth
// forms, most emoji): they take about one em.
bool is_wide_char(char32_t cp);

// Estimated advance width in px of `text` in a sans-serif font of size font_px: per code point
// (wide = 1 em, Latin letters ~0.55 em, narrow punctuation ~0.3 em, combining marks 0).
double text_width(std::string_view text, double font_px);

// At most max_chars code points; longer text keeps max_chars - 1 of them and ends in "…".
std::string truncate_label(std::string_view text, int max_chars);

// Coordinate for an attribute: at most 2 decimals, no trailing zeros ("12", "3.5", "-0.25").
std::string svg_num(double v);

// Single-hue sequential scale (white to dark blue, perceptually ordered lightness): t in [0, 1]
// (clamped) -> "#rrggbb". dark_text_ok(t) says whether dark text stays readable on that colour.
std::string scale_colour(double t);
bool dark_text_ok(double t);

// The scale's anchor colours, evenly spaced over [0, 1] (for SVG gradients).
inline constexpr int kScaleStops = 9;
// The blank border around every figure, in px.
inline constexpr double kMargin = 16;
std::string scale_stop(int i);

}  // namespace engram::viz
