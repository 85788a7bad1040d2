// translate_lines, model-directory loading and alignment JSON.
#include "engram/models/seq2seq/translate.h"

#include "engram/models/loading.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engram/core/graph.h"
#include "engram/decode/ensemble.h"
#include "engram/decode/runner.h"
#include "engram/data/text.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"

namespace engram::models {

namespace fs = std::filesystem;

const std::string& Translation::text() const {
  static const std::string kEmpty;
  return texts.empty() ? kEmpty : texts[0];
}

EncodedInput encode_input(const TextCodec& src, const TextCodec& tgt, const std::string& line,
                          const std::string& prefix, size_t index) {
  ENGRAM_CHECK(line.size() <= kMaxLineBytes, "translate: input {} is {} bytes, more than the limit of {}", index + 1,
               line.size(), kMaxLineBytes);
  ENGRAM_CHECK(prefix.size() <= kMaxLineBytes, "translate: the target prefix of input {} is {} bytes, more than the "
               "limit of {}", index + 1, prefix.size(), kMaxLineBytes);
  EncodedInput e;
  e.ids = src.encode(line);
  ENGRAM_CHECK(e.ids.size() <= kMaxSourceTokens, "translate: input {} has {} tokens, more than the limit of {}",
               index + 1, e.ids.size(), kMaxSourceTokens);
  e.tokens = src.tokens(line);
  if (!prefix.empty()) e.prefix = tgt.encode(prefix);
  // An empty source is not decoded (its translation is empty): its prefix would be dropped.
  ENGRAM_CHECK(e.prefix.empty() || !e.ids.empty(), "translate: input {} is empty, so its target prefix has nothing "
               "to continue (give the prefix with a source sentence)", index + 1);
  ENGRAM_CHECK(e.prefix.size() <= kMaxSourceTokens, "translate: the target prefix of input {} has {} tokens, more "
               "than the limit of {}", index + 1, e.prefix.size(), kMaxSourceTokens);
  return e;
}

std::vector<Translation> translate_lines(const ModelSet<Seq2Seq>& models, const TextCodec& src, const TextCodec& tgt,
                                         const std::vector<std::string>& lines, const TranslateOptions& options,
                                         std::span<const std::string> prefixes) {
  ENGRAM_CHECK(prefixes.empty() || prefixes.size() == lines.size(), "translate: {} target prefixes for {} inputs",
               prefixes.size(), lines.size());
  std::vector<EncodedInput> inputs;
  for (size_t i = 0; i < lines.size(); ++i)
    inputs.push_back(encode_input(src, tgt, lines[i], prefixes.empty() ? std::string() : prefixes[i], i));
  std::vector<const EncodedInput*> pointers;
  for (const EncodedInput& e : inputs) pointers.push_back(&e);
  return translate_encoded(models, tgt, pointers, options);
}

std::vector<Translation> translate_encoded(const ModelSet<Seq2Seq>& models, const TextCodec& tgt,
                                           std::span<const EncodedInput* const> inputs,
                                           const TranslateOptions& options) {
  ENGRAM_CHECK(options.batch_size >= 1, "translate: batch_size {} must be >= 1", options.batch_size);
  options.search.validate();
  std::vector<Translation> out(inputs.size());
  std::vector<size_t> order;  // the non-empty inputs
  bool prefixed = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out[i].src_tokens = inputs[i]->tokens;
    if (!inputs[i]->ids.empty()) order.push_back(i);
    prefixed = prefixed || !inputs[i]->prefix.empty();
  }
  core::Graph g(false);
  models.set_weights(g);
  g.use_packed_weights(options.packed_weights);
  // The first model alone, or with the members as one (their probabilities averaged).
  std::optional<decode::EnsembleStepModel> ensemble;
  const decode::StepModel& decoder = models.decoder(ensemble);
  std::vector<int> lengths;
  for (size_t i : order) lengths.push_back(static_cast<int>(inputs[i]->ids.size()));
  auto results = decode::run_batched(g, decoder, lengths, options.batch_size, options.search,
                                     [&](std::span<const size_t> chunk) {
                                       std::vector<std::vector<int32_t>> part;
                                       for (size_t k : chunk) part.push_back(inputs[order[k]]->ids);
                                       decode::SourceBatch b = decode::SourceBatch::from_ids(part);
                                       if (options.shortlist) b.output_ids = options.shortlist->batch_ids(b.ids);
                                       if (prefixed)
                                         for (size_t k : chunk) b.prefixes.push_back(inputs[order[k]]->prefix);
                                       return b;
                                     });
  for (size_t k = 0; k < order.size(); ++k) {
    Translation& t = out[order[k]];
    t.nbest = std::move(results[k]);
    for (const decode::Hypothesis& h : t.nbest) {
      t.texts.push_back(tgt.decode(h.ids));
      std::vector<std::string> toks;
      for (int32_t id : h.ids) toks.push_back(tgt.token(id));
      if (h.finished) toks.emplace_back(data::kEosToken);
      t.tgt_tokens.push_back(std::move(toks));
    }
  }
  return out;
}

