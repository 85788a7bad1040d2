// PointerGenerator: finite-difference checks of the whole teacher-forced loss (copy on / off,
// coverage on / off / switched off for the first phase, LSTM and GRU); the step model against
// teacher forcing over the extended vocabulary; the extended-vocabulary numbering; the
// checkpoint round trip through the registry; bad input.
// Dims: B batch, S source len, T target steps, V vocabulary, X extra ids.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "engram/core/grad_check.h"
#include "engram/core/ops.h"
#include "engram/data/batching.h"
#include "engram/data/text.h"
#include "engram/data/vocab.h"
#include "engram/decode/ensemble.h"
#include "engram/io/checkpoint.h"
#include "engram/models/pointer_generator/eval.h"
#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/registry.h"
#include "engram/nn/grad_targets.h"
#include "data/test_util.h"

namespace engram::models {
namespace {

using core::Graph;
using core::Var;
using data::testing::error_of;
using data::testing::TempDir;

struct Variant {
  std::string name;
  bool copy, coverage, coverage_active = true;
  PgCell cell = PgCell::kLstm;
  bool source_features = false;
};

std::vector<Variant> variants() {
  return {{"copy/coverage/lstm", true, true},
          {"copy/no-coverage/gru", true, false, true, PgCell::kGru},
          {"copy/coverage-inactive/lstm", true, true, false},
          {"no-copy/coverage/gru", false, true, true, PgCell::kGru},
          {"no-copy/no-coverage/lstm", false, false},
          {"copy/coverage/features/lstm", true, true, true, PgCell::kLstm, true},
          {"no-copy/no-coverage/features/gru", false, false, true, PgCell::kGru, true}};
}

constexpr int kV = 8;  // 4 specials + ids 4..7; extended ids start at 8

PointerGeneratorConfig tiny_config(const Variant& v) {
  PointerGeneratorConfig c;
  c.vocab = kV;
  c.embed_dim = 3;
  c.hidden = 4;
  c.cell = v.cell;
  c.copy = v.copy;
  c.coverage = v.coverage;
  c.coverage_weight = 0.7f;
  c.source_features = v.source_features;
  return c;
}

// Two examples of different lengths in extended ids: sentence 0 holds OOVs 8 and 9 (X = 2), and
// its target copies both; sentence 1 holds 8 only (its own first OOV) and copies it.
data::Batch tiny_batch() {
  std::vector<data::Example> ex = {{{4, 8, 5, 9}, {8, 6, 9}}, {{5, 8, 4}, {8, 7}}};
  std::vector<int64_t> idx = {0, 1};
  return data::collate(ex, idx);
}

Var flat(Var v) { return core::reshape(v, {static_cast<int>(v.numel())}); }

TEST(PointerGeneratorGradCheck, WholeLossEveryVariant) {
  std::printf("%-30s %12s %8s  %s\n", "pointer-generator variant", "worst err", "checked", "worst element");
  for (const Variant& v : variants()) {
    core::Rng rng(3);
    PointerGenerator model(tiny_config(v), rng);
    const data::Batch batch = tiny_batch();
    const PgForwardOptions o{.coverage_active = v.coverage_active};
    auto f = [&](Graph& g) {
      PgLoss l = model.loss(g, batch, o);
      PgForward fw = model.forward(g, batch, o);
      std::vector<Var> parts = {core::reshape(l.total, {1}), fw.log_p, flat(fw.alpha)};
      if (fw.coverage_loss.valid()) parts.push_back(fw.coverage_loss);
      if (fw.p_gen.valid()) parts.push_back(fw.p_gen);
      return core::concat(parts, 0);
    };
    core::GradCheckResult r = core::grad_check(f, nn::grad_targets(model.params()), {.max_elements = 24});
    std::printf("%-30s %12.3e %8lld  %s\n", v.name.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << v.name;
    EXPECT_LE(r.max_error, 1e-2) << v.name << ": " << r.worst;
  }
}

// Source feature rows by hand (model.h): row 6 n + o, n the count bucket of the token's extended id
// in its own article (1, 2, 3, 4-5, 6+), o = 0 for a vocabulary word, else 1 + min(k, 4) for the
// k-th OOV; padding reads row 0. Two articles, time-major, V = 8.
TEST(PointerGenerator, SourceFeatureIdsByHand) {
  // article 0: 4 8 4 9 8 4 4 4 4 (len 9: id 4 six times, OOV 8 twice, OOV 9 once)
  // article 1: 13 5 13 13 (len 4: OOV 13 = the 6th OOV three times, 5 once), then padding
  const std::vector<int32_t> a0 = {4, 8, 4, 9, 8, 4, 4, 4, 4}, a1 = {13, 5, 13, 13, 0, 0, 0, 0, 0};
  std::vector<int32_t> ids;
  for (int i = 0; i < 9; ++i) ids.insert(ids.end(), {a0[i], a1[i]});
  const std::vector<int32_t> lengths = {9, 4};
  const std::vector<int32_t> got = PointerGenerator::source_feature_ids(ids, 9, 2, lengths, kV);
  const std::vector<int32_t> want0 = {6 * 4, 6 * 1 + 1, 6 * 4, 0 + 2, 6 * 1 + 1, 6 * 4, 6 * 4, 6 * 4, 6 * 4};
  const std::vector<int32_t> want1 = {6 * 2 + 5, 0, 6 * 2 + 5, 6 * 2 + 5, 0, 0, 0, 0, 0};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(got[2 * i], want0[i]) << "article 0, position " << i;
    EXPECT_EQ(got[2 * i + 1], want1[i]) << "article 1, position " << i;
  }
  // Counts 4 and 5 share a bucket; every row is inside the table.
  const std::vector<int32_t> five = {4, 4, 4, 4, 4}, four = {4, 4, 4, 4};
  EXPECT_EQ(PointerGenerator::source_feature_ids(five, 5, 1, std::vector<int32_t>{5}, kV)[0], 6 * 3);
  EXPECT_EQ(PointerGenerator::source_feature_ids(four, 4, 1, std::vector<int32_t>{4}, kV)[0], 6 * 3);
  for (int32_t r : got) EXPECT_LT(r, PointerGenerator::kSourceFeatureRows);
  EXPECT_NE(error_of([&] { PointerGenerator::source_feature_ids(ids, 9, 2, std::vector<int32_t>{9, 10}, kV); })
                .find("outside"),
            std::string::npos);
}

// The loss is the mean NLL plus λ times the mean coverage loss, and the coverage loss of a
// step is Σ_i min(α_ti, cov_ti) recomputed here from the α the forward returns.
TEST(PointerGenerator, LossIsMeanNllPlusWeightedCoverage) {
  core::Rng rng(5);
  PointerGenerator model(tiny_config(variants()[0]), rng);
  const data::Batch batch = tiny_batch();
  Graph g(false);
  const PgForward f = model.forward(g, batch);
  const PgLoss l = model.loss(g, batch);
  const int b = f.batch, s = f.src_len;
  ASSERT_EQ(f.tokens, 4 + 3);  // 3 + 1 and 2 + 1 target steps with <eos>
  double nll = 0, cov_loss = 0;
  std::vector<double> cov(b * s, 0.0);
  for (int t = 0; t < f.steps; ++t)
    for (int j = 0; j < b; ++j) {
      const int r = t * b + j;
      double step = 0;
      for (int i = 0; i < s; ++i) {
        const double a = f.alpha.value().at(r, i);
        step += std::min(a, cov[j * s + i]);
        cov[j * s + i] += a;
      }
      EXPECT_NEAR(step, f.coverage_loss.data()[r], 1e-5) << "row " << r;
      nll -= f.weight[r] * f.log_p.data()[r];
      cov_loss += f.weight[r] * step;
    }
  EXPECT_NEAR(l.nll_sum, nll, 1e-4);
  EXPECT_NEAR(l.coverage_sum, cov_loss, 1e-4);
  EXPECT_NEAR(l.total.data()[0], (nll + 0.7 * cov_loss) / f.tokens, 1e-5);
  EXPECT_GT(cov_loss, 0.0);  // from the second step on, attention overlaps what came before
}

// Stepping the search interface with the gold previous tokens (extended ids) gives the
// teacher-forced log P(target) and α; rows are normalised over V + X; reorder() moves rows
// across sentences (memory, extended ids and coverage with them).
TEST(PointerGeneratorStepModel, StepsMatchTeacherForcing) {
  for (const Variant& v : variants()) {
    PointerGeneratorConfig cfg = tiny_config(v);
    cfg.embed_dim = 6;
    cfg.hidden = 8;
    core::Rng rng(7);
    PointerGenerator model(cfg, rng);
    const data::Batch batch = tiny_batch();
    const int b = 2, steps = static_cast<int>(batch.tgt_steps), s = static_cast<int>(batch.src_steps);
    Graph tf(false);
    const PgForward ref = model.forward(tf, batch, {.coverage_active = v.coverage_active});
    const PgStepModel stepper(model, {.coverage_active = v.coverage_active});
    decode::SourceBatch src{.batch = b, .steps = s, .ids = batch.src, .lengths = batch.src_len, .features = {}};
    Graph g(false);
    auto st = stepper.encode(g, src);
    const std::vector<int32_t> swap = {1, 0};
    stepper.reorder(*st, swap);
    for (int t = 0; t < steps; ++t) {
      std::vector<int32_t> prev = {batch.tgt_in_at(t, 1), batch.tgt_in_at(t, 0)};
      g.reset();
      decode::StepOutput out = stepper.step(g, *st, prev);
      ASSERT_EQ(out.log_probs.shape, (core::Shape{b, v.copy ? kV + 2 : kV})) << v.name;
      ASSERT_NE(out.alignment.data, nullptr);
      for (int r = 0; r < b; ++r) {
        const int j = 1 - r, row = t * b + j;
        if (t >= batch.tgt_len[j]) continue;
        double total = 0;
        for (int k = 0; k < out.log_probs.shape[1]; ++k) total += std::exp(double{out.log_probs.at(r, k)});
        // <pad> and <go> are masked in decoding: their share of the teacher-forced mass is missing.
        EXPECT_LE(total, 1.0 + 1e-5) << v.name;
        const int32_t want = batch.tgt_out_at(t, j);
        const int32_t col = v.copy ? want : (want < kV ? want : data::kUnkId);
        EXPECT_NEAR(out.log_probs.at(r, col), ref.log_p.data()[row], 1e-5) << v.name << " step " << t << " row " << r;
        for (int i = 0; i < s; ++i)
          EXPECT_NEAR(out.alignment.at(r, i), ref.alpha.value().at(row, i), 1e-6) << v.name << " step " << t;
      }
      // Sentence 1 (row 0 after the swap) holds no id 9: with copy it can never be produced.
      if (v.copy) {
        EXPECT_EQ(out.log_probs.at(0, 9), -INFINITY) << v.name;
      }
    }
  }
}

// The step's own mask: <pad> and <go> never, the source's OOVs copyable, an id outside the
// source's extended range refused (a minimum length is the shared search's: tests/decode).
TEST(PointerGeneratorStepModel, MasksPadGoAndForeignExtraIds) {
  core::Rng rng(2);
  PointerGenerator model(tiny_config(variants()[0]), rng);
  const PgStepModel stepper(model, {});
  Graph g(false);
  auto st = stepper.encode(g, decode::SourceBatch::from_ids({{4, 8, 5}}));
  for (int t = 0; t < 3; ++t) {
    g.reset();
    const std::vector<int32_t> prev = {t == 0 ? data::kGoId : 8};  // an extended id as input: read as <unk>
    decode::StepOutput out = stepper.step(g, *st, prev);
    EXPECT_GT(out.log_probs.at(0, data::kEosId), -INFINITY) << "step " << t;
    EXPECT_EQ(out.log_probs.at(0, data::kPadId), -INFINITY);
    EXPECT_EQ(out.log_probs.at(0, data::kGoId), -INFINITY);
    EXPECT_GT(out.log_probs.at(0, data::kUnkId), -INFINITY);  // <unk> is a word like any other
    EXPECT_GT(out.log_probs.at(0, 8), -INFINITY);  // the source's OOV can be copied
  }
  // block_unk: <unk> can no longer be chosen; nothing else changes.
  const PgStepModel blocking(model, {.block_unk = true});
  auto plain = stepper.encode(g, decode::SourceBatch::from_ids({{4, 8, 5}}));
  auto blocked = blocking.encode(g, decode::SourceBatch::from_ids({{4, 8, 5}}));
  g.reset();
  const std::vector<int32_t> go = {data::kGoId};
  const decode::StepOutput a = stepper.step(g, *plain, go), b = blocking.step(g, *blocked, go);
  EXPECT_EQ(b.log_probs.at(0, data::kUnkId), -INFINITY);
  for (int c = 0; c < a.log_probs.shape[1]; ++c)
    if (c != data::kUnkId) { EXPECT_EQ(a.log_probs.at(0, c), b.log_probs.at(0, c)) << "class " << c; }
  EXPECT_NE(error_of([&] { stepper.encode(g, decode::SourceBatch::from_ids({{4, 8 + 3}})); }).find("outside"),
            std::string::npos);
}

// oov_bonus adds exactly its value to the extra ids a row's source holds; a row's foreign extra id
// stays −inf and every vocabulary column is unchanged.
TEST(PointerGeneratorStepModel, OovBonusRaisesOnlyTheSourcesOovs) {
  core::Rng rng(4);
  PointerGenerator model(tiny_config(variants()[0]), rng);
  const PgStepModel plain(model, {}), bonus(model, {.oov_bonus = 1.5f});
  Graph g(false);
  const auto src = decode::SourceBatch::from_ids({{4, 8, 5, 9}, {5, 8, 4}});  // row 1 holds 8, not 9
  auto sp = plain.encode(g, src);
  auto sb = bonus.encode(g, src);
  for (int t = 0; t < 2; ++t) {
    g.reset();
    const std::vector<int32_t> prev = t == 0 ? std::vector<int32_t>{data::kGoId, data::kGoId} : std::vector<int32_t>{9, 8};
    const decode::StepOutput a = plain.step(g, *sp, prev);
    const decode::StepOutput b = bonus.step(g, *sb, prev);
    ASSERT_EQ(a.log_probs.shape, (core::Shape{2, kV + 2}));
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < kV + 2; ++c) {
        const float want = c >= kV && a.log_probs.at(r, c) > -INFINITY ? a.log_probs.at(r, c) + 1.5f : a.log_probs.at(r, c);
        EXPECT_FLOAT_EQ(b.log_probs.at(r, c), want) << "step " << t << " row " << r << " class " << c;
      }
    EXPECT_EQ(b.log_probs.at(1, 9), -INFINITY);
    EXPECT_GT(b.log_probs.at(0, 9), -INFINITY);
  }
}

// The extended vocabulary of one example, on a word vocabulary built from two lines.
TEST(PointerGeneratorText, ExtendedVocabularyNumbering) {
  TempDir dir;
  PointerGeneratorConfig cfg;
  cfg.vocab_size = data::kNumSpecial + 3;  // the, met, in
  const TextCodec codec = cfg.build({"the the the met met in in", "the met in"}, dir.file(""));
  ASSERT_EQ(codec.size(), 7);
  const int v = codec.size();
  const ExtendedSource s = extend_source(codec, "the Zorvak met Belima in Zorvak", 0);
  EXPECT_EQ(s.oovs, (std::vector<std::string>{"Zorvak", "Belima"}));
  EXPECT_EQ(s.ids, (std::vector<int32_t>{codec.id("the"), v, codec.id("met"), v + 1, codec.id("in"), v}));
  // Target: vocabulary words, copyable OOVs, and an OOV not in the source (<unk>).
  EXPECT_EQ(extend_target(codec, {"Belima", "met", "Quux", "Zorvak"}, s),
            (std::vector<int32_t>{v + 1, codec.id("met"), data::kUnkId, v}));
  EXPECT_EQ(output_tokens(codec, {v + 1, codec.id("met"), v, data::kEosId, v}, s),
            (std::vector<std::string>{"Belima", "met", "Zorvak"}));
  EXPECT_EQ(codec.join({"Belima", "met", "Zorvak"}), "Belima met Zorvak");
  EXPECT_NE(error_of([&] { output_tokens(codec, {v + 2}, s); }).find("outside the extended vocabulary"),
            std::string::npos);
  EXPECT_EQ(extend_source(codec, "the Zorvak met Belima", 2).ids, (std::vector<int32_t>{codec.id("the"), v}));
}

// The scores of two hand-made summaries, every figure computed by hand (see the comments).
TEST(PointerGeneratorEval, ScoresByHand) {
  TempDir dir;
  PointerGeneratorConfig cfg;
  cfg.vocab_size = data::kNumSpecial + 3;
  const TextCodec codec = cfg.build({"the the the met met in in", "the met in"}, dir.file(""));
  const int32_t v = codec.size(), met = codec.id("met");
  std::vector<Summary> sums(2);
  // 1: article "the Zorvak met Belima in" (OOVs Zorvak = V, Belima = V+1); output "Zorvak met
  // Zorvak" (+ <eos>) with p_gen 0.1, 0.9, 0.2 (0.95): tokens 1 and 3 copied, the third repeats
  // the first. Reference "Zorvak met Belima": both OOVs are in the article; Zorvak is reproduced
  // (clipped to its one reference count), Belima is not.
  sums[0].source = extend_source(codec, "the Zorvak met Belima in");
  sums[0].ids = {v, met, v};
  sums[0].finished = true;
  sums[0].tokens = output_tokens(codec, sums[0].ids, sums[0].source);
  sums[0].text = codec.join(sums[0].tokens);
  sums[0].p_gen = {0.1f, 0.9f, 0.2f, 0.95f};
  // 2: article "in the met" (no OOVs); output "met" generated (p_gen 0.7); reference "the met".
  sums[1].source = extend_source(codec, "in the met");
  sums[1].ids = {met};
  sums[1].tokens = {"met"};
  sums[1].text = "met";
  sums[1].p_gen = {0.7f};
  const PgScores s = score_summaries(codec, sums, {"Zorvak met Belima", "the met"});
  EXPECT_EQ(sums[0].text, "Zorvak met Zorvak");
  EXPECT_EQ(s.pairs, 2);
  EXPECT_EQ(s.output_tokens, 4);   // <eos> not counted
  EXPECT_EQ(s.copied_tokens, 2);   // p_gen 0.1 and 0.2
  EXPECT_DOUBLE_EQ(s.copy_share, 0.5);
  EXPECT_EQ(s.oov_reference, 2);   // Zorvak, Belima
  EXPECT_EQ(s.oov_reproduced, 1);  // Zorvak
  EXPECT_DOUBLE_EQ(s.oov_copy_rate, 0.5);
  ASSERT_EQ(s.reproduced_oovs.size(), 2u);
  ASSERT_EQ(s.missed_oovs.size(), 2u);
  EXPECT_EQ(s.reproduced_oovs[0], (std::vector<std::string>{"Zorvak"}));
  EXPECT_EQ(s.missed_oovs[0], (std::vector<std::string>{"Belima"}));
  EXPECT_TRUE(s.missed_oovs[1].empty());
  const std::vector<data::SummaryPair> pairs = {{"the Zorvak met Belima in", {"Zorvak met Belima"}},
                                                {"in the met", {"the met"}}};
  const std::string missed = pg_missed_examples(pairs, sums, s, 5);
  EXPECT_NE(missed.find("- reference: Zorvak met Belima\n  output:    Zorvak met Zorvak\n  missed:    Belima\n"),
            std::string::npos)
      << missed;
  EXPECT_EQ(missed.find("the met"), std::string::npos) << "a pair without a missed word is shown:\n" << missed;
  EXPECT_EQ(pg_missed_examples(pairs, sums, s, 0), "");
  EXPECT_NE(pg_copy_examples(pairs, sums, s, 5).find("  copied:    Zorvak\n"), std::string::npos);
  EXPECT_EQ(s.repeated_tokens, 1);
  EXPECT_DOUBLE_EQ(s.repeat_share, 0.25);
  // ROUGE-1 F1: pair 1 P = R = 2/3 (zorvak clipped to 1, met); pair 2 P = 1, R = 1/2, F = 2/3.
  EXPECT_NEAR(s.rouge1, 100.0 * 2 / 3, 1e-9);
  // ROUGE-2 F1: pair 1 shares "zorvak met" of 2 bigrams each (F = 1/2); pair 2 has no bigram (0).
  EXPECT_NEAR(s.rouge2, 25.0, 1e-9);
  // ROUGE-L F1: LCS 2 of 3 and 3 (2/3); LCS 1, P = 1, R = 1/2 (2/3).
  EXPECT_NEAR(s.rouge_l, 100.0 * 2 / 3, 1e-9);
  EXPECT_NE(pg_scores_table(s).find("| 2 | 66.67 | 25.00 | 66.67 | 66.67 | 50.0% (2/4) | 50.0% (1/2) | 25.0% (1/4) | 0.0% (0/1) | 0.0% (0/1) |"),
            std::string::npos)
      << pg_scores_table(s);
  EXPECT_NE(error_of([&] { score_summaries(codec, sums, {"one reference"}); }).find("2 summaries for 1 references"),
            std::string::npos);
}

// ROUGE-Lsum on the output's sentences, the stemmer, repeated trigrams of outputs and
// references, and the reproduced OOV words, each figure computed by hand (see the comments).
TEST(PointerGeneratorEval, SentencesStemmerAndTrigramsByHand) {
  TempDir dir;
  PointerGeneratorConfig cfg;
  cfg.vocab_size = data::kNumSpecial + 3;  // the, met, in
  const TextCodec codec = cfg.build({"the the the met met in in", "the met in"}, dir.file(""));
  auto summary = [&](const std::string& source, const std::string& text) {
    Summary s;
    s.source = extend_source(codec, source);
    s.tokens = codec.tokens(text);
    s.ids.assign(s.tokens.size(), data::kUnkId);  // the ids do not enter these figures
    s.p_gen.assign(s.tokens.size(), 0.9f);
    s.text = text;
    return s;
  };
  // A: the two reference sentences in the other order. Source OOVs: Zorvak, said, they, talks.
  const Summary a = summary("Zorvak said they met in talks", "They met in talks. Zorvak meets ministers.");
  const std::vector<std::string> ref_a = {"Zorvak meets ministers.", "They met in talks."};
  const PgScores sa = score_summaries(codec, {a}, {ref_a}, {});
  // ROUGE tokens: hyp "they met in talks zorvak meets ministers", ref "zorvak meets ministers
  // they met in talks": every unigram shared (1); bigrams 5 of 6 each (all but talks-zorvak /
  // ministers-they); one LCS over the whole text "they met in talks" = 4 of 7; ROUGE-Lsum: the
  // output splits into "They met in talks." and "Zorvak meets ministers.", each reference
  // sentence's LCS covers it whole: 7 hits of 7.
  EXPECT_NEAR(sa.rouge.rouge1.f1, 1.0, 1e-12);
  EXPECT_NEAR(sa.rouge.rouge2.precision, 5.0 / 6, 1e-12);
  EXPECT_NEAR(sa.rouge.rouge2.recall, 5.0 / 6, 1e-12);
  EXPECT_NEAR(sa.rouge_l, 100.0 * 4 / 7, 1e-9);
  EXPECT_NEAR(sa.rouge_lsum, 100.0, 1e-9);
  // Word tokens: 7 in either text, 5 trigrams each, none repeated. The one reference token
  // outside the vocabulary that the source holds is Zorvak ("They" and "talks." are not the
  // source's "they" and "talks"); the output has it.
  EXPECT_EQ(sa.output_trigrams.total, 5);
  EXPECT_EQ(sa.output_trigrams.repeated, 0);
  EXPECT_EQ(sa.reference_trigrams.total, 5);
  EXPECT_EQ(sa.oov_reference, 1);
  EXPECT_EQ(sa.oov_reproduced, 1);
  ASSERT_EQ(sa.reproduced_oovs.size(), 1u);
  EXPECT_EQ(sa.reproduced_oovs[0], (std::vector<std::string>{"Zorvak"}));
  // B: a repeated output, and words that only match when stemmed. Source OOVs: meetings, went, on.
  const Summary b = summary("meetings went on", "meetings went on meetings went on");
  const std::vector<std::string> ref_b = {"meeting went on"};
  const PgScores plain = score_summaries(codec, {b}, {ref_b}, {});
  const PgScores stem = score_summaries(codec, {b}, {ref_b}, {.use_stemmer = true});
  // Output trigrams: (meetings went on), (went on meetings), (on meetings went), (meetings went
  // on) again: 1 of 4 repeated; the reference's one trigram is not.
  EXPECT_EQ(plain.output_trigrams.total, 4);
  EXPECT_EQ(plain.output_trigrams.repeated, 1);
  EXPECT_DOUBLE_EQ(plain.output_trigrams.rate, 0.25);
  EXPECT_EQ(plain.reference_trigrams.total, 1);
  EXPECT_EQ(plain.reference_trigrams.repeated, 0);
  // ROUGE-1 without the stemmer: "went", "on" shared, P = 2/6, R = 2/3, F = 4/9; with it
  // (Porter: meetings -> meet, meeting -> meet) 3 shared, P = 1/2, R = 1, F = 2/3.
  EXPECT_FALSE(plain.stemmed);
  EXPECT_TRUE(stem.stemmed);
  EXPECT_NEAR(plain.rouge1, 100.0 * 4 / 9, 1e-9);
  EXPECT_NEAR(stem.rouge1, 100.0 * 2 / 3, 1e-9);
  EXPECT_NEAR(stem.rouge.rouge1.precision, 0.5, 1e-12);
  EXPECT_NEAR(stem.rouge.rouge1.recall, 1.0, 1e-12);
  // OOV-in-source reference tokens: went, on ("meeting" is not in the source); both reproduced.
  EXPECT_EQ(plain.oov_reference, 2);
  EXPECT_EQ(plain.oov_reproduced, 2);
  EXPECT_EQ(plain.reproduced_oovs[0], (std::vector<std::string>{"went", "on"}));
  // Both pairs: means of the per-pair figures, trigram counts pooled.
  const PgScores both = score_summaries(codec, {a, b}, {ref_a, ref_b}, {});
  EXPECT_NEAR(both.rouge1, 100.0 * (1.0 + 4.0 / 9) / 2, 1e-9);
  EXPECT_EQ(both.output_trigrams.total, 9);
  EXPECT_EQ(both.output_trigrams.repeated, 1);
  EXPECT_NE(pg_rouge_table(stem).find("| ROUGE-1 | 66.67 | 50.00 | 100.00 |"), std::string::npos) << pg_rouge_table(stem);
  EXPECT_NE(pg_rouge_table(stem).find("stem: yes"), std::string::npos);
  EXPECT_NE(error_of([&] { score_summaries(codec, {a, b}, {ref_a}, {}); }).find("2 summaries for 1 references"),
            std::string::npos);
}

// A summary's attention and p_gen (recorded by the search, greedy and beam) are those of the full
// teacher-forced forward of its output, row by row (<eos> last when finished); without
// options.explain the summaries are the same, with neither.
TEST(PointerGeneratorSummarize, AttentionAndPGenAreTheFullForwardsOfTheOutput) {
  TempDir dir;
  PointerGeneratorConfig cfg;
  cfg.vocab_size = data::kNumSpecial + 3;
  const TextCodec codec = cfg.build({"the the the met met in in", "the met in"}, dir.file(""));
  cfg.vocab = codec.size();
  cfg.embed_dim = 4;
  cfg.hidden = 6;
  core::Rng rng(5);
  const PointerGenerator model(cfg, rng);
  const std::vector<std::string> lines = {"the Zorvak met Belima in", "in the met Zorvak", "met met the"};
  SummarizeOptions o;
  o.search.max_length = 6;
  o.search.beam = 3;
  const std::vector<Summary> beam = summarize_lines(model, codec, lines, o);
  o.search.beam = 1;
  const std::vector<Summary> sums = summarize_lines(model, codec, lines, o);
  std::vector<const Summary*> all;
  for (const std::vector<Summary>* v : {&sums, &beam})
    for (const Summary& s : *v) all.push_back(&s);
  for (size_t k = 0; k < all.size(); ++k) {
    const Summary& s = *all[k];
    std::vector<int32_t> tgt = s.ids;
    if (s.finished) tgt.push_back(data::kEosId);
    const data::Batch b = data::collate({{s.source.ids, s.ids}}, std::vector<int64_t>{0});
    Graph g(false);
    const PgForward f = model.forward(g, b, {});
    const size_t rows = tgt.size(), len = s.source.ids.size();
    ASSERT_EQ(s.p_gen.size(), rows) << k;
    ASSERT_EQ(s.attention.size(), rows * len) << k;
    ASSERT_TRUE(f.p_gen.valid());
    for (size_t t = 0; t < rows; ++t) {
      EXPECT_NEAR(s.p_gen[t], f.p_gen.data()[t], 1e-6) << "summary " << k << " row " << t;
      for (size_t i = 0; i < len; ++i)
        EXPECT_NEAR(s.attention[t * len + i], f.alpha.data()[t * b.src_steps + i], 1e-6) << k << " " << t << " " << i;
    }
  }
  // Without the teacher-forced pass: the same summaries, without attention and p_gen.
  o.explain = false;
  const std::vector<Summary> text = summarize_lines(model, codec, lines, o);
  ASSERT_EQ(text.size(), sums.size());
  for (size_t k = 0; k < sums.size(); ++k) {
    EXPECT_EQ(text[k].ids, sums[k].ids) << k;
    EXPECT_EQ(text[k].text, sums[k].text) << k;
    EXPECT_EQ(text[k].finished, sums[k].finished) << k;
    EXPECT_TRUE(text[k].attention.empty() && text[k].p_gen.empty()) << k;
  }
}

// An ensemble of a model with itself decodes exactly as the model alone (the mean of equal
// probabilities); with another model it decodes (beam and greedy) to outputs over the same
// extended vocabulary; members with another vocabulary or another `copy` setting are refused.
TEST(PointerGeneratorEnsemble, DecodesAsOneModelAndRefusesMismatchedMembers) {
  TempDir dir, other_dir;
  PointerGeneratorConfig cfg;
  cfg.vocab_size = data::kNumSpecial + 3;
  const TextCodec codec = cfg.build({"the the the met met in in", "the met in"}, dir.file(""));
  const TextCodec other = cfg.build({"a a a b b c c", "a b c"}, other_dir.file(""));
  ASSERT_TRUE(same_vocabulary(codec, codec));
  ASSERT_FALSE(same_vocabulary(codec, other));
  cfg.vocab = codec.size();
  cfg.embed_dim = 4;
  cfg.hidden = 6;
  core::Rng r1(1), r2(2), r3(3);
  const PointerGenerator a(cfg, r1), b(cfg, r2);
  PointerGeneratorConfig no_copy = cfg;
  no_copy.copy = false;
  const PointerGenerator c(no_copy, r3);
  const std::vector<std::string> lines = {"the Zorvak met Belima in", "in the met Zorvak", "met met the"};
  for (const int beam : {1, 3}) {
    SummarizeOptions alone;
    alone.search.beam = beam;
    alone.search.max_length = 6;
    const std::vector<Summary> want = summarize_lines(a, codec, lines, alone);
    const std::vector<Summary> got = summarize_lines(ModelSet<PointerGenerator>({&a, &a}, nullptr), codec, lines, alone);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].ids, want[i].ids) << "beam " << beam << " line " << i;
      EXPECT_EQ(got[i].p_gen, want[i].p_gen) << "beam " << beam << " line " << i;
    }
    for (const Summary& s : summarize_lines(ModelSet<PointerGenerator>({&a, &b}, nullptr), codec, lines, alone))
      for (int32_t id : s.ids) EXPECT_LT(id, codec.size() + static_cast<int32_t>(s.source.oovs.size()));
  }
  PointerGeneratorConfig bigger = cfg;
  bigger.vocab = cfg.vocab + 1;
  core::Rng r4(4);
  const PointerGenerator d(bigger, r4);
  const auto bad = [&](std::vector<const PointerGenerator*> members) {
    return error_of([&] { summarize_lines(ModelSet<PointerGenerator>(members, nullptr), codec, lines, {}); });
  };
  EXPECT_NE(bad({&a, &d}).find("member 2 has another vocabulary"), std::string::npos);
  EXPECT_NE(bad({&a, &c}).find("has copy false"), std::string::npos);
  EXPECT_NE(bad(std::vector<const PointerGenerator*>(decode::kMaxEnsemble + 1, &a)).find("17 models (1 ... 16)"),
            std::string::npos);
}

