// score_summaries / evaluate_pointer_generator: ROUGE, copy share, OOV-copy rate, repetition.
#include "engram/models/pointer_generator/eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_set>

#include "engram/core/error.h"
#include "engram/data/sentences.h"
#include "engram/eval/report.h"
#include "engram/io/config.h"
#include "engram/models/pointer_generator/task.h"

namespace engram::models {

PgScores score_summaries(const TextCodec& codec, const std::vector<Summary>& summaries,
                         const std::vector<std::vector<std::string>>& ref_sentences, const PgScoreOptions& options) {
  ENGRAM_CHECK(summaries.size() == ref_sentences.size(), "pointer_generator eval: {} summaries for {} references",
               summaries.size(), ref_sentences.size());
  PgScores sc;
  sc.pairs = static_cast<int64_t>(summaries.size());
  sc.stemmed = options.use_stemmer;
  std::vector<std::string> hyps, refs;
  std::vector<std::vector<std::string>> outputs, references;
  for (size_t i = 0; i < summaries.size(); ++i) {
    const Summary& s = summaries[i];
    ENGRAM_CHECK(s.p_gen.size() >= s.ids.size(), "pointer_generator eval: summary {} has {} p_gen values for {} tokens",
                 i, s.p_gen.size(), s.ids.size());
    hyps.push_back(eval::lsum_text(data::split_sentences(s.text)));
    refs.push_back(eval::lsum_text(ref_sentences[i]));
    for (size_t r = 0; r < s.ids.size(); ++r) {  // output tokens (not <eos>)
      ++sc.output_tokens;
      sc.copied_tokens += s.copied(r) ? 1 : 0;
    }
    std::map<std::string, int64_t> in_output;
    for (const std::string& t : s.tokens) sc.repeated_tokens += in_output[t]++ > 0 ? 1 : 0;
    std::vector<std::string> ref_tokens;
    for (const std::string& sentence : ref_sentences[i])
      for (std::string& t : codec.tokens(sentence)) ref_tokens.push_back(std::move(t));
    // Reference OOV tokens the source holds, and which of them the output reproduces.
    std::vector<std::string> reproduced, missed;
    std::map<std::string, int64_t> wanted;
    for (const std::string& t : ref_tokens)
      if (std::find(s.source.oovs.begin(), s.source.oovs.end(), t) != s.source.oovs.end()) {
        if (wanted[t]++ == 0) (in_output.count(t) ? reproduced : missed).push_back(t);
      }
    for (const auto& [t, n] : wanted) {
      sc.oov_reference += n;
      const auto it = in_output.find(t);
      sc.oov_reproduced += it == in_output.end() ? 0 : std::min(n, it->second);
    }
    sc.reproduced_oovs.push_back(std::move(reproduced));
    sc.missed_oovs.push_back(std::move(missed));
    outputs.push_back(s.tokens);
    references.push_back(std::move(ref_tokens));
  }
  if (!summaries.empty()) {
    sc.rouge = eval::corpus_rouge(hyps, refs, {.use_stemmer = options.use_stemmer});
    sc.rouge1 = 100 * sc.rouge.rouge1.f1;
    sc.rouge2 = 100 * sc.rouge.rouge2.f1;
    sc.rouge_l = 100 * sc.rouge.rouge_l.f1;
    sc.rouge_lsum = 100 * sc.rouge.rouge_lsum.f1;
  }
  sc.output_trigrams = eval::repeated_trigram_rate(outputs);
  sc.reference_trigrams = eval::repeated_trigram_rate(references);
  sc.copy_share = sc.output_tokens ? static_cast<double>(sc.copied_tokens) / sc.output_tokens : 0.0;
  sc.oov_copy_rate = sc.oov_reference ? static_cast<double>(sc.oov_reproduced) / sc.oov_reference : 0.0;
  sc.repeat_share = sc.output_tokens ? static_cast<double>(sc.repeated_tokens) / sc.output_tokens : 0.0;
  return sc;
}

PgScores score_summaries(const TextCodec& codec, const std::vector<Summary>& summaries,
                         const std::vector<std::string>& refs) {
  std::vector<std::vector<std::string>> sentences;
  for (const std::string& r : refs) sentences.push_back({r});
  return score_summaries(codec, summaries, sentences, {});
}

PgScores evaluate_pointer_generator(const ModelSet<PointerGenerator>& models, const TextCodec& codec,
                                    const std::vector<data::SummaryPair>& pairs, const SummarizeOptions& options,
                                    std::vector<Summary>* summaries, const PgScoreOptions& score) {
  std::vector<std::string> srcs;
  std::vector<std::vector<std::string>> refs;
  for (const data::SummaryPair& p : pairs) {
    srcs.push_back(p.source);
    refs.push_back(p.target_sentences);
  }
  std::vector<Summary> sums = summarize_lines(models, codec, srcs, options);
  PgScores sc = score_summaries(codec, sums, refs, score);
  if (summaries) *summaries = std::move(sums);
  return sc;
}

std::string pg_scores_table(const PgScores& s) {
  std::string t = eval::markdown_head({"pairs", "ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-Lsum", "copied tokens",
                                       "OOV-copy rate", "repeated tokens", "repeated trigrams",
                                       "reference repeated trigrams"},
                                      "rrrrrrrrrr", true);
  t += fmt::format(
      "| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.1f}% ({}/{}) | {:.1f}% ({}/{}) | {:.1f}% ({}/{}) | {:.1f}% ({}/{}) "
      "| {:.1f}% ({}/{}) |\n",
      s.pairs, s.rouge1, s.rouge2, s.rouge_l, s.rouge_lsum, 100 * s.copy_share, s.copied_tokens, s.output_tokens,
      100 * s.oov_copy_rate, s.oov_reproduced, s.oov_reference, 100 * s.repeat_share, s.repeated_tokens,
      s.output_tokens, 100 * s.output_trigrams.rate, s.output_trigrams.repeated, s.output_trigrams.total,
      100 * s.reference_trigrams.rate, s.reference_trigrams.repeated, s.reference_trigrams.total);
  return t;
}

std::string pg_rouge_table(const PgScores& s) {
  std::string t = eval::markdown_head({s.stemmed ? "ROUGE (stem: yes)" : "ROUGE (stem: no)", "F1", "P", "R"}, "lrrr", true);
  const std::pair<const char*, const eval::RougeScore*> rows[] = {
      {"ROUGE-1", &s.rouge.rouge1}, {"ROUGE-2", &s.rouge.rouge2}, {"ROUGE-L", &s.rouge.rouge_l},
      {"ROUGE-Lsum", &s.rouge.rouge_lsum}};
  for (const auto& [name, r] : rows)
    t += fmt::format("| {} | {:.2f} | {:.2f} | {:.2f} |\n", name, 100 * r->f1, 100 * r->precision, 100 * r->recall);
  return t;
}

namespace {

// The run config a model directory was trained with: RUN/train.yaml beside it or one level up
// (a checkpoint RUN/best); nullopt when there is none.
std::optional<PgTrainConfig> run_config_of(const std::filesystem::path& model_dir) {
  for (const std::filesystem::path& f : {model_dir / "train.yaml", model_dir.parent_path() / "train.yaml"})
    if (std::filesystem::exists(f)) {
      PgTrainConfig cfg;
      io::from_yaml(io::load_yaml_file(f), cfg, f.string());
      return cfg;
    }
  return std::nullopt;
}

// The pairs to score: the file, or the BBC split with the model's task unless --task says.
}  // namespace

std::vector<data::SummaryPair> pg_eval_pairs(const PgEvalSource& a, const std::filesystem::path& model_dir,
                                             std::string* name) {
  ENGRAM_CHECK(a.file.empty() != a.bbc.empty(), "pointer-generator eval: give exactly one of --file and --bbc");
  if (!a.file.empty()) {
    *name = a.file;
    return data::read_summary_tsv(a.file);
  }
  const std::optional<PgTrainConfig> run = run_config_of(model_dir);
  const std::string task = !a.task.empty() ? a.task : run ? run->data.bbc : "";
  ENGRAM_CHECK(!task.empty(), "pointer-generator eval: {} was not trained on BBC (no data.bbc in its train.yaml): give --task",
               model_dir.string());
  const std::string dir = !a.bbc_dir.empty() ? a.bbc_dir : run ? run->data.bbc_dir : PgDataConfig{}.bbc_dir;
  *name = fmt::format("BBC {} split, {} task", a.bbc, task);
  return bbc_pairs(load_bbc_split(dir, a.bbc), task);
}

namespace {

std::string oov_examples(const std::vector<data::SummaryPair>& pairs, const std::vector<Summary>& summaries,
                         const std::vector<std::vector<std::string>>& oovs, int n, const char* title, const char* label) {
  std::string out;
  int shown = 0;
  for (size_t i = 0; i < summaries.size() && i < oovs.size() && shown < n; ++i) {
    if (oovs[i].empty()) continue;
    if (shown++ == 0) out += fmt::format("\nexamples ({}):\n", title);
    std::string words;
    for (const std::string& w : oovs[i]) words += (words.empty() ? "" : ", ") + w;
    out += fmt::format("- reference: {}\n  output:    {}\n  {:<10} {}\n", pairs[i].target(), summaries[i].text,
                       fmt::format("{}:", label), words);
  }
  return out;
}

}  // namespace

std::string pg_copy_examples(const std::vector<data::SummaryPair>& pairs, const std::vector<Summary>& summaries,
                             const PgScores& scores, int n) {
  return oov_examples(pairs, summaries, scores.reproduced_oovs, n,
                      "out-of-vocabulary source words the output reproduces", "copied");
}

std::string pg_missed_examples(const std::vector<data::SummaryPair>& pairs, const std::vector<Summary>& summaries,
                               const PgScores& scores, int n) {
  return oov_examples(pairs, summaries, scores.missed_oovs, n,
                      "out-of-vocabulary source words of the reference the output leaves out", "missed");
}

std::string pg_eval_report(const LoadedPointerGenerator& m, const SummarizeOptions& options, const PgEvalReport& r) {
  std::string name;
  const std::vector<data::SummaryPair> pairs = pg_eval_pairs(r.source, m.dir(), &name);
  std::vector<Summary> sums;
  const auto t0 = std::chrono::steady_clock::now();
  const PgScores s =
      evaluate_pointer_generator(m.models(), *m.codec, pairs, options, &sums, {.use_stemmer = r.use_stemmer});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int more_models = m.setup.members();
  const std::string more = more_models == 0 ? "" : fmt::format("; with {} more models as one ensemble", more_models);
  const char* weights = m.setup.int8() ? ", int8 weights" : m.setup.bf16() ? ", bf16 weights" : "";
  std::string out = fmt::format("pointer-generator ({}, copy {}, coverage {}{}) on {}, {}{}\n\n", m.dir().string(),
                                m.model->cfg().copy ? "on" : "off", m.model->cfg().coverage ? "on" : "off", more, name,
                                options.search.beam == 1 ? "greedy" : fmt::format("beam {}", options.search.beam),
                                weights);
  out += pg_scores_table(s) + "\n" + pg_rouge_table(s);
  std::vector<std::vector<std::string>> refs;
  for (const data::SummaryPair& p : pairs) refs.push_back(p.target_sentences);
  out += "\n" + pg_rouge_table(score_summaries(*m.codec, sums, refs, {.use_stemmer = !r.use_stemmer}));
  out += fmt::format("\ndecoding: {} articles in {:.1f} s ({:.2f} articles/s, batch {})\n", pairs.size(), seconds,
                     seconds > 0 ? static_cast<double>(pairs.size()) / seconds : 0.0, options.batch_size);
  return out + pg_copy_examples(pairs, sums, s, r.examples) + pg_missed_examples(pairs, sums, s, r.missed);
}

}  // namespace engram::models
