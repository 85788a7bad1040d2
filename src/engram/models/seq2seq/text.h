// TextCodec: text <-> ids for one side of a translation model, per TokenizerConfig: words
// (whitespace tokens, vocab.txt), characters (each code point a token, spaces as "▁"), or a
// SentencePiece model trained by engram. Files in a model/run directory:
//   word/char: src.vocab.txt, tgt.vocab.txt     spm: src.spm, tgt.spm (joint: joint.spm, both)
// Ids 0..3 are <pad>, <unk>, <go>, <eos> for every unit (data/vocab.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engram/data/spm.h"
#include "engram/data/vocab.h"
#include "engram/models/seq2seq/model.h"

namespace engram::models {

enum class Side { kSource, kTarget };

class TextCodec {
 public:
  // Builds the vocabulary of `side` from training text (spm: trains a model) and writes its file
  // into `dir`. Joint spm trains once on both sides' lines (pass them all) into joint.spm.
  static TextCodec build(const TokenizerConfig& cfg, Side side, const std::vector<std::string>& lines,
                         const std::string& dir);
  // Loads the file of `side` from `dir`; errors name the missing file.
  static TextCodec load(const TokenizerConfig& cfg, Side side, const std::string& dir);
  // The file `side` uses inside a directory ("src.vocab.txt", "tgt.spm", "joint.spm", ...).
  static std::string file_name(const TokenizerConfig& cfg, Side side);

  int32_t size() const;
  // Ids of the text (no <go>/<eos>); unknown tokens are <unk>.
  std::vector<int32_t> encode(std::string_view text) const;
  // Display tokens of the text, one per id of encode() (words, characters or pieces).
  std::vector<std::string> tokens(std::string_view text) const;
  // Text of ids up to the first <eos> (<pad>/<go> skipped).
  std::string decode(const std::vector<int32_t>& ids) const;
  // Display token of one id.
  std::string token(int32_t id) const;

 private:
  TextCodec() = default;
  std::string normalise(std::string_view text) const;
  std::vector<std::string> split(std::string_view text) const;  // word/char tokens

  TokenUnit unit_ = TokenUnit::kWord;
  bool lowercase_ = false;
  data::Vocab vocab_;                      // word / char
  std::shared_ptr<const data::SpmModel> spm_;  // spm
};

}  // namespace engram::models
