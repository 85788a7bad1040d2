// Seq2SeqTask: data loading, vocabularies, batching and the train/validate steps.
// Dims: B batch, T target steps, V target vocab.
#include "engram/models/seq2seq/task.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "engram/core/ops.h"
#include "engram/data/cedict.h"
#include "engram/data/chinese_script.h"
#include "engram/data/name_swap.h"
#include "engram/data/parallel.h"
#include "engram/data/paths.h"
#include "engram/data/tasks/dates.h"
#include "engram/eval/accuracy.h"
#include "engram/eval/bleu.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/train/run_config.h"
#include "engram/models/training.h"

namespace engram::models {

namespace fs = std::filesystem;

namespace {

data::ParallelCorpus read_pairs(const std::string& src, const std::string& tgt, const std::string& tsv,
                                const Seq2SeqDataConfig& d, int64_t max_pairs) {
  data::ParallelOptions o{.max_pairs = max_pairs, .src_field = d.src_field, .tgt_field = d.tgt_field};
  if (!tsv.empty()) return data::read_tsv_pairs(data::resolve_data_path(tsv), o);
  return data::read_parallel(data::resolve_data_path(src), data::resolve_data_path(tgt), o);
}

std::string stats_text(const data::ParallelStats& s) {
  return fmt::format("{} lines, {} pairs kept, {} with an empty side skipped", s.lines, s.kept, s.empty_skipped);
}

// Encodes pairs; pairs with an empty or over-long side are dropped (counted).
std::vector<data::Example> encode_pairs(const TextPairs& p, const TextCodec& src, const TextCodec& tgt, int max_length,
                                        TextPairs* kept, int64_t* dropped) {
  std::vector<data::Example> out;
  *dropped = 0;
  for (size_t i = 0; i < p.src.size(); ++i) {
    data::Example e{src.encode(p.src[i]), tgt.encode(p.tgt[i])};
    if (e.src.empty() || e.tgt.empty() || static_cast<int>(e.src.size()) > max_length ||
        static_cast<int>(e.tgt.size()) > max_length) {
      ++*dropped;
      continue;
    }
    out.push_back(std::move(e));
    if (kept) {
      kept->src.push_back(p.src[i]);
      kept->tgt.push_back(p.tgt[i]);
    }
  }
  return out;
}

}  // namespace

Seq2SeqTask::Seq2SeqTask(const Seq2SeqTrainConfig& cfg, std::FILE* log) : cfg_(cfg) {
  ENGRAM_CHECK(cfg_.model == Seq2Seq::kName, "seq2seq training: config names model '{}'", cfg_.model);
  const Seq2SeqDataConfig& d = cfg_.data;
  ENGRAM_CHECK(d.max_length >= 1 && d.max_tokens >= 1 && d.decode_batch >= 1,
               "seq2seq data: max_length {}, max_tokens {} and decode_batch {} must be >= 1", d.max_length,
               d.max_tokens, d.decode_batch);
  ENGRAM_CHECK(d.max_pairs >= 0 && d.bleu_sentences >= 1,
               "seq2seq data: max_pairs {} must be >= 0 (0 = all) and bleu_sentences {} >= 1", d.max_pairs,
               d.bleu_sentences);
  ENGRAM_CHECK(d.guided_alignment >= 0 && std::isfinite(d.guided_alignment),
               "seq2seq data: guided_alignment {} must be a finite weight >= 0", d.guided_alignment);
  ENGRAM_CHECK(d.guided_alignment_iterations >= 1 && d.guided_alignment_iterations <= 100,
               "seq2seq data: guided_alignment_iterations {} must be in [1, 100]", d.guided_alignment_iterations);
  ENGRAM_CHECK(std::isfinite(d.guided_alignment_diagonal) && d.guided_alignment_diagonal >= 0 &&
                   d.guided_alignment_diagonal <= 100,
               "seq2seq data: guided_alignment_diagonal {} must be in [0, 100]", d.guided_alignment_diagonal);
  ENGRAM_CHECK(d.guided_alignment == 0 || cfg_.seq2seq.attention != AttentionKind::kNone,
               "seq2seq data: guided_alignment needs attention (seq2seq.attention is none)");
  // ---- text
  TextPairs train_text, valid_text;
  bool held_out = false;  // validation pairs held out of the training file
  if (!d.generator.empty()) {
    ENGRAM_CHECK(d.generator == "dates", "seq2seq data: unknown generator '{}' (known: dates)", d.generator);
    check_generated_pairs("seq2seq", d.generate_train, d.generate_valid);
    core::Rng rng(cfg_.train.seed * 7919 + 17);
    for (const auto& p : data::tasks::make_date_pairs(d.generate_train, {}, rng)) {
      train_text.src.push_back(p.source);
      train_text.tgt.push_back(p.target);
    }
    for (const auto& p : data::tasks::make_date_pairs(d.generate_valid, {}, rng)) {
      valid_text.src.push_back(p.source);
      valid_text.tgt.push_back(p.target);
    }
    log_note(log, fmt::format("data: generated dates, {} train / {} valid pairs", d.generate_train, d.generate_valid));
  } else {
    ENGRAM_CHECK(!d.train_tsv.empty() || (!d.train_src.empty() && !d.train_tgt.empty()),
                 "seq2seq data: give data.train_tsv or data.train_src + data.train_tgt (or data.generator)");
    data::ParallelCorpus tr = read_pairs(d.train_src, d.train_tgt, d.train_tsv, d, 0);
    log_note(log, fmt::format("data: train {}", stats_text(tr.stats)));
    const std::string train_file = d.train_tsv.empty() ? d.train_src : d.train_tsv;
    ENGRAM_CHECK(tr.size() > 0, "seq2seq data: {} holds no training pairs ({})", train_file,
                 tr.stats.lines == 0 ? "the file is empty" : fmt::format("{} lines, each with an empty side", tr.stats.lines));
    const bool has_valid = !d.valid_tsv.empty() || (!d.valid_src.empty() && !d.valid_tgt.empty());
    if (has_valid) {
      data::ParallelCorpus va = read_pairs(d.valid_src, d.valid_tgt, d.valid_tsv, d, 0);
      log_note(log, fmt::format("data: valid {}", stats_text(va.stats)));
      valid_text = {std::move(va.src), std::move(va.tgt)};
      train_text = {std::move(tr.src), std::move(tr.tgt)};
    } else {  // hold out valid_size pairs, chosen by a fixed seed
      ENGRAM_CHECK(d.valid_size >= 1 && static_cast<size_t>(d.valid_size) < tr.size(),
                   "seq2seq data: valid_size {} must be in [1, {}) without validation files", d.valid_size, tr.size());
      hold_out(tr, d.valid_size, train_text, valid_text);
      log_note(log, fmt::format("data: {} pairs held out for validation (seeded)", d.valid_size));
      held_out = true;
    }
    if (d.max_pairs > 0 && static_cast<int64_t>(train_text.src.size()) > d.max_pairs) {
      train_text.src.resize(d.max_pairs);
      train_text.tgt.resize(d.max_pairs);
    }
  }
  // ---- one Chinese script (tokenizer.simplified): before the steps below match names and
  // punctuation in the text (the dictionary's headwords are converted below); the codecs convert
  // every text again when they encode it, which changes nothing here
  const bool simplified = cfg_.seq2seq.tokenizer.simplified;
  if (simplified) {
    int64_t changed = 0, total = 0;
    for (TextPairs* p : {&train_text, &valid_text})
      for (std::vector<std::string>* side : {&p->src, &p->tgt})
        for (std::string& line : *side) {
          std::string s = data::to_simplified_chinese(line);
          changed += s != line;
          ++total;
          line = std::move(s);
        }
    log_note(log, fmt::format("data: {} of {} sentences (both sides, training and validation) had traditional Chinese "
                              "characters, now simplified (OpenCC t2s)",
                              changed, total));
  }
  // ---- training pairs without their final punctuation (data.unpunctuated_share)
  ENGRAM_CHECK(std::isfinite(d.unpunctuated_share) && d.unpunctuated_share >= 0 && d.unpunctuated_share <= 1,
               "seq2seq data: unpunctuated_share {} must be in [0, 1]", d.unpunctuated_share);
  if (d.unpunctuated_share > 0) {
    std::vector<size_t> idx(train_text.src.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    core::Rng pick(train::epoch_seed(cfg_.train.seed, -2));
    pick.shuffle(idx.begin(), idx.end());
    const size_t n = static_cast<size_t>(std::llround(d.unpunctuated_share * static_cast<double>(idx.size())));
    int64_t stripped = 0;
    for (size_t k = 0; k < n; ++k) {
      std::string src = train_text.src[idx[k]], tgt = train_text.tgt[idx[k]];
      if (!data::strip_final_punctuation(&src) || !data::strip_final_punctuation(&tgt)) continue;
      train_text.src[idx[k]] = std::move(src);
      train_text.tgt[idx[k]] = std::move(tgt);
      ++stripped;
    }
    log_note(log, fmt::format("data: {} of {} chosen training pairs without their final punctuation", stripped, n));
  }
  // ---- joined training pairs (data.concat_share): longer inputs
  ENGRAM_CHECK(std::isfinite(d.concat_share) && d.concat_share >= 0 && d.concat_share <= 1,
               "seq2seq data: concat_share {} must be in [0, 1]", d.concat_share);
  TextPairs concat_text;
  if (d.concat_share > 0 && train_text.src.size() > 1) {
    std::vector<size_t> idx(train_text.src.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    core::Rng pick(train::epoch_seed(cfg_.train.seed, -4));
    pick.shuffle(idx.begin(), idx.end());
    const size_t n = static_cast<size_t>(std::llround(d.concat_share * static_cast<double>(idx.size())));
    for (size_t k = 0; k < n; ++k) {
      const size_t a = idx[k];
      size_t b = pick.below(idx.size() - 1);
      b += b >= a;  // another pair than a
      const std::string& first = train_text.src[a];
      concat_text.src.push_back(first + (data::ends_in_cjk(first) ? "" : " ") + train_text.src[b]);
      concat_text.tgt.push_back(train_text.tgt[a] + " " + train_text.tgt[b]);
    }
  }
  // ---- dictionary pairs (data.dictionary): training only; names first, then the other entries,
  // then names in sentences (not in the vocabularies' text: their pieces are the others')
  TextPairs dict_text, context_text;
  size_t dict_names = 0;
  if (!d.dictionary.empty()) {
    for (double w : {d.dictionary_weight, d.dictionary_name_weight, d.dictionary_context_weight})
      ENGRAM_CHECK(std::isfinite(w) && w >= 0 && w <= 1000,
                   "seq2seq data: dictionary weights must be in [0, 1000], got {}", w);
    data::DictionaryPairs dp = data::cedict_pairs(
        data::read_cedict(data::resolve_data_path(d.dictionary)),
        {.max_chars = d.dictionary_max_chars,
         .max_words = d.dictionary_max_words,
         .infinitive_to = d.dictionary_infinitive_to});
    // OpenCC writes some simplified headwords otherwise (乾安 -> 干安); a name is looked for in the
    // sentences as they were converted
    if (simplified)
      for (std::string& h : dp.zh) h = data::to_simplified_chinese(h);
    log_note(log, fmt::format("data: dictionary {}: {}", d.dictionary, data::to_string(dp.stats)));
    ENGRAM_CHECK(dp.size() > 0, "seq2seq data: dictionary {} gives no pairs", d.dictionary);
    for (bool names : {true, false}) {
      for (size_t i = 0; i < dp.size(); ++i) {
        if (dp.name[i] != names) continue;
        dict_text.src.push_back(d.dictionary_reverse ? dp.en[i] : dp.zh[i]);
        dict_text.tgt.push_back(d.dictionary_reverse ? dp.zh[i] : dp.en[i]);
      }
      if (names) dict_names = dict_text.src.size();
    }
    ENGRAM_CHECK(d.dictionary_contexts >= 1 && d.dictionary_contexts <= 64,
                 "seq2seq data: dictionary_contexts {} must be in [1, 64]", d.dictionary_contexts);
    if (d.dictionary_context_weight > 0) {
      const std::vector<std::string>& zh = d.dictionary_reverse ? train_text.tgt : train_text.src;
      const std::vector<std::string>& en = d.dictionary_reverse ? train_text.src : train_text.tgt;
      std::vector<std::string> name_zh, name_en;
      for (size_t i = 0; i < dp.size(); ++i) {
        if (!dp.name[i]) continue;
        name_zh.push_back(dp.zh[i]);
        name_en.push_back(dp.en[i]);
      }
      // Slots grouped by their name: a name is drawn uniformly, then one of its pairs.
      std::map<size_t, std::vector<size_t>> by_name;
      for (const data::NameSlot& slot : data::find_name_slots(zh, en, name_zh, name_en)) by_name[slot.name].push_back(slot.pair);
      ENGRAM_CHECK(!by_name.empty(), "seq2seq data: no training pair holds a dictionary name on both sides, so "
                   "dictionary_context_weight has nothing to build on");
      std::vector<size_t> slot_names;
      int64_t slot_pairs = 0;
      for (const auto& [name, pairs] : by_name) slot_names.push_back(name), slot_pairs += static_cast<int64_t>(pairs.size());
      core::Rng pick(train::epoch_seed(cfg_.train.seed, -3));
      for (int64_t copy = 0; copy < d.dictionary_contexts; ++copy)
        for (size_t k = 0; k < name_zh.size(); ++k) {
          const size_t slot = slot_names[pick.below(slot_names.size())];
          const std::vector<size_t>& pairs = by_name[slot];
          const size_t p = pairs[pick.below(pairs.size())];
          auto [z, e] = data::swap_name(zh[p], en[p], name_zh[slot], name_en[slot], name_zh[k], name_en[k]);
          context_text.src.push_back(d.dictionary_reverse ? std::move(e) : std::move(z));
          context_text.tgt.push_back(d.dictionary_reverse ? std::move(z) : std::move(e));
        }
      log_note(log, fmt::format("data: {} names put into training sentences, {} sentences each ({} training pairs hold "
                                "one of {} names)", name_zh.size(), d.dictionary_contexts, slot_pairs, slot_names.size()));
    }
  }
  // ---- vocabularies: kept in the run directory, so a resumed run reuses them
  const std::string run = cfg_.train.run_dir;
  if (train::world().root()) fs::create_directories(run);
  TokenizerConfig& tok = cfg_.seq2seq.tokenizer;
  const bool have = fs::exists(fs::path(run) / tok.file_name(Side::kSource)) &&
                    fs::exists(fs::path(run) / tok.file_name(Side::kTarget));
  if (have) {
    src_ = tok.load(Side::kSource, run);
    tgt_ = tok.load(Side::kTarget, run);
    log_note(log, fmt::format("vocab: loaded from {}", run));
  } else {  // from the training text, each dictionary pair once
    std::vector<std::string> src_text = train_text.src, tgt_text = train_text.tgt;
    src_text.insert(src_text.end(), dict_text.src.begin(), dict_text.src.end());
    tgt_text.insert(tgt_text.end(), dict_text.tgt.begin(), dict_text.tgt.end());
    if (tok.unit == TokenUnit::kSpm && tok.joint) {
      src_text.insert(src_text.end(), tgt_text.begin(), tgt_text.end());
      src_ = tok.build(Side::kSource, src_text, run);
      tgt_ = tok.load(Side::kTarget, run);
    } else {
      src_ = tok.build(Side::kSource, src_text, run);
      tgt_ = tok.build(Side::kTarget, tgt_text, run);
    }
  }
  cfg_.seq2seq.src_vocab = src_->size();
  cfg_.seq2seq.tgt_vocab = tgt_->size();
  log_note(log, fmt::format("vocab: source {} / target {} ({})", src_->size(), tgt_->size(),
                        io::to_yaml(tok)["unit"].as<std::string>()));
  // ---- examples
  int64_t dropped = 0;
  train_ = encode_pairs(train_text, *src_, *tgt_, d.max_length, nullptr, &dropped);
  log_note(log, fmt::format("data: {} training pairs ({} longer than {} tokens or empty dropped)", train_.size(), dropped,
                        d.max_length));
  valid_ = encode_pairs(valid_text, *src_, *tgt_, d.max_length, &valid_text_, &dropped);
  log_note(log, fmt::format("data: {} validation pairs ({} dropped)", valid_.size(), dropped));
  if (held_out && train::world().root()) {  // the held-out pairs validation scores, for scoring runs elsewhere
    auto joined = [](const std::vector<std::string>& lines) {
      std::string text;
      for (const std::string& l : lines) text += l + "\n";
      return text;
    };
    io::write_file_atomic(fs::path(run) / "valid.src", joined(valid_text_.src));
    io::write_file_atomic(fs::path(run) / "valid.tgt", joined(valid_text_.tgt));
  }
  int64_t dict_dropped = 0, concat_dropped = 0;
  if (!dict_text.src.empty() || !concat_text.src.empty()) {
    // Groups of equal weight class (0 names, 1 other entries, 2 names in sentences, 3 joined
    // training pairs) and batching lengths, each in a fixed seeded order (the cycle begin_epoch
    // walks). Names are dict_text's first dict_names pairs.
    std::map<std::tuple<int, int64_t, size_t, size_t>, std::vector<int64_t>> groups;
    auto add = [&](const std::string& src, const std::string& tgt, int kind) {
      data::Example e{src_->encode(src), tgt_->encode(tgt)};
      if (e.src.empty() || e.tgt.empty() || static_cast<int>(e.src.size()) > d.max_length ||
          static_cast<int>(e.tgt.size()) > d.max_length) {
        ++(kind == 3 ? concat_dropped : dict_dropped);
        return;
      }
      groups[{kind, data::example_steps(e), e.tgt.size(), e.src.size()}].push_back(static_cast<int64_t>(dict_.size()));
      dict_.push_back(std::move(e));
    };
    for (size_t i = 0; i < dict_text.src.size(); ++i) add(dict_text.src[i], dict_text.tgt[i], i < dict_names ? 0 : 1);
    for (size_t i = 0; i < context_text.src.size(); ++i) add(context_text.src[i], context_text.tgt[i], 2);
    for (size_t i = 0; i < concat_text.src.size(); ++i) add(concat_text.src[i], concat_text.tgt[i], 3);
    const double weights[] = {d.dictionary_name_weight, d.dictionary_weight,
                              d.dictionary_context_weight / static_cast<double>(d.dictionary_contexts), 1.0};
    core::Rng order(train::epoch_seed(cfg_.train.seed, -1));
    for (auto& [key, members] : groups) {
      order.shuffle(members.begin(), members.end());
      dict_groups_.push_back({weights[std::get<0>(key)], std::move(members)});
    }
  }
  ENGRAM_CHECK(!train_.empty() && !valid_.empty(), "seq2seq data: no training or validation pairs left");
  if (d.guided_alignment > 0) {
    std::vector<data::Example> all = train_;
    all.insert(all.end(), dict_.begin(), dict_.end());
    const auto start = std::chrono::steady_clock::now();
    aligner_ = data::Ibm1::train(all, static_cast<int>(d.guided_alignment_iterations), d.guided_alignment_diagonal);
    log_note(log, fmt::format("data: guided alignment, IBM Model 1 ({} EM iterations, diagonal tension {}) over {} "
                              "pairs: {} token pairs seen together, {:.1f} s", d.guided_alignment_iterations,
                              d.guided_alignment_diagonal, all.size(), aligner_.pairs(),
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  }
  train::write_run_config(run, io::dump_config(cfg_));
  core::Rng init(cfg_.train.seed);
  model_ = std::make_unique<Seq2Seq>(cfg_.seq2seq, init);
  log_note(log, fmt::format("model: seq2seq {} attention ({}), {} {}x{} encoder, {} decoder layer(s), {} parameters",
                        io::to_yaml(cfg_.seq2seq)["attention"].as<std::string>(),
                        io::to_yaml(cfg_.seq2seq)["style"].as<std::string>(),
                        io::to_yaml(cfg_.seq2seq)["cell"].as<std::string>(), cfg_.seq2seq.encoder_layers,
                        cfg_.seq2seq.hidden, cfg_.seq2seq.decoder_layers, model_->params().numel()));
  // Joined pairs are the last of dict_ and of every epoch (group kind 3).
  const size_t joined = concat_text.src.size() - static_cast<size_t>(concat_dropped);
  if (!concat_text.src.empty())
    log_note(log, fmt::format("data: {} joined training pairs in each epoch ({} longer than {} tokens left out)", joined,
                              concat_dropped, d.max_length));
  begin_epoch(0, cfg_.train.seed);
  batches_ = plan_.size();
  if (!dict_text.src.empty()) {
    int64_t main_tokens = 0, dict_tokens = 0;
    for (size_t i = 0; i < epoch_examples_.size(); ++i)
      (i < train_.size() || i >= epoch_examples_.size() - joined ? main_tokens : dict_tokens) +=
          static_cast<int64_t>(epoch_examples_[i].tgt.size()) + 1;
    log_note(log, fmt::format("data: {} dictionary pairs ({} dropped), {} in each epoch (weights: names {}, others {}, "
                          "names in sentences {}): {:.1f}% of an epoch's {} target tokens", dict_.size() - joined, dict_dropped,
                          epoch_examples_.size() - train_.size() - joined, d.dictionary_name_weight, d.dictionary_weight,
                          d.dictionary_context_weight,
                          100.0 * dict_tokens / std::max<int64_t>(main_tokens + dict_tokens, 1), main_tokens + dict_tokens));
  }
}

std::vector<std::filesystem::path> Seq2SeqTask::checkpoint_files() const {
  const fs::path run = cfg_.train.run_dir;
  std::vector<std::filesystem::path> files;
  for (Side side : {Side::kSource, Side::kTarget}) {
    const fs::path f = run / cfg_.seq2seq.tokenizer.file_name(side);
    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);  // joint: one file
  }
  return files;
}

void Seq2SeqTask::begin_epoch(int epoch, uint64_t seed) {
  epoch_ = epoch;
  seed_ = seed;
  core::Rng rng(train::epoch_seed(seed, epoch));
  epoch_examples_ = train_;
  for (const DictGroup& g : dict_groups_) {
    const int64_t whole = static_cast<int64_t>(std::floor(g.weight));
    const double frac = g.weight - static_cast<double>(whole);
    for (int64_t r = 0; r < whole; ++r)
      for (int64_t i : g.members) epoch_examples_.push_back(dict_[static_cast<size_t>(i)]);
    if (frac > 0) {  // epoch e takes positions [e*c, e*c + c) of the group's cycle (mod its size)
      const int64_t n = static_cast<int64_t>(g.members.size());
      const int64_t c = std::min<int64_t>(n, static_cast<int64_t>(std::ceil(frac * static_cast<double>(n))));
      const int64_t start = (static_cast<int64_t>(epoch) % n) * c % n;
      for (int64_t k = 0; k < c; ++k) epoch_examples_.push_back(dict_[static_cast<size_t>(g.members[(start + k) % n])]);
    }
  }
  plan_ = data::plan_batches(epoch_examples_, {.max_tokens = cfg_.data.max_tokens, .max_sentences = cfg_.data.max_sentences},
                             &rng);
  // Every epoch holds the same lengths, so the same number of batches.
  ENGRAM_CHECK(batches_ == 0 || plan_.size() == batches_, "seq2seq: epoch {} has {} batches, epoch 0 had {}", epoch,
               plan_.size(), batches_);
}

train::BatchResult Seq2SeqTask::train_batch(int64_t index) {
  ENGRAM_CHECK(index >= 0 && static_cast<size_t>(index) < plan_.size(), "seq2seq: batch {} of {}", index, plan_.size());
  // This rank's shard of the batch (the whole batch with one rank); the loss is a mean over the
  // shard's target tokens, scaled to the share of the whole batch's tokens the shard holds.
  const std::vector<int64_t>& all = plan_[index];
  const auto [lo, hi] = train::shard_range(static_cast<int64_t>(all.size()), shard());
  if (lo == hi) return {0, 0};
  int64_t batch_tokens = 0;
  for (int64_t i : all) batch_tokens += static_cast<int64_t>(epoch_examples_[static_cast<size_t>(i)].tgt.size()) + 1;  // + <eos>
  const std::vector<int64_t> mine(all.begin() + lo, all.begin() + hi);
  const data::Batch batch = data::collate(epoch_examples_, mine);
  // Dropout masks are a pure function of (seed, epoch, batch): a resumed run draws the same ones.
  core::Rng dropout(train::shard_seed(train::batch_seed(seed_, epoch_, index), shard()));
  graph_.reset();
  AlignmentGuide guide;
  if (cfg_.data.guided_alignment > 0) {  // row t*B + b: the posterior of target token t of column b
    const int64_t b = batch.batch_size, s = batch.src_steps;
    guide.weight = static_cast<float>(cfg_.data.guided_alignment);
    guide.rows.assign(static_cast<size_t>(batch.tgt_steps * b * s), 0.0f);
    for (int64_t c = 0; c < b; ++c) {
      const data::Example& e = epoch_examples_[static_cast<size_t>(mine[static_cast<size_t>(c)])];
      const std::vector<float> post = aligner_.posterior(e.src, e.tgt);  // [n, S_c]
      for (size_t t = 0; t < e.tgt.size(); ++t)
        std::copy_n(post.begin() + static_cast<int64_t>(t * e.src.size()), e.src.size(),
                    guide.rows.begin() + (static_cast<int64_t>(t) * b + c) * s);
    }
    // The batch's guided rows (every target token but <eos>), in this shard's share: the loss
    // below is scaled by tokens / batch_tokens when the shard is not the whole batch.
    int64_t shard_tokens = 0;
    for (int32_t n : batch.tgt_len) shard_tokens += n;
    guide.norm = static_cast<double>(batch_tokens - static_cast<int64_t>(all.size())) *
                 static_cast<double>(shard_tokens) / static_cast<double>(batch_tokens);
  }
  Var loss = model_->loss(graph_, batch, &dropout, cfg_.seq2seq.label_smoothing, &guide);
  int64_t tokens = 0;
  for (int32_t n : batch.tgt_len) tokens += n;
  if (hi - lo < static_cast<int64_t>(all.size())) {
    ENGRAM_CHECK(tokens <= batch_tokens, "seq2seq: shard of {} tokens in a batch of {}", tokens, batch_tokens);
    graph_.backward(core::scale(loss, static_cast<float>(tokens) / static_cast<float>(batch_tokens)));
  } else {
    graph_.backward(loss);
  }
  return {static_cast<double>(loss.data()[0]) * tokens, tokens};
}

train::Metrics Seq2SeqTask::validate() {
  // Dev perplexity: teacher-forced NLL without label smoothing, summed over target tokens.
  core::Graph g(false);
  double nll = 0;
  int64_t tokens = 0;
  for (const auto& idx : data::plan_batches(valid_, {.max_tokens = cfg_.data.max_tokens, .shuffle = false}, nullptr)) {
    const data::Batch batch = data::collate(valid_, idx);
    g.reset();
    Var loss = core::cross_entropy(model_->logits(g, batch, nullptr), batch.tgt_out,
                                   {.ignore_index = data::kPadId, .mean = false});
    nll += loss.data()[0];
    for (int32_t n : batch.tgt_len) tokens += n;
  }
  // Greedy BLEU and exact match on (up to) bleu_sentences pairs.
  const size_t n = std::min(valid_text_.src.size(), static_cast<size_t>(cfg_.data.bleu_sentences));
  std::vector<std::string> srcs(valid_text_.src.begin(), valid_text_.src.begin() + n);
  std::vector<std::string> refs(valid_text_.tgt.begin(), valid_text_.tgt.begin() + n);
  TranslateOptions o;
  o.batch_size = cfg_.data.decode_batch;
  std::vector<std::string> hyps;
  for (const Translation& t : translate_lines(*model_, *src_, *tgt_, srcs, o)) hyps.push_back(t.text());
  eval::BleuOptions bo;
  bo.lowercase = cfg_.seq2seq.tokenizer.lowercase;
  train::Metrics m;
  m["loss"] = tokens ? nll / tokens : 0.0;
  m["ppl"] = std::exp(std::min(m["loss"], 50.0));
  m["bleu"] = eval::corpus_bleu(hyps, {refs}, bo).score;
  m["acc"] = eval::exact_match(hyps, refs, cfg_.seq2seq.tokenizer.lowercase);
  return m;
}

}  // namespace engram::models
