// Line reading with UTF-8 validation and optional gzip decompression (see text.h).
#include "engram/data/text.h"

#include <unistd.h>

#include <fstream>

#include "engram/core/error.h"
#include "engram/core/read_file.h"

#include <zlib.h>

namespace engram::data {
namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 when it is invalid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t n;
  uint32_t cp;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool has_gzip_magic(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
         static_cast<unsigned char>(bytes[1]) == 0x8B;
}

// A decompression bomb stops at max_bytes of output, as a plain file does of input.
std::string gunzip_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
  gzFile f = gzopen(path.c_str(), "rb");
  ENGRAM_CHECK(f != nullptr, "{}: cannot open for reading", path);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int errnum = 0;
      const std::string msg = gzerror(f, &errnum);
      gzclose(f);
      ENGRAM_CHECK(false, "{}: gzip error: {}", path, msg);
    }
    if (n == 0) break;
    if (static_cast<uint64_t>(n) > max_bytes - out.size()) {
      gzclose(f);
      throw Error(fmt::format("{}: decompresses to more than {} (the limit of {}, docs/limits.md)", path,
                              core::byte_size_text(max_bytes), what));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  // A stream cut short reads as a clean end of file; zlib only says so through gzerror.
  int errnum = Z_OK;
  const std::string msg = gzerror(f, &errnum);
  gzclose(f);
  ENGRAM_CHECK(errnum == Z_OK || errnum == Z_STREAM_END, "{}: truncated or damaged gzip data ({})", path, msg);
  return out;
}

}  // namespace

size_t find_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

namespace {

// The lines of `bytes` ('\n'-separated; a final '\r' dropped; no line after a final '\n'), each
// valid UTF-8; errors name `name`:LINE.
std::vector<std::string> split_lines(std::string_view bytes, std::string_view name) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t bad = find_invalid_utf8(line);
    ENGRAM_CHECK(bad == std::string_view::npos, "{}:{}: invalid UTF-8 (byte 0x{:02X} at column {})", name,
                 lines.size() + 1, static_cast<unsigned char>(line[bad]), bad + 1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::vector<std::string> read_lines(const std::string& path, uint64_t max_bytes, std::string_view what) {
  std::string bytes = core::read_file_limited(path, max_bytes, what);
  if (has_gzip_magic(bytes)) bytes = gunzip_file(path, max_bytes, what);
  return split_lines(bytes, path);
}

// Standard input as a file is read (std::getline on a stdio-synchronised std::cin would take a
// byte per call), within the same limit.
std::vector<std::string> read_lines_or_stdin(const std::string& path) {
  if (path != "-") return read_lines(path);
  return split_lines(core::read_fd_limited(STDIN_FILENO, "<stdin>", kMaxTextFileBytes, "a text file"), "<stdin>");
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ENGRAM_CHECK(out.good(), "{}: cannot open for writing", path);
  for (const auto& l : lines) out << l << '\n';
  out.flush();
  ENGRAM_CHECK(out.good(), "{}: write error", path);
}

std::vector<std::string> split_whitespace(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  auto is_space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> utf8_chars(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t n = utf8_sequence_length(s, i);
    ENGRAM_CHECK(n != 0, "utf8_chars: invalid UTF-8 at byte {}", i);
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

int64_t utf8_length(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace engram::data
