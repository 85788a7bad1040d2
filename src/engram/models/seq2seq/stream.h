// Streaming translation (`engram translate`): source lines from a file descriptor, translations
// to stdout, decoded in batches of what is already available, so an interactive session gets
// each answer at once and a pipe gets batched throughput.
#pragma once

#include <cstdint>
#include <string>

#include "engram/models/seq2seq/translate.h"

namespace engram::models {

// Lines from a file descriptor, telling whether more input is ready without blocking. A line
// longer than kMaxLineBytes is an error ("<stdin>:LINE: a line longer than ...").
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Next complete line (without '\n' / '\r'), blocking; false at the end of input. A last line
  // without '\n' is returned as it is.
  bool next(std::string* line);
  // A complete line (or the end) can be read without waiting.
  bool ready();

 private:
  void fill();
  int fd_;
  int64_t lines_ = 0;  // complete lines returned
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

struct StreamOptions {
  bool scores = false;     // "i ||| text ||| score" lines (also with search.n_best > 1: one per hypothesis)
  std::string alignments;  // one JSON line per input (alignment_json) to this file; "-" = stderr; "" = none
  // Each line is "source<TAB>target prefix" (no tab: no prefix): the prefix's tokens are forced
  // first (translate_lines' prefixes).
  bool prefix_column = false;
  // Token streaming (greedy only): each line is decoded alone and its translation printed as the
  // tokens come (the text of all but the newest token, which may still join the next), the line
  // ended when the sentence is.
  bool tokens = false;
};

// Translates every line of `fd` (validated as UTF-8; errors name "<stdin>:LINE") and writes each
// translation, or its n-best lines in Moses format "i ||| text ||| score", to stdout, flushing
// after each batch. options.search is used as given (already validated, alignments on when
// stream.alignments is set). Failed writes are errors.
void translate_stream(const Translator& translator, const TranslateOptions& options, const StreamOptions& stream,
                      int fd);

}  // namespace engram::models
