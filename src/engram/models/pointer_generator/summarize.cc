// summarize_lines (decode::run_batched, recording each output's attention and p_gen) and the
// model-directory loader.
#include "engram/models/pointer_generator/summarize.h"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cerrno>
#include <cmath>
#include <optional>

#include "engram/core/graph.h"
#include "engram/data/vocab.h"
#include "engram/decode/ensemble.h"
#include "engram/decode/runner.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/models/loading.h"
#include "engram/nn/param_store.h"

namespace engram::models {

namespace fs = std::filesystem;

const decode::OptionSet& summarize_option_set() {
  static const decode::OptionSet set = [] {
    decode::OptionSet s{{"beam", "alpha", "coverage_penalty", "min_length", "max_length", "block_ngram_repeat",
                         "sampling_topk", "sampling_topp", "temperature", "seed", "precision", "batch", "stream"},
                        {}};
    s.defaults.max_length_ratio = 100.0f;  // summaries: max_length bounds the output
    s.defaults.batch = 32;
    return s;
  }();
  return set;
}

SummarizeOptions summarize_options(const decode::DecodeOptions& o) {
  SummarizeOptions s;
  s.search = o.search();
  s.batch_size = o.batch;
  return s;
}

void SummarizeOptions::validate() const {
  search.validate();
  ENGRAM_CHECK(max_source_tokens >= 0, "summarize: max_source_tokens {} must be >= 0", max_source_tokens);
  ENGRAM_CHECK(batch_size >= 1, "summarize: batch_size {} must be >= 1", batch_size);
  ENGRAM_CHECK(std::isfinite(oov_bonus) && oov_bonus >= -100.0f && oov_bonus <= 100.0f,
               "summarize: oov_bonus {} outside [-100, 100]", oov_bonus);
}

std::vector<Summary> summarize_lines(const ModelSet<PointerGenerator>& models, const TextCodec& codec,
                                     const std::vector<std::string>& lines, const SummarizeOptions& options,
                                     std::span<const std::string> prefixes) {
  options.validate();
  ENGRAM_CHECK(prefixes.empty() || prefixes.size() == lines.size(), "summarize: {} prefixes for {} articles",
               prefixes.size(), lines.size());
  const PointerGenerator& model = models.first();
  ENGRAM_CHECK(codec.size() == model.vocab(), "summarize: vocabulary of {} tokens for a model of {}", codec.size(),
               model.vocab());
  std::vector<Summary> out(lines.size());
  std::vector<size_t> order;  // the non-empty sources
  std::vector<int> lengths;   // [order] their lengths
  const int max_source = options.max_source_tokens > 0 ? options.max_source_tokens : model.cfg().max_source_tokens;
  for (size_t i = 0; i < lines.size(); ++i) {
    ENGRAM_CHECK(lines[i].size() <= kPgMaxLineBytes, "summarize: input {} is {} bytes, more than the limit of {}", i + 1,
                 lines[i].size(), kPgMaxLineBytes);
    out[i].source = extend_source(codec, lines[i], max_source);
    if (!out[i].source.ids.empty()) order.push_back(i), lengths.push_back(static_cast<int>(out[i].source.ids.size()));
    // An empty article is not decoded (its summary is empty): its prefix would be dropped.
    ENGRAM_CHECK(!out[i].source.ids.empty() || prefixes.empty() || prefixes[i].empty(),
                 "summarize: input {} is empty, so its target prefix has nothing to continue (give the prefix with an "
                 "article)", i + 1);
  }
  const PgDecodeOptions decode_options{
      .coverage_active = options.coverage_active, .block_unk = options.block_unk, .oov_bonus = options.oov_bonus};
  // Each model's steps with the decoding options; more than one: their mean probability.
  std::vector<PgStepModel> steppers;  // [M]
  steppers.reserve(models.models.size());
  for (size_t m = 0; m < models.models.size(); ++m) {
    const PointerGenerator& e = *models.models[m];
    ENGRAM_CHECK(e.cfg().copy == model.cfg().copy,
                 "summarize: ensemble member {} has copy {}, the first model copy {}: their outputs differ in classes",
                 m + 1, e.cfg().copy, model.cfg().copy);
    ENGRAM_CHECK(e.vocab() == model.vocab(), "summarize: ensemble member {} has another vocabulary than the first model",
                 m + 1);
    steppers.emplace_back(e, decode_options);
  }
  std::vector<const PgStepModel*> members;
  for (const PgStepModel& m : steppers) members.push_back(&m);
  std::optional<decode::EnsembleStepModel> ensemble;
  const decode::StepModel& stepper = ModelSet<PgStepModel>(members, nullptr).decoder(ensemble);
  core::Graph g(false);
  models.set_weights(g);
  decode::SearchOptions search = options.search;
  search.alignments = options.explain;  // α and p_gen recorded at each step of the chosen output
  const auto results = decode::run_batched(g, stepper, lengths, options.batch_size, search,
                                           [&](std::span<const size_t> chunk) {
    std::vector<std::vector<int32_t>> ids, forced;
    for (size_t k : chunk) {
      Summary& s = out[order[k]];
      ids.push_back(s.source.ids);
      if (!prefixes.empty()) forced.push_back(extend_target(codec, codec.tokens(prefixes[order[k]]), s.source));
    }
    decode::SourceBatch batch = decode::SourceBatch::from_ids(ids);
    batch.prefixes = std::move(forced);
    return batch;
  });
  for (size_t k = 0; k < order.size(); ++k) {
    Summary& s = out[order[k]];
    const decode::Hypothesis& h = results[k].front();
    s.ids = h.ids;
    s.finished = h.finished;
    s.tokens = output_tokens(codec, s.ids, s.source);
    s.text = codec.join(s.tokens);
    if (!options.explain) continue;
    s.attention = h.alignment;
    s.p_gen = h.gate.empty() ? std::vector<float>(h.ids.size() + (h.finished ? 1 : 0), 1.0f) : h.gate;
  }
  return out;
}

void summarize_stream(const ModelSet<PointerGenerator>& models, const TextCodec& codec, std::vector<std::string> lines,
                      const SummarizeOptions& options, const SummarizeStream& stream) {
  std::vector<std::string> prefixes;
  if (stream.prefix_column)
    for (std::string& line : lines) {
      const size_t tab = line.find('\t');
      prefixes.push_back(tab == std::string::npos ? "" : line.substr(tab + 1));
      if (tab != std::string::npos) line.resize(tab);
    }
  auto write = [](const std::string& text) {
    ENGRAM_CHECK(std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0,
                 "cannot write to standard output: {}", std::strerror(errno));
  };
  SummarizeOptions o = options;
  o.explain = false;  // the text alone is printed
  if (!stream.tokens) {
    for (const Summary& s : summarize_lines(models, codec, lines, o, prefixes)) write(s.text + "\n");
    return;
  }
  o.batch_size = 1;
  for (size_t i = 0; i < lines.size(); ++i) {
    const ExtendedSource source = extend_source(
        codec, lines[i], options.max_source_tokens > 0 ? options.max_source_tokens : models.first().cfg().max_source_tokens);
    std::vector<std::string> tokens;
    std::string printed;  // the text written so far: each write extends it
    o.search.on_token = [&](int, int32_t token, std::span<const float>) {
      if (token == data::kEosId) return;
      tokens.push_back(output_tokens(codec, {token}, source).at(0));
      const std::string text = codec.join(std::vector<std::string>(tokens.begin(), tokens.end() - 1));
      if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
        write(text.substr(printed.size()));
        printed = text;
      }
    };
    const std::span<const std::string> prefix =
        prefixes.empty() ? std::span<const std::string>() : std::span<const std::string>(&prefixes[i], 1);
    const std::string text = summarize_lines(models, codec, {lines[i]}, o, prefix).at(0).text;
    write((text.compare(0, printed.size(), printed) == 0 ? text.substr(printed.size()) : "\n" + text) + "\n");
  }
}

