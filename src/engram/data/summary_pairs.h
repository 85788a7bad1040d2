// Summarisation pairs from a tab-separated file: one pair per line, `source<TAB>target`, UTF-8.
// In the target, sentences may be separated by the two characters `\n` (a backslash and an n,
// not a line break), the usual way of keeping a multi-sentence summary on one line; the reader
// splits the target there. Strict: a line without exactly one tab, an empty source or an empty
// target (after trimming spaces) is an error naming PATH:LINE; an empty file is an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::data {

struct SummaryPair {
  std::string source;                         // the article
  std::vector<std::string> target_sentences;  // the summary's sentences (>= 1, none empty)
  int64_t line = 0;                           // 1-based line in the file

  // The sentences joined with single spaces: the summary as one token sequence.
  std::string target() const;
};

// The sentences of a target field: split at each literal `\n`, trimmed of ASCII spaces, empty
// pieces dropped (so "a.\n\nb." gives {"a.", "b."}).
std::vector<std::string> split_summary_sentences(std::string_view target);

// Every pair of the file (or of standard input for "-"); at most max_pairs when max_pairs > 0.
std::vector<SummaryPair> read_summary_tsv(const std::string& path, int64_t max_pairs = 0);

}  // namespace engram::data
