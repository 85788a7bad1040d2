// `engram pointer-generator show`: one summary drawn as SVG (viz/heatmap.h), two maps side by
// side sharing the 0..1 scale: the attention of each output token over the article (rows: output
// tokens, <eos> last when finished; columns: source tokens) and, to its right, p_gen per output
// token. Each row is labelled with its token and whether it was generated (p_gen >= 0.5) or
// copied (1 − p_gen > 0.5); source columns outside the vocabulary (copy-only words) are outlined.
// Dims: R output rows, S source tokens.
#pragma once

#include <string>

#include "engram/models/pointer_generator/summarize.h"

namespace engram::models {

// The picture of one summary; `title` goes above the attention map.
std::string summary_svg(const TextCodec& codec, const Summary& summary, const std::string& title);

struct SummaryShow {
  Summary summary;
  std::string svg;
  std::string text;  // the summary, then one line per output token: "generated|copied p_gen token"
};
// Summarises `article` and draws it.
SummaryShow show_summary(const ModelSet<PointerGenerator>& models, const TextCodec& codec, const std::string& article,
                         const SummarizeOptions& options);

}  // namespace engram::models