const decode::OptionSet& translate_option_set() {
  static const decode::OptionSet set{{"beam", "n_best", "alpha", "coverage_penalty", "min_length", "max_length",
                                      "max_length_ratio", "max_length_offset", "block_ngram_repeat", "sampling_topk",
                                      "sampling_topp", "temperature", "seed", "precision", "batch", "shortlist",
                                      "alignments", "stream"},
                                     {}};
  return set;
}

const Shortlist& Translator::shortlist_table() const {
  ENGRAM_CHECK(shortlist != nullptr, "{}: no {} beside the model or in its run directory (make one with engram "
               "shortlist)", model_dir.string(), kShortlistFile);
  return *shortlist;
}

std::unique_ptr<Seq2Seq> load_seq2seq_model(const fs::path& dir) { return load_checkpoint_model<Seq2Seq, Seq2SeqConfig>(dir); }

std::unique_ptr<Translator> load_translator(const fs::path& dir) {
  std::unique_ptr<Seq2Seq> model = load_seq2seq_model(dir);
  const Seq2SeqConfig cfg = model->cfg();
  // Vocabulary files: in the checkpoint, else in the run directory above it.
  const fs::path vocab_dir = model_file(dir, cfg.tokenizer.file_name(Side::kSource)).parent_path();
  auto t = std::make_unique<Translator>(std::move(model), dir,
                                        cfg.tokenizer.load(Side::kSource, vocab_dir.string()),
                                        cfg.tokenizer.load(Side::kTarget, vocab_dir.string()));
  ENGRAM_CHECK(t->src.size() == cfg.src_vocab && t->tgt.size() == cfg.tgt_vocab,
               "{}: vocabulary sizes {} / {} do not match the model's {} / {}", vocab_dir.string(), t->src.size(),
               t->tgt.size(), cfg.src_vocab, cfg.tgt_vocab);
  const fs::path shortlist = model_file(dir, kShortlistFile);
  if (fs::exists(shortlist)) t->shortlist = std::make_unique<Shortlist>(Shortlist::load(shortlist, t->src, t->tgt));
  return t;
}

void check_same_codecs(const Translator& a, const Translator& b) {
  for (const auto& [x, y, side] : {std::tuple{&a.src, &b.src, "source"}, std::tuple{&a.tgt, &b.tgt, "target"}})
    ENGRAM_CHECK(same_vocabulary(*x, *y), "--ensemble: {} has another {} vocabulary than {} (an ensemble shares its "
                 "vocabularies)", b.dir().string(), side, a.dir().string());
}

TranslateOptions Translator::translate_options(const decode::DecodeOptions& d) const {
  TranslateOptions o;
  o.search = d.search();
  o.batch_size = d.batch;
  if (d.shortlist) o.shortlist = &shortlist_table();
  return o;
}

std::string Translator::run_line(const std::string& line) {
  return translate({line}, translate_options(decode_options(translate_option_set().defaults, {}))).front().text();
}

std::string alignment_json(const Translation& t, int hypothesis) {
  nlohmann::json j;
  j["src"] = t.src_tokens;
  if (hypothesis >= static_cast<int>(t.nbest.size())) {
    j["tgt"] = nlohmann::json::array();
    j["alignment"] = nlohmann::json::array();
    return j.dump();
  }
  const decode::Hypothesis& h = t.nbest[hypothesis];
  j["tgt"] = t.tgt_tokens[hypothesis];
  j["score"] = h.score;
  nlohmann::json rows = nlohmann::json::array();
  const size_t s = static_cast<size_t>(h.src_len);
  for (size_t r = 0; s > 0 && (r + 1) * s <= h.alignment.size(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (size_t c = 0; c < s; ++c) row.push_back(std::round(double{h.alignment[r * s + c]} * 1e4) / 1e4);
    rows.push_back(std::move(row));
  }
  j["alignment"] = std::move(rows);
  return j.dump();
}

}  // namespace engram::models
