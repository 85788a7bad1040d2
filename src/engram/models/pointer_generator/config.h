// The pointer-generator's model config (See, Liu & Manning 2017), saved as a checkpoint's
// config.yaml: the shared source/target vocabulary (word or SentencePiece), the encoder and
// attention decoder sizes, and the two switches the paper compares: `copy` (the p_gen mixture
// over the extended vocabulary; false = the same model with a plain vocabulary softmax, the
// baseline) and `coverage` (the sum of earlier attention as a feature of the attention score,
// plus the coverage loss with weight `coverage_weight`).
// Dims: V vocabulary, E embedding, H decoder hidden, U = H/2 units per encoder direction, A
// attention width.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engram/io/config.h"
#include "engram/models/text_codec.h"

namespace engram::models {

enum class PgCell { kLstm, kGru };

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::PgCell> {
  static constexpr std::pair<engram::models::PgCell, const char*> items[] = {{engram::models::PgCell::kLstm, "lstm"},
                                                                             {engram::models::PgCell::kGru, "gru"}};
};

namespace engram::models {

struct PointerGeneratorConfig {
  int vocab = 0;              // V, specials included (set from the data)
  TokenUnit unit = TokenUnit::kWord;  // word | spm
  int vocab_size = 50000;     // word: the most frequent train words (specials included); spm: pieces
  int min_count = 1;          // word: rarer words stay out of the vocabulary
  bool lowercase = false;     // lowercase text before tokenizing
  int embed_dim = 128;        // E (one table for source and target)
  int hidden = 256;           // H; the bidirectional encoder has H/2 units per direction
  PgCell cell = PgCell::kLstm;
  int attn_dim = 0;           // A (0 = H)
  bool copy = true;           // the p_gen copy mixture; false = vocabulary softmax only
  bool coverage = false;      // coverage feature of the attention score + coverage loss
  float coverage_weight = 1.0f;  // λ of the coverage loss λ Σ_i min(α_ti, cov_ti)
  float dropout = 0.0f;       // on embeddings and before the output layer (training only)
  // Loss weight of the target tokens that are <unk> (words outside the vocabulary that the source
  // does not hold): 1 = plain NLL; 0 = never trained to say <unk>, so the probability mass a rare
  // word needs goes to copying it instead (the eval's OOV-copy rate).
  float unk_loss_weight = 1.0f;
  int max_source_tokens = 400;  // articles truncated to this many tokens, in training and decoding
  // Source-token features added to the encoder's embedded tokens (model.h): how often the token
  // occurs in the article, and an OOV's order of first appearance among the article's OOVs.
  bool source_features = false;

  template <class V>
  void visit(V& v) {
    v("vocab", vocab, "vocabulary size, specials included (set from the data)");
    v("unit", unit, "word | spm: how text becomes tokens");
    v("vocab_size", vocab_size, "word: keep the most frequent train words (specials included); spm: pieces");
    v("min_count", min_count, "word: words seen fewer times stay out of the vocabulary");
    v("lowercase", lowercase, "lowercase text before tokenizing");
    v("embed_dim", embed_dim, "embedding width (one table for source and target)");
    v("hidden", hidden, "decoder hidden size (the bidirectional encoder: hidden/2 per direction)");
    v("cell", cell, "lstm | gru");
    v("attn_dim", attn_dim, "additive attention width (0 = hidden)");
    v("copy", copy, "copy source words through p_gen (false: the vocabulary-only baseline)");
    v("coverage", coverage, "coverage: earlier attention as a score feature, plus the coverage loss");
    v("coverage_weight", coverage_weight, "weight of the coverage loss (See et al.: 1)");
    v("dropout", dropout, "dropout on embeddings and before the output layer");
    v("unk_loss_weight", unk_loss_weight, "loss weight of <unk> targets in [0, 1] (0: never learn to say <unk>; copy instead)");
    v("max_source_tokens", max_source_tokens, "truncate articles to this many tokens (training and decoding; See et al.: 400)");
    v("source_features", source_features,
      "add source-token features to the encoder input: the token's count in the article, an OOV's order of first appearance");
  }
  // Errors name the first invalid field. validate_options() skips `vocab` (set from the data).
  void validate() const;
  void validate_options() const;
  // The vocabulary file in a model or run directory ("vocab.txt" | "vocab.spm"); the codec read
  // from `dir` (an error names the missing file), or built from training text into it.
  std::string file_name() const;
  TextCodec load(const std::string& dir) const;
  TextCodec build(const std::vector<std::string>& lines, const std::string& dir) const;
};

}  // namespace engram::models
