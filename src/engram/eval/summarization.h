// Extractive baselines and copy diagnostics for headline and summary generation: pure functions
// on sentences and token sequences (the BBC reader, data/bbc.h, supplies the sentences; the
// model's evaluation supplies its outputs and vocabulary).
//   - lead_n: the first n body sentences (lead-3, the classic news baseline);
//   - lead_words: the first body sentences until their word count reaches the reference's
//     (lead-k: a length-matched lead, so that ROUGE precision and recall are not traded away
//     by length alone);
//   - repeated_trigram_rate: how much an output repeats itself (the failure coverage is for);
//   - oov_copy_rate: how many of the reference's out-of-vocabulary words that the source offers
//     the output reproduces (what a copy mechanism is for).
// Words are runs of non-whitespace (word_count); token sequences are the model's own tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace engram::eval {

// Number of ASCII-whitespace-separated words.
size_t word_count(std::string_view text);

// The first min(n, |sentences|) sentences.
std::vector<std::string> lead_n(const std::vector<std::string>& sentences, size_t n);

// The shortest prefix of sentences whose total word_count is >= min_words (all of them when the
// whole text is shorter; none when min_words == 0).
std::vector<std::string> lead_words(const std::vector<std::string>& sentences, size_t min_words);

struct RepetitionStats {
  int64_t repeated = 0;  // trigram positions whose trigram already occurred earlier in the same output
  int64_t total = 0;     // trigram positions, all outputs together
  double rate = 0;       // repeated / total, 0 when total == 0
};

// Over outputs (each a token sequence [T_i]): a trigram at position t counts as repeated when
// the same three tokens occur at some position s < t of the same output (overlaps count:
// "a a a a" has 2 trigrams, the second repeated). Pooled over all outputs.
RepetitionStats repeated_trigram_rate(const std::vector<std::vector<std::string>>& outputs);

struct CopyStats {
  int64_t copied = 0;      // of `candidates`, the occurrences the output reproduces
  int64_t candidates = 0;  // reference tokens outside the vocabulary that occur in the source
  double rate = 0;         // copied / candidates, 0 when there are none
};

// Per example i: candidates are the occurrences in references[i] of words w with w not in vocab
// and w in sources[i]; each such w counts min(count in reference, count in output) as copied
// (clipped like ROUGE-1's overlap). Pooled over examples. The three lists must have one entry
// per example.
CopyStats oov_copy_rate(const std::vector<std::vector<std::string>>& sources,
                        const std::vector<std::vector<std::string>>& outputs,
                        const std::vector<std::vector<std::string>>& references,
                        const std::unordered_set<std::string>& vocab);

}  // namespace engram::eval
