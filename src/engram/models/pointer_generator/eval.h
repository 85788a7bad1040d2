// Scoring pointer-generator summaries against references: ROUGE-1/2/L/Lsum precision, recall and
// F1 (eval/rouge.h, rouge_score-compatible, mean over the pairs, × 100; with or without
// rouge_score's Porter stemmer), the share of output tokens copied (1 − p_gen > 0.5), the
// OOV-copy rate: of the reference tokens that are outside the vocabulary but in the source (the
// ones only copying can produce), the share the output reproduces (counts clipped per token, as
// ROUGE-1, as eval::oov_copy_rate counts), and the repeated-trigram rate of the outputs and of the
// references (eval::repeated_trigram_rate, what coverage is meant to cut; See et al. count
// duplicated n-grams). Also the share of output tokens that repeat an earlier token of the same
// summary.
// ROUGE-Lsum compares sentences: the reference's own (a TSV target's `\n`-separated sentences, a
// BBC summary's), and the output's as data::split_sentences finds them in its text.
// Tokens for the copy and repetition figures are the codec's: words for a word model; for a
// SentencePiece model pieces, which are rarely out of the vocabulary, so its OOV-copy rate
// covers few tokens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engram/data/summary_pairs.h"
#include "engram/eval/rouge.h"
#include "engram/eval/summarization.h"
#include "engram/models/pointer_generator/summarize.h"

namespace engram::models {

struct PgScoreOptions {
  bool use_stemmer = false;  // rouge_score's use_stemmer=True
};

struct PgScores {
  int64_t pairs = 0;
  bool stemmed = false;                 // ROUGE with the Porter stemmer
  double rouge1 = 0, rouge2 = 0, rouge_l = 0, rouge_lsum = 0;  // F1 × 100, mean over pairs
  eval::RougeResult rouge;              // P, R and F1 (fractions) of the four, mean over pairs
  int64_t output_tokens = 0, copied_tokens = 0;
  double copy_share = 0;        // copied_tokens / output_tokens (0 when there are none)
  int64_t oov_reference = 0;    // reference tokens outside the vocabulary that the source holds
  int64_t oov_reproduced = 0;   // of those, how many the output reproduces
  double oov_copy_rate = 0;     // oov_reproduced / oov_reference (0 when there are none)
  int64_t repeated_tokens = 0;  // output tokens equal to an earlier token of their summary
  double repeat_share = 0;      // repeated_tokens / output_tokens (0 when there are none)
  eval::RepetitionStats output_trigrams;     // repeated trigrams of the outputs
  eval::RepetitionStats reference_trigrams;  // and of the references
  // Per pair, the reference's OOV-in-source tokens the output reproduces (each once, first
  // seen first): the examples of what copying bought.
  std::vector<std::vector<std::string>> reproduced_oovs;
  // ... and those it leaves out (each once): what copying missed.
  std::vector<std::vector<std::string>> missed_oovs;
};

// ref_sentences[i] holds the reference sentences of summaries[i] (same length).
PgScores score_summaries(const TextCodec& codec, const std::vector<Summary>& summaries,
                         const std::vector<std::vector<std::string>>& ref_sentences, const PgScoreOptions& options);
// Each reference one sentence, without the stemmer.
PgScores score_summaries(const TextCodec& codec, const std::vector<Summary>& summaries,
                         const std::vector<std::string>& refs);

// Summarises the sources of `pairs` and scores them against their target sentences.
PgScores evaluate_pointer_generator(const ModelSet<PointerGenerator>& models, const TextCodec& codec,
                                    const std::vector<data::SummaryPair>& pairs, const SummarizeOptions& options,
                                    std::vector<Summary>* summaries = nullptr, const PgScoreOptions& score = {});

// The F1 figures and copy diagnostics as a small Markdown table.
std::string pg_scores_table(const PgScores& s);
// ROUGE-1/2/L/Lsum P, R, F1 (× 100) as a Markdown table, the stemmer named.
std::string pg_rouge_table(const PgScores& s);

// Where `engram pointer-generator eval` takes its pairs: a TSV file, or a BBC split ("valid" |
// "test") of the model's task (its RUN/train.yaml's data.bbc) unless `task` says.
struct PgEvalSource {
  std::string file, bbc, task, bbc_dir;
};
// The pairs, and in *name what they are ("BBC test split, headline task" or the file).
std::vector<data::SummaryPair> pg_eval_pairs(const PgEvalSource& source, const std::filesystem::path& model_dir,
                                             std::string* name);

// `engram pointer-generator eval`'s report: the pairs of `source` summarised by `m` (with its
// ensemble members as one), then what was scored, the F1 and copy table, ROUGE with and then
// without rouge_score's stemmer (or the other way round), the decoding rate, and up to `examples`
// / `missed` examples (pg_copy_examples, pg_missed_examples).
struct PgEvalReport {
  PgEvalSource source;
  bool use_stemmer = true;
  int examples = 5, missed = 0;
};
std::string pg_eval_report(const LoadedPointerGenerator& m, const SummarizeOptions& options, const PgEvalReport& r);

// Up to n examples of outputs that reproduce source-only (out-of-vocabulary) reference words:
// reference, output and the words, as text ("" when there are none).
std::string pg_copy_examples(const std::vector<data::SummaryPair>& pairs, const std::vector<Summary>& summaries,
                             const PgScores& scores, int n);
// Up to n examples of outputs that miss source-only reference words, with the words missed.
std::string pg_missed_examples(const std::vector<data::SummaryPair>& pairs, const std::vector<Summary>& summaries,
                               const PgScores& scores, int n);

}  // namespace engram::models