// unk_loss_weight scales the NLL of <unk> targets only (an OOV word the source does not hold;
// without copy, every id >= V too): the loss with weight w is the loss with weight 1 less
// (1 - w) of those rows' NLL, and the mean still divides by every target token.
TEST(PointerGenerator, UnkLossWeightScalesOnlyUnkTargets) {
  // Sentence 0's target: <unk>, 8 (copied), 5; sentence 1's: 6, <unk>.
  std::vector<data::Example> ex = {{{4, 8, 5}, {data::kUnkId, 8, 5}}, {{5, 6, 4}, {6, data::kUnkId}}};
  std::vector<int64_t> idx = {0, 1};
  const data::Batch batch = data::collate(ex, idx);
  for (const bool copy : {true, false}) {
    PointerGeneratorConfig cfg = tiny_config(variants()[copy ? 1 : 4]);
    core::Rng r1(9), r2(9);
    PointerGenerator full(cfg, r1);
    cfg.unk_loss_weight = 0.25f;
    PointerGenerator part(cfg, r2);
    Graph g(false);
    const PgForward f = full.forward(g, batch);
    const PgForward fp = part.forward(g, batch);
    const PgLoss l = full.loss(g, batch), lp = part.loss(g, batch);
    ASSERT_EQ(f.tokens, 4 + 3);
    EXPECT_EQ(lp.tokens, f.tokens);
    double unk_nll = 0;
    int unk_rows = 0;
    for (size_t r = 0; r < f.weight.size(); ++r) {
      const int32_t y = batch.tgt_out[r];
      const bool pad = y == data::kPadId;
      const bool unk = y == data::kUnkId || (!copy && y >= kV);
      EXPECT_FLOAT_EQ(f.weight[r], pad ? 0.0f : 1.0f) << "row " << r;
      EXPECT_FLOAT_EQ(fp.weight[r], pad ? 0.0f : unk ? 0.25f : 1.0f) << "row " << r << (copy ? " copy" : " no copy");
      if (unk) unk_nll -= f.log_p.data()[r], ++unk_rows;
    }
    EXPECT_EQ(unk_rows, copy ? 2 : 3) << "without copy the OOV target 8 is <unk> too";
    EXPECT_GT(unk_nll, 0.0);
    EXPECT_NEAR(lp.nll_sum, l.nll_sum - 0.75 * unk_nll, 1e-4);
    EXPECT_NEAR(lp.total.data()[0], l.total.data()[0] - 0.75 * unk_nll / f.tokens, 1e-5);
  }
  PointerGeneratorConfig bad = tiny_config(variants()[0]);
  for (const float w : {-0.1f, 1.5f, std::nanf("")}) {
    bad.unk_loss_weight = w;
    core::Rng rng(1);
    EXPECT_NE(error_of([&] { PointerGenerator m(bad, rng); }).find("unk_loss_weight"), std::string::npos) << w;
  }
}

