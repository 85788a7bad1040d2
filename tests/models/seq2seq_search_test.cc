// Search over the real Seq2Seq: beam 1 equals greedy for every attention style, alignments are
// distributions over the sentence's own source tokens, and a model trained for a second on
// sequence reversal decodes held-out sequences exactly (greedy and beam), with fp32, bf16 and int8
// weights.
// Dims: B batch, S source len, V vocab.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>

#include "engram/core/ops.h"
#include "engram/data/vocab.h"
#include "engram/decode/search.h"
#include "engram/models/seq2seq/model.h"
#include "engram/optim/clip.h"
#include "engram/optim/optimizers.h"

namespace engram::decode {
namespace {

using models::AttentionKind;
using models::AttentionStyle;
using models::Seq2Seq;
using models::Seq2SeqConfig;

Seq2SeqConfig small_config(AttentionKind a, AttentionStyle s) {
  Seq2SeqConfig c;
  c.src_vocab = 12;
  c.tgt_vocab = 12;
  c.embed_dim = 8;
  c.hidden = 16;
  c.attention = a;
  c.style = s;
  c.dropout = 0.0f;
  return c;
}

SourceBatch batch_of(const std::vector<std::vector<int32_t>>& seqs) { return SourceBatch::from_ids(seqs); }

TEST(Seq2SeqSearch, BeamOneEqualsGreedyAndAlignmentsAreDistributions) {
  const std::vector<std::pair<AttentionKind, AttentionStyle>> kinds = {
      {AttentionKind::kNone, AttentionStyle::kBahdanau},
      {AttentionKind::kAdditive, AttentionStyle::kBahdanau},
      {AttentionKind::kGeneral, AttentionStyle::kLuong}};
  for (auto [a, s] : kinds) {
    core::Rng rng(21);
    Seq2Seq model(small_config(a, s), rng);
    const SourceBatch src = batch_of({{4, 5, 6, 7}, {8}, {9, 10, 11}});
    SearchOptions o;
    o.alignments = true;
    o.max_length_offset = 4;
    core::Graph g(false);
    auto greedy = greedy_search(g, model, src, o);
    auto beam = beam_search(g, model, src, o);
    for (int i = 0; i < src.batch; ++i) {
      EXPECT_EQ(beam[i][0].ids, greedy[i].ids);
      EXPECT_DOUBLE_EQ(beam[i][0].log_prob, greedy[i].log_prob);
      const int rows = static_cast<int>(greedy[i].ids.size()) + greedy[i].finished;
      if (a == AttentionKind::kNone) {
        EXPECT_TRUE(greedy[i].alignment.empty());
        continue;
      }
      ASSERT_EQ(greedy[i].alignment.size(), static_cast<size_t>(rows * src.lengths[i]));
      for (int r = 0; r < rows; ++r) {
        const float* row = greedy[i].alignment.data() + r * src.lengths[i];
        EXPECT_NEAR(std::accumulate(row, row + src.lengths[i], 0.0f), 1.0f, 1e-5);
      }
      EXPECT_EQ(beam[i][0].alignment, greedy[i].alignment);
    }
  }
}

TEST(Seq2SeqSearch, TrainedReversalDecodesExactly) {
  core::Rng data_rng(17);
  auto make = [&](int n) {
    std::vector<data::Example> ex;
    for (int i = 0; i < n; ++i) {
      data::Example e;
      const int len = 3 + static_cast<int>(data_rng.below(4));
      for (int t = 0; t < len; ++t) e.src.push_back(data::kNumSpecial + static_cast<int32_t>(data_rng.below(8)));
      e.tgt.assign(e.src.rbegin(), e.src.rend());
      ex.push_back(e);
    }
    return ex;
  };
  const std::vector<data::Example> train = make(2000), test = make(100);
  core::Rng rng(1);
  Seq2SeqConfig cfg = small_config(AttentionKind::kAdditive, AttentionStyle::kBahdanau);
  cfg.hidden = 32;
  cfg.embed_dim = 16;
  cfg.label_smoothing = 0.0f;
  Seq2Seq model(cfg, rng);
  optim::Adam adam(model.params(), {.lr = 0.01f});
  core::Graph g;
  for (int step = 0; step < 300; ++step) {
    std::vector<int64_t> idx;
    for (int i = 0; i < 32; ++i) idx.push_back((step * 32 + i) % train.size());
    data::Batch batch = data::collate(train, idx);
    g.reset();
    model.params().zero_grad();
    g.backward(model.loss(g, batch, nullptr, 0.0f));
    optim::clip_grad_norm(model.params(), 5.0f);
    adam.step();
  }
  std::vector<std::vector<int32_t>> srcs;
  for (const auto& e : test) srcs.push_back(e.src);
  core::Graph dg(false);
  SearchOptions o;
  auto greedy = greedy_search(dg, model, batch_of(srcs), o);
  o.beam = 4;
  auto beam = beam_search(dg, model, batch_of(srcs), o);
  int greedy_ok = 0, beam_ok = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    greedy_ok += greedy[i].ids == test[i].tgt && greedy[i].finished;
    beam_ok += beam[i][0].ids == test[i].tgt && beam[i][0].finished;
  }
  std::printf("reversal exact match: greedy %d/100, beam 4 %d/100\n", greedy_ok, beam_ok);
  EXPECT_GE(greedy_ok, 90);
  EXPECT_GE(beam_ok, 90);

