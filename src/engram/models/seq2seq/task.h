// Training Seq2Seq on parallel text: the run configuration (`engram train CONFIG.yaml` with
// `model: seq2seq`), data loading (plain-text parallel files, tab-separated pair files such as
// Tatoeba, or the generated dates task; optionally CC-CEDICT entries as extra short pairs beside
// them, data/cedict.h), vocabularies built once and kept in the run directory,
// and the train::TrainTask adapter: token-budget batches with length bucketing in an order that
// is a pure function of (seed, epoch), teacher-forced label-smoothed loss, and validation by dev
// perplexity, greedy BLEU and exact match.
// Run directory: RUN/train.yaml (the effective config), RUN/{src,tgt}.vocab.txt or *.spm,
// RUN/valid.{src,tgt} (the validation pairs, one a line, when they are held out of the training
// file), and the Trainer's RUN/last/, RUN/best/, RUN/metrics.jsonl.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/data/batching.h"
#include "engram/data/ibm1.h"
#include "engram/models/seq2seq/model.h"
#include "engram/models/text_codec.h"
#include "engram/models/training.h"
#include "engram/train/trainer.h"

namespace engram::models {

struct Seq2SeqDataConfig {
  std::string train_src, train_tgt;  // line-aligned plain-text files, or
  std::string train_tsv;             // one tab-separated pair file (fields src_field / tgt_field)
  std::string valid_src, valid_tgt, valid_tsv;  // validation files (else valid_size held-out pairs)
  int src_field = 0, tgt_field = 1;  // tsv columns (Tatoeba: 0 English, 1 other)
  std::string generator;             // "dates": generated date pairs (no files)
  int64_t generate_train = 20000;    // generator: training pairs
  int64_t generate_valid = 500;      // generator: validation pairs
  int64_t valid_size = 1000;         // pairs held out of the training data when no validation files
  int max_length = 50;               // drop pairs with a side longer than this many tokens
  int64_t max_pairs = 0;             // use at most this many training pairs (0 = all)
  int64_t max_tokens = 4096;         // batch budget: B * max(S, T) padded tokens
  int64_t max_sentences = 0;         // and at most this many pairs per batch (0 = no cap)
  int64_t bleu_sentences = 1000;     // validation BLEU / exact match on at most this many pairs
  int decode_batch = 64;             // sentences decoded together in validation
  // A share of the training pairs (a fixed seeded choice, never validation pairs) loses its
  // final punctuation on both sides (data::strip_final_punctuation; pairs where either side has
  // none are left as they are): a sentence typed without its full stop is still a sentence.
  double unpunctuated_share = 0;
  // Longer inputs from short ones (concatenation augmentation, Nguyen et al. 2021, "Data
  // augmentation by concatenation for low-resource translation"): this share of the training
  // pairs (a fixed seeded choice, after unpunctuated_share) is each joined to another training pair
  // drawn at random, source to source and target to target, made once and added to every epoch
  // beside the pairs themselves. Sources are joined without a space after a CJK character (U+2E80
  // and up: Chinese is written without spaces), with one otherwise; targets with one. A joined
  // pair longer than max_length is left out.
  double concat_share = 0;
  // CC-CEDICT entries as extra training pairs (headword -> gloss, data/cedict.h); never in
  // validation. Names (proper nouns) and other entries have weights of their own. For weight w,
  // an epoch holds floor(w) copies of each pair and, of each group of pairs with the same weight
  // and batching lengths (example_steps, target, source), the next ceil(frac(w) * group size)
  // pairs of a fixed seeded cycle through the group: so every epoch has the same lengths (the
  // same number of batches) and each pair of a group comes round equally often.
  std::string dictionary;              // CC-CEDICT file ("" = none)
  double dictionary_weight = 1.0;      // w >= 0 of entries that are not names
  double dictionary_name_weight = 1.0;  // w >= 0 of names (the entry's pinyin is capitalised)
  // Names in sentences (data/name_swap.h): dictionary_contexts pairs per dictionary name, made
  // once (seeded), each from a training pair where another name stood (the slot name drawn
  // uniformly, then one of its pairs), never from validation pairs. Their weight is
  // dictionary_context_weight / dictionary_contexts: an epoch holds as many of them as with one
  // sentence per name, and over the epochs a name comes in up to dictionary_contexts sentences.
  double dictionary_context_weight = 0;  // 0 = none
  int64_t dictionary_contexts = 1;       // in [1, 64]
  int64_t dictionary_max_chars = 8;  // headwords of at most this many characters
  int64_t dictionary_max_words = 6;  // glosses of at most this many words
  bool dictionary_reverse = false;   // gloss -> headword (for an English-to-Chinese model)
  bool dictionary_infinitive_to = true;  // false: 来 -> "come", not "to come" (data/cedict.h)
  // Guided alignment (Seq2Seq::loss, AlignmentGuide): IBM Model 1 (data/ibm1.h) is trained on
  // every training, dictionary and joined pair as ids (guided_alignment_iterations EM iterations,
  // once, when the task is built; with fast_align's diagonal prior of tension
  // guided_alignment_diagonal when that is > 0); each target token but <eos> of a training batch then asks
  // attention for that token's alignment posterior, with weight guided_alignment (0 = off). The
  // logged training loss includes the term; validation's does not.
  double guided_alignment = 0;
  int64_t guided_alignment_iterations = 5;
  double guided_alignment_diagonal = 0;  // λ in [0, 100]; 0 = IBM Model 1

