// Scoring pointer-generator summaries against references: ROUGE-1/2/L F1 (eval/rouge.h, mean
// over the pairs, × 100), the share of output tokens copied (1 − p_gen > 0.5), and the OOV-copy
// rate: of the reference tokens that are outside the vocabulary but in the source (the ones only
// copying can produce), the share the output reproduces (counts clipped per token, as ROUGE-1).
// Tokens here are the codec's: words for a word model; for a SentencePiece model pieces, which
// are rarely out of the vocabulary, so its OOV-copy rate covers few tokens. Also the share of
// output tokens that repeat an earlier token of the same summary (what coverage is meant to cut;
// See et al. count duplicated n-grams).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/data/summary_pairs.h"
#include "engram/models/pointer_generator/summarize.h"

namespace engram::models {

struct PgScores {
  int64_t pairs = 0;
  double rouge1 = 0, rouge2 = 0, rouge_l = 0;  // F1 × 100, mean over pairs
  int64_t output_tokens = 0, copied_tokens = 0;
  double copy_share = 0;        // copied_tokens / output_tokens (0 when there are none)
  int64_t oov_reference = 0;    // reference tokens outside the vocabulary that the source holds
  int64_t oov_reproduced = 0;   // of those, how many the output reproduces
  double oov_copy_rate = 0;     // oov_reproduced / oov_reference (0 when there are none)
  int64_t repeated_tokens = 0;  // output tokens equal to an earlier token of their summary
  double repeat_share = 0;      // repeated_tokens / output_tokens (0 when there are none)
};

// refs[i] is the reference of summaries[i] (same length).
PgScores score_summaries(const PgCodec& codec, const std::vector<Summary>& summaries,
                         const std::vector<std::string>& refs);

// Summarises the sources of `pairs` and scores them against their targets.
PgScores evaluate_pointer_generator(const PointerGenerator& model, const PgCodec& codec,
                                    const std::vector<data::SummaryPair>& pairs, const SummarizeOptions& options,
                                    std::vector<Summary>* summaries = nullptr);

// The scores as a small Markdown table.
std::string pg_scores_table(const PgScores& s);

}  // namespace engram::models
