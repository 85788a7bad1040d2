// score_summaries / evaluate_pointer_generator: ROUGE, copy share, OOV-copy rate.
#include "engram/models/pointer_generator/eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "engram/core/error.h"
#include "engram/eval/rouge.h"

namespace engram::models {

PgScores score_summaries(const PgCodec& codec, const std::vector<Summary>& summaries,
                         const std::vector<std::string>& refs) {
  ENGRAM_CHECK(summaries.size() == refs.size(), "pointer_generator eval: {} summaries for {} references",
               summaries.size(), refs.size());
  PgScores sc;
  sc.pairs = static_cast<int64_t>(summaries.size());
  std::vector<std::string> hyps;
  for (size_t i = 0; i < summaries.size(); ++i) {
    const Summary& s = summaries[i];
    hyps.push_back(s.text);
    for (size_t r = 0; r < s.ids.size(); ++r) {  // output tokens (not <eos>)
      ++sc.output_tokens;
      sc.copied_tokens += s.copied(r) ? 1 : 0;
    }
    std::map<std::string, int64_t> in_output;
    for (const std::string& t : s.tokens) sc.repeated_tokens += in_output[t]++ > 0 ? 1 : 0;
    std::map<std::string, int64_t> wanted;  // reference OOV tokens the source holds
    for (const std::string& t : codec.tokens(refs[i]))
      if (std::find(s.source.oovs.begin(), s.source.oovs.end(), t) != s.source.oovs.end()) ++wanted[t];
    for (const auto& [t, n] : wanted) {
      sc.oov_reference += n;
      const auto it = in_output.find(t);
      sc.oov_reproduced += it == in_output.end() ? 0 : std::min(n, it->second);
    }
  }
  if (!summaries.empty()) {
    const eval::RougeResult r = eval::corpus_rouge(hyps, refs);
    sc.rouge1 = 100 * r.rouge1.f1;
    sc.rouge2 = 100 * r.rouge2.f1;
    sc.rouge_l = 100 * r.rouge_l.f1;
  }
  sc.copy_share = sc.output_tokens ? static_cast<double>(sc.copied_tokens) / sc.output_tokens : 0.0;
  sc.oov_copy_rate = sc.oov_reference ? static_cast<double>(sc.oov_reproduced) / sc.oov_reference : 0.0;
  sc.repeat_share = sc.output_tokens ? static_cast<double>(sc.repeated_tokens) / sc.output_tokens : 0.0;
  return sc;
}

PgScores evaluate_pointer_generator(const PointerGenerator& model, const PgCodec& codec,
                                    const std::vector<data::SummaryPair>& pairs, const SummarizeOptions& options,
                                    std::vector<Summary>* summaries) {
  std::vector<std::string> srcs, refs;
  for (const data::SummaryPair& p : pairs) {
    srcs.push_back(p.source);
    refs.push_back(p.target());
  }
  std::vector<Summary> sums = summarize_lines(model, codec, srcs, options);
  PgScores sc = score_summaries(codec, sums, refs);
  if (summaries) *summaries = std::move(sums);
  return sc;
}

std::string pg_scores_table(const PgScores& s) {
  std::string t = "| pairs | ROUGE-1 | ROUGE-2 | ROUGE-L | copied tokens | OOV-copy rate | repeated tokens |\n";
  t += "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  t += fmt::format("| {} | {:.2f} | {:.2f} | {:.2f} | {:.1f}% ({}/{}) | {:.1f}% ({}/{}) | {:.1f}% ({}/{}) |\n", s.pairs,
                   s.rouge1, s.rouge2, s.rouge_l, 100 * s.copy_share, s.copied_tokens, s.output_tokens,
                   100 * s.oov_copy_rate, s.oov_reproduced, s.oov_reference, 100 * s.repeat_share, s.repeated_tokens,
                   s.output_tokens);
  return t;
}

}  // namespace engram::models