  template <class V>
  void visit(V& v) {
    v("train_src", train_src, "training source file (one sentence per line)");
    v("train_tgt", train_tgt, "training target file (line-aligned with train_src)");
    v("train_tsv", train_tsv, "training pairs as one tab-separated file (instead of train_src/train_tgt)");
    v("valid_src", valid_src, "validation source file");
    v("valid_tgt", valid_tgt, "validation target file");
    v("valid_tsv", valid_tsv, "validation pairs as one tab-separated file");
    v("src_field", src_field, "tsv: source column (0-based)");
    v("tgt_field", tgt_field, "tsv: target column (0-based)");
    v("generator", generator, "generated task instead of files: dates");
    v("generate_train", generate_train, "generator: training pairs");
    v("generate_valid", generate_valid, "generator: validation pairs");
    v("valid_size", valid_size, "pairs held out for validation when no validation files are given");
    v("max_length", max_length, "drop pairs with a side longer than this many tokens");
    v("max_pairs", max_pairs, "use at most this many training pairs (0 = all)");
    v("max_tokens", max_tokens, "batch budget in padded tokens");
    v("max_sentences", max_sentences, "max pairs per batch (0 = no cap)");
    v("bleu_sentences", bleu_sentences, "validation BLEU on at most this many pairs");
    v("decode_batch", decode_batch, "sentences decoded together in validation");
    v("dictionary", dictionary, "CC-CEDICT file whose entries are extra training pairs (Chinese headword -> "
      "English gloss); empty = none");
    v("unpunctuated_share", unpunctuated_share, "share of the training pairs (fixed seeded choice) whose final "
      "punctuation is removed on both sides, so that input without a full stop translates as a sentence");
    v("concat_share", concat_share, "share of the training pairs each joined to another random training pair "
      "(source to source, target to target), made once and added to every epoch: longer inputs");
    v("dictionary_weight", dictionary_weight, "dictionary entries that are not names: pairs per epoch, in copies of "
      "them (0.25: a quarter each epoch, in a cycle)");
    v("dictionary_name_weight", dictionary_name_weight, "dictionary names (capitalised pinyin: places, people): "
      "pairs per epoch, in copies of them");
    v("dictionary_context_weight", dictionary_context_weight, "names in sentences: one training pair per name with "
      "the name put where another name stood (e.g. Shanghai -> Beijing); pairs per epoch, in copies of them");
    v("dictionary_contexts", dictionary_contexts, "names in sentences: sentences made per name (1-64); the epochs "
      "take turns with them, dictionary_context_weight / dictionary_contexts of them in each epoch");
    v("dictionary_max_chars", dictionary_max_chars, "dictionary: headwords of at most this many characters");
    v("dictionary_max_words", dictionary_max_words, "dictionary: glosses of at most this many words");
    v("dictionary_reverse", dictionary_reverse, "dictionary pairs as English gloss -> Chinese headword");
    v("dictionary_infinitive_to", dictionary_infinitive_to, "dictionary: keep the 'to' of a verb's gloss (来 -> "
      "'to come'); false: 'come'");
    v("guided_alignment", guided_alignment, "weight of the guided-alignment loss: attention asked to follow IBM "
      "Model 1's alignment of the training pairs (0 = off; needs attention)");
    v("guided_alignment_iterations", guided_alignment_iterations, "guided alignment: IBM Model 1 EM iterations (1-100)");
    v("guided_alignment_diagonal", guided_alignment_diagonal, "guided alignment: tension of fast_align's diagonal "
      "prior (0-100; 0 = IBM Model 1, fast_align uses 4): alignments near the diagonal are preferred");
  }
};

struct Seq2SeqTrainConfig {
  std::string model = Seq2Seq::kName;
  Seq2SeqDataConfig data;
  Seq2SeqConfig seq2seq;        // src_vocab / tgt_vocab are set from the vocabularies
  train::TrainerConfig train;

