// A rule-based English sentence splitter for news text and model outputs: the sentence
// boundaries ROUGE-Lsum needs (eval::lsum_text joins the pieces with '\n') and the body /
// summary sentences of the BBC reader (bbc.h).
//
// A sentence ends after a run of . ! ? and any closing quotes or brackets (" ' ) ] and the
// typographic ” ’; a straight " only when it is not glued to the next word) when
//   - whitespace follows and the next character is not a lowercase ASCII letter, unless the
//     run is a single '.' after a lone capital letter ("J. K. Rowling", "U.S. troops": initials);
//   - or nothing separates it from the next sentence (the BBC summaries join sentences that way:
//     "problems.The use of ink"): the character before the run is a lowercase letter, a digit or
//     a closing quote / bracket, and the next is a capital letter followed by a lowercase
//     letter, a space or an apostrophe ("up.But", "said.I think"), or an opening quote followed
//     by a capital letter. "3.5", "bbc.co.uk", "U.S.A." and "OutRage!'s" are not split.
// A newline always ends a sentence. Pieces are trimmed of ASCII whitespace; empty pieces are
// dropped, and a piece without a letter or digit (a stray quote) is joined to the previous one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engram::data {

std::vector<std::string> split_sentences(std::string_view text);

// Byte offset where the sentence starting at `start` of `line` (no '\n' in it) ends, by the rules
// above: just past its closing quotes / brackets, or line.size().
size_t sentence_end(std::string_view line, size_t start);

}  // namespace engram::data
