// summary_svg / show_summary: the attention × p_gen picture of one summary.
#include "engram/models/pointer_generator/show.h"

#include <fmt/format.h>

#include "engram/core/error.h"
#include "engram/data/vocab.h"
#include "engram/viz/heatmap.h"

namespace engram::models {

std::string summary_svg(const TextCodec& codec, const Summary& s, const std::string& title) {
  const int rows = static_cast<int>(s.p_gen.size()), cols = static_cast<int>(s.source.tokens.size());
  ENGRAM_CHECK(rows >= 1 && cols >= 1, "pointer_generator show: nothing to draw ({} output rows, {} source tokens)",
               rows, cols);
  viz::Heatmap attn;
  attn.title = title;
  attn.rows = rows;
  attn.cols = cols;
  attn.values = s.attention;
  attn.col_labels = s.source.tokens;
  for (int i = 0; i < cols; ++i)
    if (s.source.ids[i] >= codec.size()) attn.marked_cols.push_back(i);
  for (int r = 0; r < rows; ++r) {
    const std::string tok = r < static_cast<int>(s.tokens.size()) ? s.tokens[r] : std::string(data::kEosToken);
    attn.row_labels.push_back(fmt::format("{} [{}]", tok, s.copied(r) ? "copied" : "generated"));
  }
  attn.show_values = cols <= 16 && rows <= 16;
  viz::Heatmap gate;
  gate.title = "p_gen";
  gate.rows = rows;
  gate.cols = 1;
  gate.values = s.p_gen;
  gate.col_labels = {"p_gen"};
  gate.cell_px = 0;
  return viz::heatmap_svg({attn, gate});
}

SummaryShow show_summary(const ModelSet<PointerGenerator>& models, const TextCodec& codec, const std::string& article,
                         const SummarizeOptions& options) {
  SummaryShow out;
  out.summary = summarize_lines(models, codec, {article}, options).front();
  const Summary& s = out.summary;
  ENGRAM_CHECK(!s.source.tokens.empty(), "pointer_generator show: the article is empty");
  const std::string what = options.search.beam == 1 ? "greedy" : fmt::format("beam {}", options.search.beam);
  out.svg = summary_svg(codec, s, fmt::format("attention of each output token over the article ({})", what));
  out.text = s.text + "\n";
  for (size_t r = 0; r < s.p_gen.size(); ++r)
    out.text += fmt::format("{:<9} p_gen {:.3f}  {}\n", s.copied(r) ? "copied" : "generated", s.p_gen[r],
                            r < s.tokens.size() ? s.tokens[r] : std::string(data::kEosToken));
  return out;
}

}  // namespace engram::models
