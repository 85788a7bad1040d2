// Small Unicode helpers the metrics need to match Python's string semantics: UTF-8 decoding to
// code points, Python's whitespace set (str.split / str.isspace) and str.lower().
// Invalid UTF-8 bytes are never an error here: each one decodes to U+DC80+byte (Python's
// "surrogateescape"), so a metric on odd input is deterministic instead of crashing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

// Decodes one code point starting at s[i]; sets *len to the number of bytes consumed (>= 1).
char32_t decode_utf8(std::string_view s, size_t i, size_t* len);
void append_utf8(std::string* out, char32_t cp);

// Byte offsets of code-point starts, plus s.size() at the end: [n_chars + 1].
std::vector<size_t> char_boundaries(std::string_view s);

// Exactly the characters for which Python's str.isspace() is true.
bool is_python_space(char32_t cp);

// Python's str.split(): splits on runs of is_python_space, drops empty pieces.
std::vector<std::string_view> split_python(std::string_view s);
// Python's str.rstrip() with no argument.
std::string_view rstrip_python(std::string_view s);
// "".join(s.split()): removes every Python whitespace character.
std::string remove_python_space(std::string_view s);

// Python's str.lower() (Unicode 14 mappings, U+0130 -> "i\u0307" included) except for the
// context-dependent final-sigma rule: a word-final capital sigma becomes "σ", not "ς".
std::string simple_lower(std::string_view s);

}  // namespace engram::eval
