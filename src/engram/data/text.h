// Text-file and UTF-8 basics for the data layer: read a file as validated UTF-8 lines (errors
// name file:line), split text into whitespace tokens or into characters.
// Gzip input: files starting with the gzip magic bytes are decompressed (zlib is a required
// dependency); a truncated or damaged stream is an error, never fewer lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::data {

// Byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates and code points
// above U+10FFFF are invalid), or npos when s is valid.
size_t find_invalid_utf8(std::string_view s);

// The most bytes read_lines reads from one file by default (a corpus), before and after gzip
// decompression alike (docs/limits.md).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{4} << 30;

// All lines of a file, without their '\n' (and without a trailing '\r', so CRLF files read like
// LF files). A final line without '\n' is kept; a final '\n' does not add an empty line. Throws
// engram::Error "PATH: cannot open ...", "PATH:LINE: invalid UTF-8 (byte 0xFF at column 7)" or,
// past `max_bytes` (read or decompressed; reading stops there), "PATH: more than ... (the limit
// of `what`, ...)".
std::vector<std::string> read_lines(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes,
                                    std::string_view what = "a text file");

// read_lines(path), or for "-" the lines of standard input, at most kMaxTextFileBytes of it (no
// gzip; errors name "<stdin>", "<stdin>:LINE").
std::vector<std::string> read_lines_or_stdin(const std::string& path);

// Writes lines joined by '\n' (with a final '\n'); throws on I/O failure.
void write_lines(const std::string& path, const std::vector<std::string>& lines);

// Splits on ASCII whitespace (space, \t, \n, \v, \f, \r); no empty tokens.
std::vector<std::string> split_whitespace(std::string_view text);

// One string per UTF-8 code point ("2026年" -> "2","0","2","6","年"); s must be valid UTF-8.
std::vector<std::string> utf8_chars(std::string_view s);

// Number of code points in valid UTF-8.
int64_t utf8_length(std::string_view s);

}  // namespace engram::data