  // bf16 and int8 weights (translate --precision bf16 | int8): batched (bf16: oneDNN's matmul;
  // int8: kernels/gemm_int8.h) and one sentence at a time (bf16: the few-row kernel, beams of 4
  // rows) decode like fp32.
  const core::Bf16Weights bf16 = nn::bf16_weights(model.params());
  const core::Int8Weights int8 = nn::int8_weights(model.params());
  auto decodes_like_fp32 = [&](const char* name) {
    o.beam = 1;
    auto low = greedy_search(dg, model, batch_of(srcs), o);
    int same_batched = 0, same_single = 0, beam_single_ok = 0;
    for (size_t i = 0; i < test.size(); ++i) {
      same_batched += low[i].ids == greedy[i].ids;
      o.beam = 1;
      same_single += greedy_search(dg, model, batch_of({srcs[i]}), o)[0].ids == greedy[i].ids;
      o.beam = 4;
      const Hypothesis h = beam_search(dg, model, batch_of({srcs[i]}), o)[0][0];
      beam_single_ok += h.ids == test[i].tgt && h.finished;
    }
    std::printf("%s: greedy batched %d/100 and one at a time %d/100 as fp32; beam 4 one at a time exact %d/100\n",
                name, same_batched, same_single, beam_single_ok);
    EXPECT_GE(same_batched, 95) << name;
    EXPECT_GE(same_single, 95) << name;
    EXPECT_GE(beam_single_ok, 90) << name;
  };
  dg.use_bf16_weights(&bf16);
  decodes_like_fp32("bf16");
  dg.use_bf16_weights(nullptr);
  dg.use_int8_weights(&int8);
  decodes_like_fp32("int8");
  dg.use_int8_weights(nullptr);

  // Packed fp32 weights (translate's fp32 path): one sentence at a time, the few-row products read
  // the packed copy; the same fp32 values summed in another order, so the same outputs.
  const core::PackedWeights packed = nn::packed_weights(model.params());
  dg.use_bf16_weights(nullptr);
  int same_plain = 0, same_beam = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    o.beam = 1;
    dg.use_packed_weights(nullptr);
    const auto plain = greedy_search(dg, model, batch_of({srcs[i]}), o)[0].ids;
    o.beam = 4;
    const auto plain_beam = beam_search(dg, model, batch_of({srcs[i]}), o)[0][0].ids;
    dg.use_packed_weights(&packed);
    o.beam = 1;
    same_plain += greedy_search(dg, model, batch_of({srcs[i]}), o)[0].ids == plain;
    o.beam = 4;
    same_beam += beam_search(dg, model, batch_of({srcs[i]}), o)[0][0].ids == plain_beam;
  }
  std::printf("packed fp32: greedy %d/100 and beam 4 %d/100 as the plain layout, one at a time\n", same_plain,
              same_beam);
  EXPECT_GE(same_plain, 99);
  EXPECT_GE(same_beam, 99);
}

}  // namespace
}  // namespace engram::decode
