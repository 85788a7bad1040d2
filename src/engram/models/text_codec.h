// TextCodec: text <-> ids through one vocabulary, for every text family (seq2seq's source and
// target sides, the pointer-generator's shared vocabulary): words (whitespace tokens, a vocab.txt
// file), characters (each code point a token, spaces as "▁"), or a SentencePiece model trained by
// engram. The family names the file; the codec reads and writes it.
// Ids 0..3 are <pad>, <unk>, <go>, <eos> for every unit (data/vocab.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engram/data/spm.h"
#include "engram/data/vocab.h"
#include "engram/io/config.h"

namespace engram::models {

enum class TokenUnit { kWord, kChar, kSpm };  // how text becomes ids

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::TokenUnit> {
  static constexpr std::pair<engram::models::TokenUnit, const char*> items[] = {
      {engram::models::TokenUnit::kWord, "word"},
      {engram::models::TokenUnit::kChar, "char"},
      {engram::models::TokenUnit::kSpm, "spm"}};
};

namespace engram::models {

class TextCodec {
 public:
  // How a vocabulary is built from training text; unit, lowercase and simplified also read it back.
  struct Options {
    TokenUnit unit = TokenUnit::kWord;
    bool lowercase = false;           // lowercase (ASCII + simple Unicode) before tokenizing
    bool simplified = false;          // traditional Chinese characters as simplified before tokenizing
    int vocab_size = 0;               // spm: pieces; word/char: the most frequent tokens, specials included
    int min_count = 1;                // word/char: rarer tokens become <unk>
    double character_coverage = 1.0;  // spm
  };
  // Builds the vocabulary from `lines` (spm: trains a model on them) and writes it to `path`.
  static TextCodec build(const Options& o, const std::vector<std::string>& lines, const std::string& path);
  // Reads `path`; a missing file is an error naming it and `what` ("the source vocabulary", ...).
  static TextCodec load(const Options& o, const std::string& path, std::string_view what);

  int32_t size() const;  // V
  bool spm() const { return spm_ != nullptr; }
  // Ids of the text (no <go>/<eos>); unknown tokens are <unk>.
  std::vector<int32_t> encode(std::string_view text) const;
  // Display tokens of the text, one per id of encode() (words, characters or pieces).
  std::vector<std::string> tokens(std::string_view text) const;
  int32_t id(std::string_view token) const;    // <unk> when absent
  const std::string& token(int32_t id) const;  // id in [0, V)
  // Text of ids up to the first <eos> (<pad>/<go> skipped).
  std::string decode(const std::vector<int32_t>& ids) const;
  // Tokens back to text: words joined with spaces; characters and pieces concatenated, "▁" read
  // as a space (spaces collapsed, none at the ends of pieces' text).
  std::string join(const std::vector<std::string>& tokens) const;
  // Do `a` and `b` map text to the same ids and back (same unit, casing, script and tokens)?
  friend bool same_vocabulary(const TextCodec& a, const TextCodec& b);

 private:
  TextCodec() = default;
  std::string normalise(std::string_view text) const;
  std::vector<std::string> split(std::string_view text) const;  // word/char tokens

  TokenUnit unit_ = TokenUnit::kWord;
  bool lowercase_ = false;
  bool simplified_ = false;
  data::Vocab vocab_;                          // word / char
  std::shared_ptr<const data::SpmModel> spm_;  // spm
};

}  // namespace engram::models
