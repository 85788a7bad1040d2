// ROUGE-1, ROUGE-2, ROUGE-L (sentence-level LCS) and ROUGE-Lsum (summary-level union LCS),
// precision / recall / F1, computed as Google's rouge_score (google-research rouge/, the
// `rouge-score` package) computes them:
//   - tokenize: Python's str.lower(), every character outside [a-z0-9] becomes a space (so
//     accented, Cyrillic or Chinese letters are dropped, as in rouge_score), split on spaces;
//     with use_stemmer, tokens longer than 3 characters are Porter-stemmed (porter.h: NLTK's
//     PorterStemmer() in its default mode, the one rouge_score builds);
//   - ROUGE-N: clipped n-gram overlap / hypothesis n-grams (P), / reference n-grams (R);
//   - ROUGE-L: LCS length / hypothesis tokens (P), / reference tokens (R); 0 if either is empty;
//   - ROUGE-Lsum: the texts are split into sentences at '\n' (empty pieces dropped); for each
//     reference sentence the union of its LCS with every hypothesis sentence is taken (one LCS
//     per pair, read back as rouge_score's _backtrack_norec does), and each union token counts
//     as a hit while it is still unused in both texts' token counts (ROUGE-1.5.5's rule against
//     double counting); P = hits / hypothesis tokens, R = hits / reference tokens;
//   - F1 = 2PR / (P + R), 0 when P + R == 0.
// Sentences for ROUGE-Lsum are joined with '\n' (lsum_text); data::split_sentences finds them
// in running text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace engram::eval {

struct RougeOptions {
  bool use_stemmer = false;  // rouge_score's use_stemmer=True
};

std::vector<std::string> rouge_tokenize(std::string_view text, bool use_stemmer = false);

// The sentences joined with '\n', the form ROUGE-Lsum reads (rouge_score's convention).
std::string lsum_text(const std::vector<std::string>& sentences);

struct RougeScore {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
};

struct RougeResult {
  RougeScore rouge1, rouge2, rouge_l, rouge_lsum;
};

// One hypothesis against one reference (rouge_score's scorer.score(target=ref, prediction=hyp)).
// With several references, take the best F1 per type yourself (rouge_score's convention).
RougeResult sentence_rouge(std::string_view hyp, std::string_view ref, const RougeOptions& options = {});

// Mean over segments of the per-segment precision, recall and F1, each averaged on its own (the
// value rouge_score's BootstrapAggregator estimates by resampling: its "mid" is this mean up to
// resampling noise). hyps and refs must have the same length; an empty list gives zeros.
RougeResult corpus_rouge(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                         const RougeOptions& options = {});

}  // namespace engram::eval
