// Text <-> ids for the pointer-generator: one vocabulary shared by source and target (words:
// the most frequent train words, `vocab.txt`; or a SentencePiece model, `vocab.spm`), and the
// extended vocabulary of one example: the source's tokens outside the vocabulary get temporary
// ids V, V+1, ... in order of first appearance (a token seen twice keeps its id), a target token
// takes its vocabulary id, else the temporary id of the same source token, else <unk>; an output
// id >= V is written as that source token, verbatim.
// Dims: V vocabulary, S source tokens, X = oovs.size() temporary ids of the example.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engram/data/spm.h"
#include "engram/data/vocab.h"
#include "engram/models/pointer_generator/config.h"

namespace engram::models {

class PgCodec {
 public:
  // Builds the vocabulary from training text (word: the vocab_size most frequent tokens seen at
  // least min_count times; spm: trains a model of vocab_size pieces) and writes it into `dir`.
  static PgCodec build(const PointerGeneratorConfig& cfg, const std::vector<std::string>& lines,
                       const std::string& dir);
  // Loads the file from `dir`; errors name the missing file.
  static PgCodec load(const PointerGeneratorConfig& cfg, const std::string& dir);
  static std::string file_name(const PointerGeneratorConfig& cfg);  // "vocab.txt" | "vocab.spm"

  int32_t size() const;                                   // V
  std::vector<std::string> tokens(std::string_view text) const;  // words or pieces
  int32_t id(std::string_view token) const;               // <unk> when absent
  const std::string& token(int32_t id) const;             // id in [0, V)
  // Tokens back to text: words joined with spaces; pieces concatenated, "▁" read as a space.
  std::string join(const std::vector<std::string>& tokens) const;
  bool spm() const { return spm_ != nullptr; }
  // Do `a` and `b` map text to the same ids and back (same kind, casing and tokens)?
  friend bool same_vocabulary(const PgCodec& a, const PgCodec& b);

 private:
  PgCodec() = default;
  std::string normalise(std::string_view text) const;

  bool lowercase_ = false;
  data::Vocab vocab_;                          // word
  std::shared_ptr<const data::SpmModel> spm_;  // spm
};

// One source in extended ids.
struct ExtendedSource {
  std::vector<std::string> tokens;  // [S] display tokens (the source, truncated to max_tokens)
  std::vector<int32_t> ids;         // [S] vocabulary ids, or V + k for oovs[k]
  std::vector<std::string> oovs;    // [X] the source's tokens outside the vocabulary, first seen first
};

// The first `max_tokens` tokens of `text` (0 = all) in extended ids.
ExtendedSource extend_source(const PgCodec& codec, std::string_view text, int max_tokens = 0);
// Target tokens in extended ids: vocabulary id, else V + k of the same source token, else <unk>.
std::vector<int32_t> extend_target(const PgCodec& codec, const std::vector<std::string>& tokens,
                                   const ExtendedSource& src);
// Display tokens of output ids (stopping at <eos>; <pad>/<go> skipped): id < V its token, V + k
// the source's oovs[k]; an id outside [0, V + X) is an error.
std::vector<std::string> output_tokens(const PgCodec& codec, const std::vector<int32_t>& ids,
                                       const ExtendedSource& src);

}  // namespace engram::models
