// The one decode-options schema of every family (CTranslate2's DecodingOptions): search, sampling,
// the pointer's views, precision, batching and what a result returns. CLI flags, JSON request
// fields and `--dump-config`-style listings are generated from visit(); defaults and limits live
// here once, so every front end validates the same way. A family names the fields it honours
// (OptionSet); a field given to a family that does not honour it is an error naming both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/decode/search.h"
#include "engram/io/config.h"

namespace engram::decode {

enum class Precision { kFp32, kBf16, kInt8 };

// Limits (docs/limits.md) beside kMaxBeam and kMaxOutputTokens (search.h).
constexpr int kMaxBatch = 4096;    // inputs decoded together
constexpr int kMaxSamples = 100000;  // sampled outputs per input
constexpr int kMaxViews = 64;      // readings of one pointer instance

struct DecodeOptions {
  // Search (search.h, SearchOptions: how these act together).
  int beam = 1;                   // K; 1 with n_best 1 = greedy
  int n_best = 1;                 // hypotheses returned per input (<= beam); given alone, beam = n_best
  float alpha = 0.0f;             // GNMT length penalty exponent
  float coverage_penalty = 0.0f;  // GNMT coverage penalty β
  int min_length = 0;
  int max_length = 256;
  float max_length_ratio = 2.0f;
  int max_length_offset = 10;
  int block_ngram_repeat = 0;
  // Sampling. Text families (CTranslate2's random sampling): sampling_topk != 1 draws each token
  // from p^(1/temperature) over the sampling_topk most likely tokens (0 = all of them), cut to the
  // smallest set whose probability reaches sampling_topp; beam 1 only. The pointer: `samples`
  // outputs per input drawn from p^(1/temperature), the best kept. Both seeded by `seed`.
  int sampling_topk = 1;
  float sampling_topp = 1.0f;
  int samples = 0;
  float temperature = 1.0f;
  uint64_t seed = 1;
  // Pointer: readings of an instance by the unit square's symmetries and shuffles (1 = off).
  int views = 1;
  // Decode-time weights: fp32, bf16 (products on bf16-rounded weights and inputs, fp32 sums), or
  // int8 (weight matrices int8 with one scale per output row, inputs quantized per row, integer
  // sums: core/kernels/gemm_int8.h; embeddings and biases fp32).
  Precision precision = Precision::kFp32;
  int batch = 64;           // inputs decoded together (sorted by length inside a batch)
  // Decode over the model's lexical shortlist (models/seq2seq/shortlist.h: shortlist.tsv beside
  // the model): the output layer scores only the batch's shortlisted target tokens.
  bool shortlist = false;
  bool alignments = false;  // return the attention α of every output token
  // Token streaming (greedy and sampling only): each token as it is chosen, with its α row (the
  // CLI prints it; HTTP answers with Server-Sent Events).
  bool stream = false;
  // Not an option of the schema (no flag, no JSON field): the inputs a caller decoding its own
  // inputs (Python's `batch` keyword) asks a route to decode together; 0 = the family's choice.
  int chunk = 0;

  template <class V>
  void visit(V& v) {
    v("beam", beam, "beam size (1 = greedy)");
    v("n_best", n_best, "hypotheses per input (<= beam; given alone, the beam is n_best)");
    v("alpha", alpha, "GNMT length penalty exponent (0 = raw log-probability)");
    v("coverage_penalty", coverage_penalty,
      "GNMT coverage penalty beta: score += beta * sum_i log(min(attention to source token i, 1)) (0 = off)");
    v("min_length", min_length, "min output tokens before <eos> (never past the max length; 0 = off)");
    v("max_length", max_length, "absolute max output tokens");
    v("max_length_ratio", max_length_ratio, "max output tokens per source token");
    v("max_length_offset", max_length_offset, "max output tokens added to ratio * source length");
    v("block_ngram_repeat", block_ngram_repeat, "forbid repeating any n-gram of this size in an output (0 = off)");
    v("sampling_topk", sampling_topk, "sample each token from the k most likely (1 = no sampling, 0 = all tokens)");
    v("sampling_topp", sampling_topp, "sample from the smallest set of the top tokens whose probability reaches p (1 = off)");
    v("samples", samples, "sampled outputs per input besides the search's; the best is kept (0 = off)");
    v("temperature", temperature, "sampling from p^(1/temperature)");
    v("seed", seed, "random seed of sampling");
    v("views", views, "readings of each instance by the unit square's symmetries (1 = off)");
    v("precision", precision, "decoding weights: fp32, bf16 or int8");
    v("batch", batch, "inputs decoded together");
    v("shortlist", shortlist,
      "score only the target tokens of the model's shortlist for the batch's source tokens (shortlist.tsv, made by "
      "engram shortlist)");
    v("alignments", alignments, "return the attention weights of every output token");
    v("stream", stream, "stream each token as it is decoded (greedy or sampling)");
  }

