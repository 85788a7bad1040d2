// A lexical shortlist (Marian's `--shortlist`, CTranslate2's vocabulary map): for each source token
// the target tokens most likely to appear in its translation, plus the most frequent target
// tokens. A batch then decodes over the union of its source tokens' lists and the frequent ones
// (batch_ids), so the output layer multiplies only those rows of W_o; every other class gets
// probability 0. It is built from a parallel corpus by co-occurrence within sentence pairs:
// c(s), c(t), c(s, t) count the pairs whose source holds s, whose target holds t, and both;
// a source token keeps the `best` target tokens outside the frequent ones by P(t | s) =
// c(s, t) / c(s) (ties: the more frequent t, then the lower id).
//
// File (`shortlist.tsv` beside the model; text, one list per line, tokens as the model's
// vocabulary spells them, never containing whitespace):
//   engram-shortlist 1
//   *<TAB>t1 t2 ...            the frequent target tokens (always in)
//   s<TAB>t1 t2 ...            a source token and its target tokens, best first
// A token the vocabulary does not hold, a repeated source token or a malformed line is an error
// naming file:line.
// Dims: V target vocabulary, U source vocabulary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "engram/models/text_codec.h"

namespace engram::models {

struct ShortlistConfig {
  int best = 50;       // target tokens kept per source token
  int frequent = 100;  // most frequent target tokens always in
};

class Shortlist {
 public:
  // Counts co-occurrence over sentence pairs of ids (no <go>/<eos>; ids outside the vocabularies
  // are an error).
  static Shortlist build(std::span<const std::vector<int32_t>> src, std::span<const std::vector<int32_t>> tgt,
                         int src_vocab, int tgt_vocab, const ShortlistConfig& cfg);
  static Shortlist load(const std::filesystem::path& path, const TextCodec& src, const TextCodec& tgt);
  // Written atomically (a temporary file renamed into place).
  void save(const std::filesystem::path& path, const TextCodec& src, const TextCodec& tgt) const;

  // The sorted target ids a batch decodes over: the special ids (<pad>, <unk>, <go>, <eos>), the
  // frequent ones and the lists of every source id in `src_ids` (padding 0 included harmlessly).
  std::vector<int32_t> batch_ids(std::span<const int32_t> src_ids) const;

  int src_vocab() const { return static_cast<int>(by_source_.size()); }
  int tgt_vocab() const { return tgt_vocab_; }
  const std::vector<int32_t>& frequent() const { return frequent_; }
  const std::vector<int32_t>& of(int32_t src_id) const { return by_source_.at(src_id); }

 private:
  int tgt_vocab_ = 0;
  std::vector<int32_t> frequent_;                // [<= frequent]
  std::vector<std::vector<int32_t>> by_source_;  // [U] each [<= best]
};

// The shortlist file's name in a model directory, and the most bytes read from one.
inline constexpr const char* kShortlistFile = "shortlist.tsv";
inline constexpr uint64_t kMaxShortlistFileBytes = uint64_t{256} << 20;

}  // namespace engram::models
