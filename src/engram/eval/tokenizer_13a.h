// The mteval-v13a tokenizer as sacreBLEU's "13a" applies it (sacrebleu/tokenizers/tokenizer_13a.py
// + tokenizer_re.py): unescape a few SGML entities, split off punctuation and symbols, split
// period/comma unless next to a digit, split a dash after a digit, collapse whitespace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

// Tokenized line, tokens joined by single spaces, no leading/trailing space. The input is used
// as given (sacreBLEU's BLEU right-strips the line before calling its tokenizer; bleu.cc does too).
std::string tokenize_13a(std::string_view line);

// The same tokens as a list (tokenize_13a(line) split on spaces).
std::vector<std::string> tokens_13a(std::string_view line);

}  // namespace engram::eval
