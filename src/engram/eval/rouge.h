// ROUGE-1, ROUGE-2 and ROUGE-L (sentence-level LCS) precision / recall / F1. Tokenisation
// (rouge_tokenize): simple_lower(), every ASCII punctuation character becomes a space, then split
// on whitespace; non-ASCII text is kept as is (unlike Google's rouge_score, Chinese or accented
// words are not dropped; there is no stemming). A text with no spaces (e.g. Chinese) is one token:
// split it into characters first if that is what you mean.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

std::vector<std::string> rouge_tokenize(std::string_view text);

struct RougeScore {
  double precision = 0;  // overlap / hypothesis count (0 when the hypothesis is empty)
  double recall = 0;     // overlap / reference count (0 when the reference is empty)
  double f1 = 0;         // 2PR / (P + R), 0 when P + R == 0
};

struct RougeResult {
  RougeScore rouge1, rouge2, rouge_l;
};

// One hypothesis against one reference. With several references, take the best F1 per type
// yourself (rouge_score's convention is per-type max).
RougeResult sentence_rouge(std::string_view hyp, std::string_view ref);

// Mean over segments of the per-segment precision, recall and F1 (each averaged on its own, as
// rouge_score's aggregator reports the mean); hyps and refs must have the same length.
RougeResult corpus_rouge(const std::vector<std::string>& hyps,
                         const std::vector<std::string>& refs);

}  // namespace engram::eval
