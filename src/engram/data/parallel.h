// Parallel corpus reading: two line-aligned text files, or one tab-separated pair file such as
// Tatoeba/ManyThings ("English<TAB>other<TAB>attribution"). Lines are validated UTF-8 (errors
// name file:line); pairs with an empty side are skipped and counted; optional length filtering.
// Gzip input is decompressed as read_lines does (see text.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::data {

enum class LengthUnit {
  kWords,  // whitespace tokens
  kChars,  // Unicode code points (useful for unsegmented Chinese/Japanese)
};

struct ParallelOptions {
  LengthUnit length_unit = LengthUnit::kWords;
  int64_t min_length = 1;  // pairs with a side shorter than this are dropped (counted)
  int64_t max_length = 0;  // pairs with a side longer than this are dropped; 0 = no limit
  int64_t max_pairs = 0;   // stop after this many kept pairs; 0 = all
  // TSV only: which tab-separated fields are source and target (0-based). Tatoeba files are
  // "English<TAB>other<TAB>attribution": the defaults read English -> other; swap them for
  // other -> English. Every line must have more fields than the larger index.
  int src_field = 0;
  int tgt_field = 1;
};

struct ParallelStats {
  int64_t lines = 0;           // lines read (per side)
  int64_t kept = 0;            // pairs returned
  int64_t empty_skipped = 0;   // pairs with an empty (or whitespace-only) side
  int64_t length_skipped = 0;  // pairs outside [min_length, max_length]
};

struct ParallelCorpus {
  std::vector<std::string> src;  // [N] kept source lines
  std::vector<std::string> tgt;  // [N] kept target lines
  std::vector<int64_t> line;     // [N] 1-based line number of each pair in the input
  ParallelStats stats;
  size_t size() const { return src.size(); }
};

// Line i of src_path pairs with line i of tgt_path. A different number of lines is an error that
// names both files and both counts.
ParallelCorpus read_parallel(const std::string& src_path, const std::string& tgt_path,
                             const ParallelOptions& options = {});

// One pair per line, fields separated by tabs (see ParallelOptions::src_field / tgt_field).
ParallelCorpus read_tsv_pairs(const std::string& path, const ParallelOptions& options = {});

// Length of text in the given unit.
int64_t text_length(const std::string& text, LengthUnit unit);

// Removes a sentence's final punctuation: the trailing run of . ! ? and their full-width forms
// 。！？ and …, with the spaces around it. Returns whether anything was removed; text that is
// nothing but punctuation is left as it is.
bool strip_final_punctuation(std::string* text);
// Whether UTF-8 `text` ends in a CJK character or punctuation mark (code point U+2E80 and up,
// after trailing spaces): a language written without spaces between words and sentences.
bool ends_in_cjk(std::string_view text);

}  // namespace engram::data
