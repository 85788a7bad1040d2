// Scoring a seq2seq model on parallel text (`engram seq2seq eval`, `engram eval -m DIR` for the
// family): the source lines translated in batches (Translator::translate), then corpus BLEU and
// chrF2 against the references as sacreBLEU computes them (eval/bleu.h, eval/chrf.h).
#pragma once

#include <string>
#include <vector>

#include "engram/models/seq2seq/translate.h"

namespace engram::models {

struct TranslationEval {
  std::vector<std::string> hyps;  // the best translation of each source line, in order
  std::string table;              // Markdown: models, sentences, BLEU, chrF2, sentences/s
  std::string signatures;         // sacreBLEU's text lines, "BLEU|nrefs:1|... = ..." and chrF2's
};

// Translates `src` with `tr` (its ensemble and weights) and `o`, and scores the translations
// against `ref` (one reference per source line). `models` names what was decoded (the table's
// first column). Errors on an empty source or files of different lengths.
TranslationEval evaluate_translation(const Translator& tr, const TranslateOptions& o, const std::vector<std::string>& src,
                                     const std::vector<std::string>& ref, const std::string& models);

}  // namespace engram::models
