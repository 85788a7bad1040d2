// `engram eval`'s output: a hypothesis file scored against reference files (one segment per line)
// the way sacreBLEU's `--format text` prints it ("BLEU|nrefs:1|...|version:2.0.0+engram = 48.5
// 82.4/50.0/... (BP = ...)"), or its default JSON, or the score only; ROUGE-1/2/L/Lsum and
// accuracy in the same shapes; optionally the score of each source-length bucket as a Markdown
// table. For ROUGE a line's sentences are separated by the two characters `\n` (backslash, n):
// they become newlines, the sentence boundaries of ROUGE-Lsum (plain spaces for the others).
// Score decimals follow sacreBLEU's --width (default 1).
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

struct MetricReportOptions {
  std::string metric;             // bleu | chrf | chrf++ | rouge | acc
  std::string hyp;                // hypotheses file, "-" = stdin
  std::vector<std::string> refs;  // reference files, each aligned with hyp
  bool json = false;              // sacreBLEU's JSON instead of its text line
  bool score_only = false;        // only the score
  bool short_signature = false;   // "#:1|c:mixed|..."
  int width = 1;                  // decimals (sacreBLEU's --width)
  bool lowercase = false;         // bleu / chrf: case-insensitive
  std::string tokenize = "13a";   // bleu: 13a | none
  std::string smooth = "exp";     // bleu: exp | floor | add-k | none
  std::optional<double> smooth_value;  // bleu floor / add-k: finite, >= 0; unset = sacreBLEU's default
  bool normalize = false;         // acc: collapse whitespace and lowercase before comparing
  bool stem = false;              // rouge: Porter-stem tokens longer than 3 letters (rouge_score's use_stemmer)
  std::string by_length;          // source file aligned with hyp: also score each source-length bucket
  std::string buckets = "10,20,30";  // bucket upper bounds in source words (last bucket open)
  std::string length_unit = "words";  // by_length: words (whitespace-separated) | chars (code points
                                      // other than whitespace: unsegmented Chinese or Japanese)
};

// The lines of one file (one segment each; "-" = stdin). The caller supplies it (data::
// read_lines_or_stdin): eval/ reads no files itself.
using SegmentReader = std::function<std::vector<std::string>(const std::string& path)>;

// The report, without a final newline. Throws engram::Error on empty hypotheses, files of
// different lengths, stdin named twice, --by-length with a metric other than bleu / chrf, bad
// --buckets or --length-unit, and a smoothing value that is not finite, is negative or is given for a method
// without one (exp, none).
std::string metric_report(const MetricReportOptions& options, const SegmentReader& read);

// The head of a Markdown table (every report's tables): "| a | b |\n" and the rule under it,
// "|---|---:|\n" (`spaced`: "| --- | ---: |\n"); align[i] 'r' right-aligns column i (a column
// past `align` is left-aligned).
std::string markdown_head(std::initializer_list<std::string_view> titles, std::string_view align = "",
                          bool spaced = false);

}  // namespace engram::eval