TEST(PointerGenerator, RejectsBadConfigAndBatches) {
  core::Rng rng(1);
  PointerGeneratorConfig cfg = tiny_config(variants()[0]);
  cfg.hidden = 5;
  EXPECT_NE(error_of([&] { PointerGenerator m(cfg, rng); }).find("even"), std::string::npos);
  cfg = tiny_config(variants()[0]);
  cfg.vocab = 3;
  EXPECT_NE(error_of([&] { PointerGenerator m(cfg, rng); }).find("vocab"), std::string::npos);
  cfg = tiny_config(variants()[0]);
  cfg.unit = TokenUnit::kChar;  // the shared codec's unit; the family reads words or pieces
  EXPECT_NE(error_of([&] { cfg.validate_options(); }).find("unit char is not supported"), std::string::npos);
  PointerGenerator model(tiny_config(variants()[0]), rng);
  // A target OOV id the source does not hold has P = 0: an error, never a silent -inf loss.
  std::vector<data::Example> ex = {{{4, 8, 9}, {8}}, {{4, 8}, {9}}};
  std::vector<int64_t> idx = {0, 1};
  Graph g;
  EXPECT_NE(error_of([&] { model.loss(g, data::collate(ex, idx)); }).find("no attended source position"),
            std::string::npos);
}

