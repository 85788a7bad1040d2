// Summarising text with a PointerGenerator: text -> extended ids (text.h) -> batched greedy or
// beam search over the extended vocabulary (decode/search.h via PgStepModel) -> the output
// tokens, temporary ids written as the source's words. Each summary also gets, for every output
// token, its attention over the source and p_gen as the search saw them at the step that chose
// it (stepping equals teacher forcing: the same values as a teacher-forced pass over the output);
// a token is "copied" when 1 − p_gen > 0.5. An ensemble (a ModelSet of several models with one
// vocabulary) decodes as one (decode::EnsembleStepModel: the log of their mean probability over
// the extended vocabulary); attention and p_gen are then the members' means. Also the loaded
// model directory (the family's LoadedModel).
// Dims: S source tokens, R output tokens (+1 for <eos> when finished).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/decode/options.h"
#include "engram/decode/search.h"
#include "engram/models/loaded_family.h"
#include "engram/models/pointer_generator/model.h"
#include "engram/models/pointer_generator/text.h"
#include "engram/models/registry.h"

namespace engram::models {

// Limits of one input (docs/limits.md): its text.
constexpr size_t kPgMaxLineBytes = 1 << 20;

struct SummarizeOptions {
  decode::SearchOptions search{};   // beam 1 = greedy; min_length, block_ngram_repeat, coverage_penalty
  int max_source_tokens = 0;      // longer sources are truncated; 0 = the model's max_source_tokens
  int batch_size = 32;            // sources decoded together
  bool coverage_active = true;    // PgDecodeOptions::coverage_active
  bool block_unk = false;         // PgDecodeOptions::block_unk: never output <unk>
  float oov_bonus = 0.0f;         // PgDecodeOptions::oov_bonus: log-probability added to copying an OOV
  bool explain = true;            // false: Summary::attention and p_gen are not recorded (stay empty)
  void validate() const;
};

// The decode options the family honours (decode/options.h) with its defaults (max_length bounds a
// summary: max_length_ratio 100), and the SummarizeOptions they give (the rest at their defaults).
const decode::OptionSet& summarize_option_set();
SummarizeOptions summarize_options(const decode::DecodeOptions& o);

struct Summary {
  ExtendedSource source;
  std::vector<int32_t> ids;           // [R'] the output in extended ids, without <eos>
  bool finished = false;              // ended with <eos>
  std::vector<std::string> tokens;    // [R'] display tokens (copied OOVs verbatim)
  std::string text;                   // tokens joined (empty source: "")
  std::vector<float> attention;       // [R, S] α per output token (<eos> last when finished)
  std::vector<float> p_gen;           // [R] p_gen per output token (1 without copy)
  bool copied(size_t r) const { return p_gen[r] < 0.5f; }  // 1 − p_gen > 0.5
};

// Summaries of `lines`, in input order (empty lines give an empty summary). `prefixes`: none, or
// one per line (text, "" = none): its tokens (in the article's extended ids: a word outside the
// vocabulary is copied from the article, else <unk>) are forced first, then decoding is free
// (decode/search.h); the summary holds them. options.search.on_token is called with the row of
// the sentence in its chunk (streaming: batch_size 1). Without options.explain the summaries have
// no attention and p_gen (the text alone).
std::vector<Summary> summarize_lines(const ModelSet<PointerGenerator>& models, const TextCodec& codec,
                                     const std::vector<std::string>& lines, const SummarizeOptions& options,
                                     std::span<const std::string> prefixes = {});

// `engram summarize`: each line an article ("article<TAB>summary prefix" with prefix_column),
// each summary a line of stdout. With `tokens` (greedy or sampling) each article is decoded alone
// and its summary printed as the tokens come (the text of all but the newest token, which may
// still join the next). Failed writes are errors.
struct SummarizeStream {
  bool prefix_column = false;
  bool tokens = false;
};
void summarize_stream(const ModelSet<PointerGenerator>& models, const TextCodec& codec, std::vector<std::string> lines,
                      const SummarizeOptions& options, const SummarizeStream& stream);

// A loaded pointer-generator directory: the model and its vocabulary.
struct LoadedPointerGenerator : LoadedFamily<LoadedPointerGenerator, PointerGenerator> {
  std::unique_ptr<TextCodec> codec;

  std::string run_line(const std::string& line) override;  // the summary, with the model's decode defaults
  std::string input_help() const override { return "an article (one line of text)"; }
  // POST /v1/summarize (serve.cc): {"article", "beam", "alpha", "min_length", "max_length",
  // "block_ngram_repeat", "coverage_penalty"} -> {"summary", "finished", "source_tokens",
  // "tokens": [{"token", "p_gen", "copied", "attention"}]}; one article per request.
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // Members with the same vocabulary, token for token, and the same `copy` setting.
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};

// The family's loader: the vocabulary file in the checkpoint or in the run directory above it.
std::unique_ptr<LoadedPointerGenerator> load_pointer_generator(const std::filesystem::path& dir);

}  // namespace engram::models