  template <class V>
  void visit(V& v) {
    v("model", model, "model name (seq2seq)");
    v("data", data, "training and validation data");
    v("seq2seq", seq2seq, "the model");
    v("train", train, "training loop");
  }
};

class Seq2SeqTask final : public train::TrainTask {
 public:
  // Loads the data, builds (or, resuming, loads) the vocabularies in the run directory, writes
  // RUN/train.yaml, and builds the model. `log` receives one-line progress notes (may be null).
  explicit Seq2SeqTask(const Seq2SeqTrainConfig& cfg, std::FILE* log = stdout);

  nn::ParamStore& params() override { return model_->params(); }
  std::string model_name() const override { return Seq2Seq::kName; }
  YAML::Node model_config() const override { return model_->config(); }
  int64_t batches_per_epoch() const override { return static_cast<int64_t>(batches_); }
  void begin_epoch(int epoch, uint64_t seed) override;
  train::BatchResult train_batch(int64_t index) override;
  bool shardable() const override { return true; }
  // {"loss": dev NLL per token, "ppl", "bleu": greedy corpus BLEU, "acc": exact-match rate}.
  train::Metrics validate() override;
  std::string primary_metric() const override { return "bleu"; }
  bool higher_is_better() const override { return true; }
  std::vector<std::filesystem::path> checkpoint_files() const override;  // the tokenizer files

  const Seq2Seq& model() const { return *model_; }
  const TextCodec& src_codec() const { return *src_; }
  const TextCodec& tgt_codec() const { return *tgt_; }
  const TextPairs& valid_text() const { return valid_text_; }
  // The examples of the epoch begin_epoch() last set up: the training pairs, then the dictionary's.
  const std::vector<data::Example>& epoch_examples() const { return epoch_examples_; }
  int64_t main_examples() const { return static_cast<int64_t>(train_.size()); }
  const Seq2SeqTrainConfig& config() const { return cfg_; }

 private:
  Seq2SeqTrainConfig cfg_;
  std::optional<TextCodec> src_, tgt_;
  std::unique_ptr<Seq2Seq> model_;
  std::vector<data::Example> train_, valid_;       // encoded, length-filtered
  std::vector<data::Example> dict_;                // encoded dictionary and joined pairs (data.concat_share)
  struct DictGroup {
    double weight = 0;
    std::vector<int64_t> members;  // dict_ indices of equal weight and batching lengths, seeded order
  };
  std::vector<DictGroup> dict_groups_;
  data::Ibm1 aligner_;                             // data.guided_alignment > 0: over train_ and dict_
  std::vector<data::Example> epoch_examples_;     // this epoch's examples: train_, then the dictionary's
  TextPairs valid_text_;                           // raw validation text (BLEU references)
  std::vector<std::vector<int64_t>> plan_;         // this epoch's batches (example indices)
  size_t batches_ = 0;
  int epoch_ = 0;
  uint64_t seed_ = 1;
  core::Graph graph_;                              // training graph, reset per batch
};

}  // namespace engram::models
