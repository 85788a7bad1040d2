// PgTrainTask: data, vocabulary, extended-id examples, batching, the train/validate steps and
// the no-coverage phase.
// Dims: B batch, T target steps.
#include "engram/models/pointer_generator/task.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "engram/core/ops.h"
#include "engram/data/paths.h"
#include "engram/data/spm.h"
#include "engram/data/vocab.h"
#include "engram/data/tasks/names.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "engram/models/pointer_generator/eval.h"
#include "engram/train/run_config.h"
#include "engram/models/training.h"

namespace engram::models {

namespace fs = std::filesystem;

namespace {

TextPairs pairs_of(const std::vector<data::SummaryPair>& in) {
  TextPairs p;
  for (const data::SummaryPair& x : in) {
    p.src.push_back(x.source);
    p.tgt.push_back(x.target());
  }
  return p;
}

}  // namespace

void PgDataConfig::validate() const {
  ENGRAM_CHECK(generator.empty() || generator == "names", "pointer_generator data: unknown generator '{}' (known: names)",
               generator);
  ENGRAM_CHECK(bbc.empty() || bbc == "headline" || bbc == "summary",
               "pointer_generator data: unknown bbc task '{}' (known: headline, summary)", bbc);
  ENGRAM_CHECK(int{!generator.empty()} + int{!train_tsv.empty()} + int{!bbc.empty()} == 1,
               "pointer_generator data: give exactly one of data.train_tsv, data.generator and data.bbc");
  ENGRAM_CHECK(bbc.empty() || !bbc_dir.empty(), "pointer_generator data: data.bbc needs data.bbc_dir");
  if (!generator.empty()) check_generated_pairs("pointer_generator", generate_train, generate_valid);
  ENGRAM_CHECK(generate_train >= 1 && generate_valid >= 1 && valid_size >= 1 && max_pairs >= 0,
               "pointer_generator data: generate_train {}, generate_valid {} and valid_size {} must be >= 1, max_pairs "
               "{} >= 0",
               generate_train, generate_valid, valid_size, max_pairs);
  ENGRAM_CHECK(max_target_tokens >= 1 && max_tokens >= 1 && max_sentences >= 0 && rouge_pairs >= 1 && decode_batch >= 1,
               "pointer_generator data: max_target_tokens {}, max_tokens {}, rouge_pairs {} and decode_batch {} must be "
               ">= 1 (max_sentences {} >= 0)",
               max_target_tokens, max_tokens, rouge_pairs, decode_batch, max_sentences);
}

void PgTrainConfig::validate() const {
  ENGRAM_CHECK(model == PointerGenerator::kName, "pointer_generator training: config names model '{}'", model);
  pointer_generator.validate_options();
  data.validate();
  ENGRAM_CHECK(data.max_tokens >= std::max(pointer_generator.max_source_tokens, data.max_target_tokens + 1),
               "pointer_generator data: max_tokens {} is below one example of pointer_generator.max_source_tokens {} / "
               "max_target_tokens {} + 1",
               data.max_tokens, pointer_generator.max_source_tokens, data.max_target_tokens);
  ENGRAM_CHECK(task.pre_coverage_epochs >= 0 && task.pre_coverage_lr > 0.0f,
               "pointer_generator task: pre_coverage_epochs {} must be >= 0 and pre_coverage_lr {} > 0",
               task.pre_coverage_epochs, task.pre_coverage_lr);
  ENGRAM_CHECK(task.pre_coverage_epochs == 0 || pointer_generator.coverage,
               "pointer_generator task: pre_coverage_epochs {} needs pointer_generator.coverage: true",
               task.pre_coverage_epochs);
  train::check_trainer_config(train);
}

std::vector<data::SummaryPair> bbc_pairs(const std::vector<data::NewsArticle>& articles, const std::string& task) {
  ENGRAM_CHECK(task == "headline" || task == "summary", "bbc: unknown task '{}' (known: headline, summary)", task);
  std::vector<data::SummaryPair> out;
  out.reserve(articles.size());
  for (const data::NewsArticle& a : articles) {
    data::SummaryPair p;
    for (const std::string& s : a.body) p.source += (p.source.empty() ? "" : " ") + s;
    p.target_sentences = task == "headline" ? std::vector<std::string>{a.headline} : a.summary;
    p.line = a.number;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<data::NewsArticle> load_bbc_split(const std::string& dir, const std::string& split) {
  ENGRAM_CHECK(split == "train" || split == "valid" || split == "test",
               "bbc: unknown split '{}' (known: train, valid, test)", split);
  const data::BbcSplit which =
      split == "train" ? data::BbcSplit::kTrain : split == "valid" ? data::BbcSplit::kValid : data::BbcSplit::kTest;
  return data::bbc_subset(data::load_bbc(data::resolve_data_path(dir)), which);
}

data::Example pg_example(const TextCodec& codec, const std::string& src, const std::string& tgt, int max_source,
                         int max_target) {
  const ExtendedSource s = extend_source(codec, src, max_source);
  std::vector<std::string> toks = codec.tokens(tgt);
  if (static_cast<int>(toks.size()) > max_target) toks.resize(max_target);
  return {s.ids, extend_target(codec, toks, s)};
}

PgTrainTask::PgTrainTask(const PgTrainConfig& cfg, std::FILE* log) : cfg_(cfg) {
  cfg_.validate();
  const PgDataConfig& d = cfg_.data;
  TextPairs train_text, valid_text;
  if (!d.generator.empty()) {
    core::Rng rng(cfg_.train.seed * 7919 + 29);
    for (auto* split : {&train_text, &valid_text})
      for (const auto& p : data::tasks::make_name_pairs(split == &train_text ? d.generate_train : d.generate_valid, {}, rng)) {
        split->src.push_back(p.source);
        split->tgt.push_back(p.target);
      }
    log_note(log, fmt::format("data: generated names task, {} train / {} valid pairs", d.generate_train, d.generate_valid));
  } else if (!d.bbc.empty()) {
    const std::vector<data::NewsArticle> all = data::load_bbc(data::resolve_data_path(d.bbc_dir));
    train_text = pairs_of(bbc_pairs(data::bbc_subset(all, data::BbcSplit::kTrain), d.bbc));
    valid_text = pairs_of(bbc_pairs(data::bbc_subset(all, data::BbcSplit::kValid), d.bbc));
    log_note(log, fmt::format("data: BBC {} task, {} train / {} valid articles from {}", d.bbc, train_text.src.size(),
                          valid_text.src.size(), d.bbc_dir));
  } else {
    TextPairs all = pairs_of(data::read_summary_tsv(data::resolve_data_path(d.train_tsv)));
    if (!d.valid_tsv.empty()) {
      train_text = std::move(all);
      valid_text = pairs_of(data::read_summary_tsv(data::resolve_data_path(d.valid_tsv)));
    } else {  // hold out valid_size pairs chosen by a fixed seed
      ENGRAM_CHECK(static_cast<size_t>(d.valid_size) < all.src.size(),
                   "pointer_generator data: valid_size {} must be below the {} pairs of {} without data.valid_tsv",
                   d.valid_size, all.src.size(), d.train_tsv);
      hold_out(all, d.valid_size, train_text, valid_text);
    }
    log_note(log, fmt::format("data: {} train / {} valid pairs from {}", train_text.src.size(), valid_text.src.size(),
                          d.train_tsv));
  }
  if (d.max_pairs > 0 && static_cast<int64_t>(train_text.src.size()) > d.max_pairs) {
    train_text.src.resize(d.max_pairs);
    train_text.tgt.resize(d.max_pairs);
  }
  // ---- the vocabulary: one for both sides, kept in the run directory (a resumed run reuses it)
  const std::string run = cfg_.train.run_dir;
  if (train::world().root()) fs::create_directories(run);  // rank 0 writes for a data-parallel job
  PointerGeneratorConfig& m = cfg_.pointer_generator;
  const std::string& init_dir = cfg_.train.init_from;
  if (fs::exists(fs::path(run) / m.file_name())) {
    codec_ = m.load(run);
    log_note(log, fmt::format("vocab: loaded from {}", run));
  } else if (!init_dir.empty()) {  // fine-tuning: the weights' vocabulary, kept in the run as its own
    codec_ = m.load(init_dir);
    if (train::world().root())
      io::copy_file_atomic(fs::path(init_dir) / m.file_name(), fs::path(run) / m.file_name(),
                           std::max(data::kMaxVocabFileBytes, data::kMaxSpmFileBytes), "a vocabulary file");
    log_note(log, fmt::format("vocab: {}'s (train.init_from)", init_dir));
  } else {
    std::vector<std::string> both = train_text.src;
    both.insert(both.end(), train_text.tgt.begin(), train_text.tgt.end());
    codec_ = m.build(both, run);
  }
  m.vocab = codec_->size();
  // ---- examples in extended ids
  auto encode = [&](const TextPairs& p, TextPairs* kept) {
    std::vector<data::Example> out;
    for (size_t i = 0; i < p.src.size(); ++i) {
      data::Example e = pg_example(*codec_, p.src[i], p.tgt[i], m.max_source_tokens, d.max_target_tokens);
      if (e.src.empty() || e.tgt.empty()) continue;  // nothing left after tokenizing
      out.push_back(std::move(e));
      if (kept) {
        kept->src.push_back(p.src[i]);
        kept->tgt.push_back(p.tgt[i]);
      }
    }
    return out;
  };
  train_ = encode(train_text, nullptr);
  valid_ = encode(valid_text, &valid_text_);
  ENGRAM_CHECK(!train_.empty() && !valid_.empty(), "pointer_generator data: no training or validation pairs left");
  int64_t oov_targets = 0, tokens = 0;
  for (const data::Example& e : train_)
    for (int32_t id : e.tgt) {
      oov_targets += id >= m.vocab ? 1 : 0;
      ++tokens;
    }
  log_note(log, fmt::format("vocab: {} {} ({} of {} train target tokens are copy-only source words)", m.vocab,
                        m.unit == TokenUnit::kSpm ? "pieces" : "words", oov_targets, tokens));
  train::write_run_config(run, io::dump_config(cfg_));
  core::Rng init(cfg_.train.seed);
  model_ = std::make_unique<PointerGenerator>(m, init);
  log_note(log, fmt::format("model: pointer_generator, copy {}, coverage {}, {} parameters", m.copy ? "on" : "off",
                        m.coverage ? "on" : "off", model_->params().numel()));
  begin_epoch(0, cfg_.train.seed);
}

std::vector<std::filesystem::path> PgTrainTask::checkpoint_files() const {
  return {fs::path(cfg_.train.run_dir) / cfg_.pointer_generator.file_name()};
}

std::vector<train::TrainPhase> PgTrainTask::phases() const {
  if (cfg_.task.pre_coverage_epochs == 0) return {};
  return {train::TrainPhase{.name = "no_coverage", .max_epochs = cfg_.task.pre_coverage_epochs,
                            .lr = cfg_.task.pre_coverage_lr}};
}

void PgTrainTask::begin_phase(int phase) { coverage_active_ = phase == static_cast<int>(phases().size()); }

void PgTrainTask::begin_epoch(int epoch, uint64_t seed) {
  epoch_ = epoch;
  seed_ = seed;
  core::Rng rng(train::epoch_seed(seed, epoch));
  plan_ = data::plan_batches(train_, {.max_tokens = cfg_.data.max_tokens, .max_sentences = cfg_.data.max_sentences},
                             &rng);
}

train::BatchResult PgTrainTask::train_batch(int64_t index) {
  ENGRAM_CHECK(index >= 0 && static_cast<size_t>(index) < plan_.size(), "pointer_generator: batch {} of {}", index,
               plan_.size());
  // This rank's shard of the batch (the whole batch with one rank): the loss is a mean over the
  // shard's target tokens, scaled to the shard's share of the whole batch's tokens.
  const std::vector<int64_t>& all = plan_[index];
  const auto [lo, hi] = train::shard_range(static_cast<int64_t>(all.size()), shard());
  if (lo == hi) return {0, 0};
  int64_t batch_tokens = 0;
  for (int64_t i : all) batch_tokens += static_cast<int64_t>(train_[static_cast<size_t>(i)].tgt.size()) + 1;  // + <eos>
  const data::Batch batch = data::collate(train_, std::vector<int64_t>(all.begin() + lo, all.begin() + hi));
  core::Rng dropout(train::shard_seed(train::batch_seed(seed_, epoch_, index), shard()));
  graph_.reset();
  const PgLoss l = model_->loss(graph_, batch, {.dropout_rng = &dropout, .coverage_active = coverage_active_});
  const bool whole = hi - lo == static_cast<int64_t>(all.size());
  graph_.backward(whole ? l.total : core::scale(l.total, static_cast<float>(l.tokens) / static_cast<float>(batch_tokens)));
  return {static_cast<double>(l.total.data()[0]) * l.tokens, l.tokens};
}

train::Metrics PgTrainTask::validate() {
  core::Graph g(false);
  double nll = 0, cov = 0;
  int64_t tokens = 0;
  for (const auto& idx : data::plan_batches(valid_, {.max_tokens = cfg_.data.max_tokens, .shuffle = false}, nullptr)) {
    const data::Batch batch = data::collate(valid_, idx);
    g.reset();
    const PgLoss l = model_->loss(g, batch, {.coverage_active = coverage_active_});
    nll += l.nll_sum;
    cov += l.coverage_sum;
    tokens += l.tokens;
  }
  const size_t n = std::min(valid_text_.src.size(), static_cast<size_t>(cfg_.data.rouge_pairs));
  const std::vector<std::string> srcs(valid_text_.src.begin(), valid_text_.src.begin() + n),
      refs(valid_text_.tgt.begin(), valid_text_.tgt.begin() + n);
  SummarizeOptions o;
  o.batch_size = cfg_.data.decode_batch;
  o.coverage_active = coverage_active_;
  o.search.max_length = cfg_.data.max_target_tokens;
  const PgScores sc = score_summaries(*codec_, summarize_lines(*model_, *codec_, srcs, o), refs);
  train::Metrics mt;
  mt["loss"] = tokens ? nll / tokens : 0.0;
  mt["ppl"] = std::exp(std::min(mt["loss"], 50.0));
  mt["coverage_loss"] = tokens ? cov / tokens : 0.0;
  mt["rouge1"] = sc.rouge1;
  mt["rouge2"] = sc.rouge2;
  mt["rouge_l"] = sc.rouge_l;
  mt["copy_share"] = sc.copy_share;
  mt["oov_copy"] = sc.oov_copy_rate;
  mt["repeats"] = sc.repeat_share;
  return mt;
}

}  // namespace engram::models