  // Errors (one line, naming the field) on a value outside its range.
  void validate() const;
  // The search part (SearchOptions: beam ... block_ngram_repeat, alignments, and the text
  // families' sampling).
  SearchOptions search() const;
  bool operator==(const DecodeOptions&) const = default;
};

// The fields of DecodeOptions a family honours, and its defaults (a family's own default max
// length, say). Given fields outside `fields` are refused.
struct OptionSet {
  std::vector<std::string> fields;
  DecodeOptions defaults;
  bool has(std::string_view field) const;
};

// Every field name of DecodeOptions, in declaration order.
const std::vector<std::string>& option_names();

// The options of a JSON object's fields that are DecodeOptions fields (other keys are left to the
// caller): typed and range-checked, each error one line naming the field; a DecodeOptions field
// that `set` does not honour is an error naming it and `family`. `given`, when not null, receives
// the names read. n_best given without beam sets the beam to n_best. Keys in `inputs` are the
// family's own input fields and shadow an option of the same name (ntm's "seed").
DecodeOptions options_from_json(const nlohmann::json& object, const OptionSet& set, std::string_view family,
                                std::vector<std::string>* given = nullptr,
                                const std::vector<std::string>& inputs = {});
// After reading explicit fields: n_best given alone means beam = n_best; then validate().
void finish_options(DecodeOptions& o, const std::vector<std::string>& given);

// A model's own decode defaults: the fields its run config's `decode:` section names (saved as
// RUN/decode.yaml, docs/models.md), over the family's defaults and under every explicit flag or
// request field.
struct ModelDefaults {
  DecodeOptions values;             // the named fields' values (the others unused)
  std::vector<std::string> fields;  // the fields the section names, in declaration order
};
// Reads a `decode:` section (a YAML map of DecodeOptions fields) as the config reader reads any
// key: an unknown key, a value of the wrong type or out of range is a one-line error naming
// `source` and the key. With `set`, a field the family does not honour is an error naming it
// and `family`.
ModelDefaults read_model_defaults(const YAML::Node& section, const std::string& source,
                                  const OptionSet* set = nullptr, std::string_view family = "");
// The options a front end decodes with: `asked` (a command line's or request's options: the
// family's defaults with the `given` fields over them), where each field `model` names and
// `given` does not takes the model's value. n_best named (given or by the model) without an
// explicit beam raises the beam to n_best; then validate().
DecodeOptions with_model_defaults(const DecodeOptions& asked, const std::vector<std::string>& given,
                                  const ModelDefaults& model);

}  // namespace engram::decode

template <>
struct engram::io::EnumNames<engram::decode::Precision> {
  static constexpr std::pair<engram::decode::Precision, const char*> items[] = {
      {engram::decode::Precision::kFp32, "fp32"},
      {engram::decode::Precision::kBf16, "bf16"},
      {engram::decode::Precision::kInt8, "int8"}};
};

namespace engram::decode {
// The precision's name as the option spells it: "fp32", "bf16" or "int8".
inline const char* precision_name(Precision p) {
  for (const auto& [value, name] : io::EnumNames<Precision>::items)
    if (value == p) return name;
  return "?";
}
}  // namespace engram::decode
