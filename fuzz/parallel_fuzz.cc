// Fuzz harness: parallel text and TSV corpora (data/parallel.h, data/text.h). The whole input is
// read as a tab-separated pair file (read_tsv_pairs, with the defaults and with character
// lengths, a length window, other fields and a pair cap) and as validated lines (read_lines);
// split at its first 0xFF byte (never valid UTF-8) it is read as two line-aligned files
// (read_parallel; without 0xFF both sides are the whole input). Gzip input (1f 8b) is
// decompressed by the reader. Checks: every kept line is valid UTF-8 without '\n'; the counts
// in ParallelStats add up; utf8_chars / utf8_length / split_whitespace agree with the text; a
// gzip input is accepted only when it is whole (every member ends, CRC and length match).
#include <zlib.h>

#include "engram/data/parallel.h"
#include "engram/data/text.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "parallel";
using namespace engram::data;

void check_line(const std::string& s) {
  FUZZ_CHECK(kHarness, find_invalid_utf8(s) == std::string::npos, "kept a line with invalid UTF-8");
  FUZZ_CHECK(kHarness, s.find('\n') == std::string::npos, "kept a line with '\\n'");
  const std::vector<std::string> chars = utf8_chars(s);
  FUZZ_CHECK(kHarness, static_cast<int64_t>(chars.size()) == utf8_length(s), "utf8_chars and utf8_length disagree");
  std::string joined;
  for (const std::string& c : chars) joined += c;
  FUZZ_CHECK(kHarness, joined == s, "utf8_chars does not concatenate back to the line");
  for (const std::string& t : split_whitespace(s))
    FUZZ_CHECK(kHarness, !t.empty() && t.find_first_of(" \t\n\v\f\r") == std::string::npos,
               "split_whitespace returned an empty token or one with whitespace");
}

void check_corpus(const ParallelCorpus& c, const ParallelOptions& o) {
  const ParallelStats& s = c.stats;
  FUZZ_CHECK(kHarness, c.src.size() == c.tgt.size() && c.src.size() == c.line.size() &&
                           static_cast<int64_t>(c.size()) == s.kept,
             "corpus sides differ: {} src, {} tgt, {} line numbers, kept {}", c.src.size(), c.tgt.size(),
             c.line.size(), s.kept);
  FUZZ_CHECK(kHarness, s.kept + s.empty_skipped + s.length_skipped <= s.lines, "stats add up to more than the lines");
  FUZZ_CHECK(kHarness, o.max_pairs == 0 || s.kept <= o.max_pairs, "kept {} pairs, max_pairs {}", s.kept, o.max_pairs);
  for (size_t i = 0; i < c.size(); ++i) {
    FUZZ_CHECK(kHarness, c.line[i] >= 1 && c.line[i] <= s.lines && (i == 0 || c.line[i] > c.line[i - 1]),
               "bad line number {}", c.line[i]);
    check_line(c.src[i]);
    check_line(c.tgt[i]);
    for (const std::string* side : {&c.src[i], &c.tgt[i]}) {
      const int64_t n = text_length(*side, o.length_unit);
      FUZZ_CHECK(kHarness, n >= o.min_length && (o.max_length == 0 || n <= o.max_length),
                 "kept a side of length {} outside [{}, {}]", n, o.min_length, o.max_length);
    }
  }
}

// True when bytes are one or more complete gzip members (trailing bytes that do not start
// another member are allowed, as zlib's gzread skips them).
bool gzip_complete(std::string_view bytes) {
  size_t pos = 0;
  do {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) std::abort();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + pos));
    z.avail_in = static_cast<uInt>(bytes.size() - pos);
    unsigned char out[1 << 14];
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = out;
      z.avail_out = sizeof out;
      rc = inflate(&z, Z_NO_FLUSH);
      if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended inside the member
      if (rc == Z_BUF_ERROR) rc = Z_OK;                 // output full: go on
    }
    pos = bytes.size() - z.avail_in;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) return false;
  } while (bytes.size() - pos >= 2 && static_cast<unsigned char>(bytes[pos]) == 0x1f &&
           static_cast<unsigned char>(bytes[pos + 1]) == 0x8b);
  return true;
}

void run(std::string_view bytes) {
  const auto all = engram::fuzz::temp_file("pairs.tsv", bytes);
  engram::fuzz::guard(kHarness, [&] {
    const std::vector<std::string> lines = read_lines(all.string());
    for (const std::string& line : lines) check_line(line);
    const bool gz = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                    static_cast<unsigned char>(bytes[1]) == 0x8b;
    FUZZ_CHECK_ID(kHarness, "gzip-truncated-accepted", !gz || gzip_complete(bytes),
                  "read_lines accepted a truncated or corrupt gzip stream ({} bytes) as {} lines", bytes.size(),
                  lines.size());
  });
  ParallelOptions chars;
  chars.length_unit = LengthUnit::kChars;
  chars.min_length = 2;
  chars.max_length = 8;
  chars.max_pairs = 3;
  chars.src_field = 2;
  chars.tgt_field = 0;
  for (const ParallelOptions& o : {ParallelOptions{}, chars})
    engram::fuzz::guard(kHarness, [&] { check_corpus(read_tsv_pairs(all.string(), o), o); });

  const size_t split = bytes.find('\xff');
  const auto src = split == std::string_view::npos ? all : engram::fuzz::temp_file("src.txt", bytes.substr(0, split));
  const auto tgt =
      split == std::string_view::npos ? all : engram::fuzz::temp_file("tgt.txt", bytes.substr(split + 1));
  ParallelOptions words;
  words.max_length = 4;
  for (const ParallelOptions& o : {ParallelOptions{}, words})
    engram::fuzz::guard(kHarness, [&] { check_corpus(read_parallel(src.string(), tgt.string(), o), o); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