TEST(PointerGenerator, CheckpointRoundTripThroughRegistry) {
  TempDir dir;
  PointerGeneratorConfig cfg;
  cfg.vocab_size = data::kNumSpecial + 4;
  cfg.embed_dim = 6;
  cfg.hidden = 8;
  cfg.coverage = true;
  cfg.max_source_tokens = 3;
  const std::string run = dir.file("run");
  const TextCodec codec = cfg.build({"a b c d a b c a b a"}, run);
  cfg.vocab = codec.size();
  core::Rng rng(4);
  PointerGenerator model(cfg, rng);
  const std::filesystem::path ckpt = std::filesystem::path(run) / "best";
  // Without the vocabulary the directory is not a usable model: load_model says so.
  io::save_checkpoint(ckpt, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  std::filesystem::rename(std::filesystem::path(run) / "vocab.txt", dir.file("vocab.txt"));
  EXPECT_NE(error_of([&] { load_model(ckpt); }).find("vocab"), std::string::npos);
  std::filesystem::rename(dir.file("vocab.txt"), std::filesystem::path(run) / "vocab.txt");
  // The vocabulary in the run directory above the checkpoint is found; load_model(run) takes best/.
  auto loaded = load_model_as<LoadedPointerGenerator>(run, "pointer_generator");
  EXPECT_EQ(loaded->family(), "pointer_generator");
  EXPECT_TRUE(loaded->model->cfg().coverage);
  const data::Batch batch = tiny_batch();
  Graph g1(false), g2(false);
  const PgForward a = model.forward(g1, batch), b = loaded->model->forward(g2, batch);
  for (int64_t i = 0; i < a.log_p.numel(); ++i) EXPECT_EQ(a.log_p.data()[i], b.log_p.data()[i]);
  // run_line summarises: every output word is a vocabulary word or the source's unseen word,
  // copied verbatim (never an extended id written as a number).
  // Articles are truncated as in training (the model's max_source_tokens) unless told otherwise.
  EXPECT_EQ(loaded->model->cfg().max_source_tokens, 3);
  EXPECT_EQ(summarize_lines(*loaded->model, *loaded->codec, {"a b c d a"}, {}).front().source.tokens.size(), 3u);
  EXPECT_EQ(summarize_lines(*loaded->model, *loaded->codec, {"a b c d a"}, {.max_source_tokens = 4})
                .front()
                .source.tokens.size(),
            4u);
  const std::string out = loaded->run_line("a Zorvak b");
  for (const std::string& w : data::split_whitespace(out))
    EXPECT_TRUE(w == "Zorvak" || loaded->codec->id(w) != data::kUnkId || w == "<unk>") << out;
}

}  // namespace
}  // namespace engram::models