std::unique_ptr<LoadedPointerGenerator> load_pointer_generator(const fs::path& dir) {
  auto m = std::make_unique<LoadedPointerGenerator>();
  m->model_dir = dir;
  m->model = load_checkpoint_model<PointerGenerator, PointerGeneratorConfig>(dir);
  const PointerGeneratorConfig& cfg = m->model->cfg();
  const fs::path vocab = model_file(dir, cfg.file_name());
  m->codec = std::make_unique<TextCodec>(cfg.load(vocab.parent_path().string()));
  ENGRAM_CHECK(m->codec->size() == cfg.vocab, "{}: a vocabulary of {} tokens for a model of {}", vocab.string(),
               m->codec->size(), cfg.vocab);
  return m;
}

void LoadedPointerGenerator::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> ms) {
  setup.set_members(*this, std::move(ms), [&](const LoadedModel& m) {
    const auto& pg = dynamic_cast<const LoadedPointerGenerator&>(m);
    ENGRAM_CHECK(same_vocabulary(*pg.codec, *codec) && pg.model->cfg().copy == model->cfg().copy,
                 "--ensemble: {} has another vocabulary or copy setting than {}", m.dir().string(), model_dir.string());
  });
}

std::string LoadedPointerGenerator::run_line(const std::string& line) {
  SummarizeOptions o = summarize_options(decode_options(summarize_option_set().defaults, {}));  // the model's
  o.explain = false;
  return summarize_lines(models(), *codec, {line}, o).front().text;
}

}  // namespace engram::models
