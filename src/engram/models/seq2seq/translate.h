// Translating text with a Seq2Seq model: text -> ids (TextCodec) -> batched search
// (decode/search.h) -> text, with n-best lists, scores and attention alignments; and the loaded
// model directory (Translator) that models::load_model returns for the seq2seq family.
// Dims: S source tokens of a sentence, R output tokens (+1 for <eos> when finished).
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/core/weights_packed.h"
#include "engram/decode/options.h"
#include "engram/decode/search.h"
#include "engram/models/loaded_family.h"
#include "engram/models/seq2seq/model.h"
#include "engram/models/seq2seq/shortlist.h"
#include "engram/models/text_codec.h"
#include "engram/models/registry.h"

namespace engram::models {

// Limits of one input (docs/limits.md): its text and its tokens.
constexpr size_t kMaxLineBytes = 64 * 1024;
constexpr size_t kMaxSourceTokens = 1024;

// The decode options the family honours (decode/options.h) with its defaults: the fields of its
// route and the flags of `engram translate`.
const decode::OptionSet& translate_option_set();

struct TranslateOptions {
  decode::SearchOptions search;  // beam 1 / n_best 1 = greedy
  int batch_size = 64;           // sentences decoded together
  // fp32 weight matrices of the first model packed for the few-row kernel (core/weights_packed.h):
  // products of at most 8 rows (one sentence, or the beams of one), faster; nullptr = the plain
  // layout. Ignored where the model set has bf16 weights.
  const core::PackedWeights* packed_weights = nullptr;
  // A lexical shortlist (shortlist.h), borrowed: each batch decodes over its batch_ids() only
  // (every member of an ensemble alike); nullptr = the whole target vocabulary.
  const Shortlist* shortlist = nullptr;
};

struct Translation {
  std::vector<std::string> src_tokens;       // [S] display tokens of the source
  std::vector<decode::Hypothesis> nbest;     // best first; empty for an empty source line
  std::vector<std::string> texts;            // decoded text of each hypothesis
  std::vector<std::vector<std::string>> tgt_tokens;  // display tokens of each hypothesis (+ "<eos>")
  const std::string& text() const;           // best text ("" when there is none)
};

// Translates `lines` in batches of options.batch_size (decode::run_batched: sorted by length,
// results in input order). Empty or whitespace-only lines give an empty translation.
// One input encoded once (the route parses it so, translate_lines does): its source ids and
// display tokens, and its target prefix's ids. Errors on an input over the limits, naming input
// `index` + 1.
struct EncodedInput {
  std::vector<int32_t> ids;          // [S] source ids (empty: an empty translation)
  std::vector<std::string> tokens;   // [S] display tokens
  std::vector<int32_t> prefix;       // target prefix ids, forced first (empty: none)
};
EncodedInput encode_input(const TextCodec& src, const TextCodec& tgt, const std::string& line,
                          const std::string& prefix, size_t index);
// Translations of encoded inputs (batched as translate_lines says), in their order.
std::vector<Translation> translate_encoded(const ModelSet<Seq2Seq>& models, const TextCodec& tgt,
                                           std::span<const EncodedInput* const> inputs,
                                           const TranslateOptions& options);

// `prefixes`: none, or one target prefix per line (text in the target vocabulary, "" = none):
// its tokens are forced first, then decoding is free (decode/search.h); the translation holds them.
std::vector<Translation> translate_lines(const ModelSet<Seq2Seq>& models, const TextCodec& src, const TextCodec& tgt,
                                         const std::vector<std::string>& lines, const TranslateOptions& options,
                                         std::span<const std::string> prefixes = {});

// A loaded seq2seq model directory with its two codecs (the family's LoadedModel).
struct Translator : LoadedFamily<Translator, Seq2Seq> {
  TextCodec src, tgt;
  std::unique_ptr<core::PackedWeights> packed;  // set_precision(kFp32)
  std::unique_ptr<Shortlist> shortlist;         // shortlist.tsv of the model (or its run), if there is one

  Translator(std::unique_ptr<Seq2Seq> m, std::filesystem::path d, TextCodec s, TextCodec t)
      : src(std::move(s)), tgt(std::move(t)) {
    model = std::move(m);
    model_dir = std::move(d);
  }
  const Seq2Seq& seq2seq() const { return *model; }
  // This model's shortlist; an error naming the directory when it has none.
  const Shortlist& shortlist_table() const;
  // The TranslateOptions of decode options (search, batch, and the shortlist when `shortlist` is
  // set: an error where the model has none), for every front end.
  TranslateOptions translate_options(const decode::DecodeOptions& d) const;
  // Translations with this model's members, weights and packed copy.
  std::vector<Translation> translate(const std::vector<std::string>& lines, TranslateOptions o,
                                     std::span<const std::string> prefixes = {}) const {
    if (packed) o.packed_weights = packed.get();
    return translate_lines(models(), src, tgt, lines, o, prefixes);
  }
  std::vector<Translation> translate(std::span<const EncodedInput* const> inputs, TranslateOptions o) const {
    if (packed) o.packed_weights = packed.get();
    return translate_encoded(models(), tgt, inputs, o);
  }
  std::string run_line(const std::string& line) override;  // translation with the model's decode defaults
  std::string input_help() const override { return "a source sentence"; }
  // POST /v1/translate (serve.cc, docs/serve.md): {"src": sentence or [sentences],
  // "target_prefix"?: one per sentence, and the options of translate_option_set()} ->
  // {"translations": [[{"tgt", "score", "alignment"?,
  // "src_tokens"?, "tgt_tokens"?}] per sentence]}. Units: sentences.
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // fp32: few-row products on a packed copy of the weights (a second fp32 copy of them in
  // memory); bf16, int8: every member's products on a bf16 / int8 copy (DecodeSetup).
  void set_precision(decode::Precision p) override;
  // Members with this model's vocabularies, token for token (check_same_codecs).
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};

// An error unless `b` has `a`'s source and target vocabularies, token for token (an ensemble).
void check_same_codecs(const Translator& a, const Translator& b);

// The model alone (config.yaml + model.safetensors, no vocabularies).
std::unique_ptr<Seq2Seq> load_seq2seq_model(const std::filesystem::path& dir);
// The family's loader (models::load_model calls it): a checkpoint directory whose vocabulary
// files sit in it or in its parent (a run directory); errors say which file is missing.
std::unique_ptr<Translator> load_translator(const std::filesystem::path& dir);

// Alignments of one hypothesis as JSON text: {"src": [...], "tgt": [...], "alignment": [[...], ...]}
// with one row per target token (incl. <eos> when finished) and one column per source token.
std::string alignment_json(const Translation& t, int hypothesis = 0);

}  // namespace engram::models
