// Seq2Seq: finite-difference checks of the whole teacher-forced model and of the decoder step
// for every attention variant and style; the StepModel path against teacher forcing; the
// checkpoint round trip through the registry; and a fixed-seed learnability test (reversal).
// Dims: B batch, S source len, T target steps, E embedding, H hidden, C context, V vocab.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "engram/core/grad_check.h"
#include "engram/nn/grad_targets.h"
#include "engram/core/ops.h"
#include "engram/data/vocab.h"
#include "engram/io/checkpoint.h"
#include "engram/models/registry.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/models/seq2seq/model.h"
#include "engram/optim/clip.h"
#include "engram/optim/optimizers.h"

namespace engram::models {
namespace seq2seq_test {

using core::Graph;
using core::Var;

struct Variant {
  std::string name;
  AttentionKind attention;
  AttentionStyle style;
  RnnCell cell = RnnCell::kGru;
  bool input_feeding = true;
  bool tie = false;
  int layers = 1;
  bool bidirectional = true;
};

std::vector<Variant> variants() {
  return {
      {"none/gru", AttentionKind::kNone, AttentionStyle::kBahdanau},
      {"none/lstm/2-layer", AttentionKind::kNone, AttentionStyle::kBahdanau, RnnCell::kLstm, true, false, 2},
      {"bahdanau/additive/gru", AttentionKind::kAdditive, AttentionStyle::kBahdanau},
      {"bahdanau/dot/lstm", AttentionKind::kDot, AttentionStyle::kBahdanau, RnnCell::kLstm},
      {"bahdanau/general/gru/uni/tied", AttentionKind::kGeneral, AttentionStyle::kBahdanau, RnnCell::kGru, true, true, 1,
       false},
      {"luong/dot/lstm/feed", AttentionKind::kDot, AttentionStyle::kLuong, RnnCell::kLstm},
      {"luong/general/gru/no-feed", AttentionKind::kGeneral, AttentionStyle::kLuong, RnnCell::kGru, false},
      {"luong/concat/gru/2-layer/tied", AttentionKind::kConcat, AttentionStyle::kLuong, RnnCell::kGru, true, true, 2},
  };
}

Seq2SeqConfig tiny_config(const Variant& v) {
  Seq2SeqConfig c;
  c.src_vocab = 7;
  c.tgt_vocab = 8;
  c.embed_dim = 3;
  c.hidden = 4;
  c.encoder_layers = v.layers;
  c.decoder_layers = v.layers;
  c.bidirectional = v.bidirectional;
  c.cell = v.cell;
  c.attention = v.attention;
  c.style = v.style;
  c.input_feeding = v.input_feeding;
  c.tie_embeddings = v.tie;
  c.dropout = 0.0f;
  c.label_smoothing = 0.0f;
  return c;
}

// Two pairs of different lengths, so padding and masks are exercised.
data::Batch tiny_batch() {
  std::vector<data::Example> ex = {{{4, 5, 6}, {5, 7}}, {{6, 4}, {4, 6, 7}}};
  std::vector<int64_t> idx = {0, 1};
  return data::collate(ex, idx);
}

Var flat(Var v) { return core::reshape(v, {static_cast<int>(v.numel())}); }

TEST(Seq2SeqGradCheck, TeacherForcedLogitsEveryVariant) {
  std::printf("%-36s %12s %8s  %s\n", "seq2seq variant", "worst err", "checked", "worst element");
  for (const Variant& v : variants()) {
    core::Rng rng(3);
    Seq2Seq model(tiny_config(v), rng);
    const data::Batch batch = tiny_batch();
    auto f = [&](Graph& g) {
      std::vector<Var> align;
      Var logits = model.logits(g, batch, nullptr, &align);
      std::vector<Var> parts = {flat(logits)};
      for (Var a : align) parts.push_back(flat(a));
      return core::concat(parts, 0);
    };
    core::GradCheckResult r = core::grad_check(f, nn::grad_targets(model.params()), {.max_elements = 24});
    std::printf("%-36s %12.3e %8lld  %s\n", v.name.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << v.name;
    EXPECT_LE(r.max_error, 1e-2) << v.name << ": " << r.worst;
  }
}

// The learnability tests' model: 8 symbols, E 16, H 32, no dropout or label smoothing.
Seq2SeqConfig small_config() {
  Seq2SeqConfig cfg;
  cfg.src_vocab = cfg.tgt_vocab = data::kNumSpecial + 8;
  cfg.embed_dim = 16;
  cfg.hidden = 32;
  cfg.dropout = 0.0f;
  cfg.label_smoothing = 0.0f;
  return cfg;
}

// The loss with a guided-alignment term (Seq2Seq::loss, AlignmentGuide): the guide's rows put
// their mass on arbitrary source positions, and rows without a guide (padding, <eos>) are zero.
TEST(Seq2SeqGradCheck, LossWithAlignmentGuide) {
  for (const Variant& v : variants()) {
    if (v.attention == AttentionKind::kNone) continue;
    core::Rng rng(5);
    Seq2Seq model(tiny_config(v), rng);
    const data::Batch batch = tiny_batch();  // T = 4, B = 2, S = 3
    AlignmentGuide guide{.rows = std::vector<float>(4 * 2 * 3, 0.0f), .norm = 5, .weight = 0.7f};
    const float rows[5][3] = {{0.7f, 0.2f, 0.1f}, {0.5f, 0.5f, 0}, {0, 0.1f, 0.9f}, {1, 0, 0}, {0.3f, 0.7f, 0}};
    const int at[5] = {0, 1, 2, 3, 5};  // (t, b) rows t*B + b of the 2 + 3 target tokens (source 1 has 2 positions)
    for (int r = 0; r < 5; ++r) std::copy_n(rows[r], 3, guide.rows.begin() + at[r] * 3);
    auto f = [&](Graph& g) { return model.loss(g, batch, nullptr, 0.1f, &guide); };
    core::GradCheckResult r = core::grad_check(f, nn::grad_targets(model.params()), {.max_elements = 24});
    EXPECT_GT(r.checked, 0) << v.name;
    EXPECT_LE(r.max_error, 1e-2) << v.name << ": " << r.worst;
    Graph g;  // the term is there: the loss with the guide is the loss without it plus a positive amount
    const float with = model.loss(g, batch, nullptr, 0.1f, &guide).data()[0];
    const float without = model.loss(g, batch, nullptr, 0.1f).data()[0];
    EXPECT_GT(with, without + 0.1f) << v.name;
  }
  Variant none = variants()[0];
  core::Rng rng(5);
  Seq2Seq fixed(tiny_config(none), rng);
  AlignmentGuide guide{.rows = std::vector<float>(24, 0.0f), .norm = 1, .weight = 1.0f};
  Graph g;
  try {
    fixed.loss(g, tiny_batch(), nullptr, 0.0f, &guide);
    ADD_FAILURE() << "a guide without attention was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("guided alignment needs attention"), std::string::npos) << e.what();
  }
}

// The guide moves attention: on a copy task, a guide that puts every target token on the last
// source position (not where the token comes from) gets attention there; without it attention
// goes elsewhere.
TEST(Seq2SeqLearns, AttentionFollowsAnAlignmentGuide) {
  core::Rng data_rng(11);
  std::vector<data::Example> train;
  for (int i = 0; i < 512; ++i) {
    data::Example e;
    const int len = 3 + static_cast<int>(data_rng.below(3));
    for (int t = 0; t < len; ++t) e.src.push_back(data::kNumSpecial + static_cast<int32_t>(data_rng.below(8)));
    e.tgt = e.src;
    train.push_back(e);
  }
  auto last_position_mass = [&](float weight) {
    const Seq2SeqConfig cfg = small_config();
    core::Rng rng(1);
    Seq2Seq model(cfg, rng);
    optim::Adam adam(model.params(), {.lr = 0.01f});
    Graph g;
    auto guide_of = [&](const data::Batch& batch) {
      const int64_t b = batch.batch_size, s = batch.src_steps;
      AlignmentGuide guide{.rows = std::vector<float>(static_cast<size_t>(batch.tgt_steps * b * s), 0.0f),
                           .weight = weight};
      for (int64_t c = 0; c < b; ++c)
        for (int64_t t = 0; t + 1 < batch.tgt_len[static_cast<size_t>(c)]; ++t) {
          guide.rows[static_cast<size_t>((t * b + c) * s + batch.src_len[static_cast<size_t>(c)] - 1)] = 1.0f;
          ++guide.norm;
        }
      return guide;
    };
    for (int step = 0; step < 150; ++step) {
      std::vector<int64_t> idx;
      for (int i = 0; i < 32; ++i) idx.push_back((step * 32 + i) % static_cast<int64_t>(train.size()));
      const data::Batch batch = data::collate(train, idx);
      const AlignmentGuide guide = guide_of(batch);
      g.reset();
      model.params().zero_grad();
      g.backward(model.loss(g, batch, nullptr, 0.0f, &guide));
      optim::clip_grad_norm(model.params(), 5.0f);
      adam.step();
    }
    std::vector<int64_t> idx(64);
    for (int i = 0; i < 64; ++i) idx[static_cast<size_t>(i)] = 448 + i;
    const data::Batch batch = data::collate(train, idx);
    Graph eval(false);
    std::vector<Var> alphas;
    model.logits(eval, batch, nullptr, &alphas);
    double mass = 0;
    int rows = 0;
    for (int64_t c = 0; c < batch.batch_size; ++c)
      for (int64_t t = 0; t + 1 < batch.tgt_len[static_cast<size_t>(c)]; ++t, ++rows)
        mass += alphas[static_cast<size_t>(t)].data()[c * batch.src_steps + batch.src_len[static_cast<size_t>(c)] - 1];
    return mass / rows;
  };
  const double guided = last_position_mass(1.0f), free = last_position_mass(0.0f);
  std::printf("mean α on the last source position: guided %.3f, unguided %.3f\n", guided, free);
  EXPECT_GT(guided, 0.8);
  EXPECT_LT(free, 0.6);
}

// The decoder step alone, as a module: inputs are the encoder outputs [S, B, C], the final
// top state [B, C], the previous state (h, c, feed) and the target embedding [B, E]; the output
// is the step's logits, new state and attention weights.
TEST(Seq2SeqGradCheck, DecoderStepEveryAttentionVariant) {
  const int b = 2, s = 3, c = 4, h = 4, e = 3;
  std::printf("%-36s %12s %8s  %s\n", "decoder step", "worst err", "checked", "worst element");
  for (const Variant& v : variants()) {
    core::Rng rng(5);
    Seq2Seq model(tiny_config(v), rng);
    const bool lstm = v.cell == RnnCell::kLstm;
    const int feed = model.feed_width();
    const bool has_feed = v.style == AttentionStyle::kLuong && v.attention != AttentionKind::kNone && feed > 0;
    std::vector<core::Shape> shapes = {{s, b, c}, {b, c}, {b, e}};
    for (int l = 0; l < v.layers; ++l) {
      shapes.push_back({b, h});
      if (lstm) shapes.push_back({b, h});
    }
    if (has_feed) shapes.push_back({b, feed});
    core::Rng in_rng(9);
    std::vector<std::vector<float>> values(shapes.size()), grads(shapes.size());
    auto targets = nn::grad_targets(model.params());
    for (size_t k = 0; k < shapes.size(); ++k) {
      values[k].resize(shapes[k].numel());
      grads[k].resize(shapes[k].numel());
      for (float& x : values[k]) x = in_rng.uniform(-0.9f, 0.9f);
      targets.push_back({fmt::format("in{}", k), values[k].data(), grads[k].data(), shapes[k].numel()});
    }
    const std::vector<int32_t> lengths = {3, 2};
    auto f = [&](Graph& g) {
      std::vector<Var> in;
      for (size_t k = 0; k < shapes.size(); ++k) in.push_back(g.leaf({values[k].data(), shapes[k]}, grads[k].data()));
      DecoderContext ctx = model.decoder().prepare_context(g, in[0], in[1], lengths);
      DecoderState st;
      size_t k = 3;
      for (int l = 0; l < v.layers; ++l) {
        nn::RnnState rs{in[k++], Var{}};
        if (lstm) rs.c = in[k++];
        st.layers.push_back(rs);
      }
      if (has_feed) st.feed = in[k++];
      DecoderStepOutput o = model.decoder().step(g, ctx, model.decoder().input_projection(g, in[2]), st, nullptr);
      std::vector<Var> parts = {flat(model.readout_logits(g, o.top, o.context, in[2], o.attentional, nullptr))};
      for (const nn::RnnState& rs : o.state.layers) {
        parts.push_back(flat(rs.h));
        if (rs.c.valid()) parts.push_back(flat(rs.c));
      }
      if (o.alpha.valid()) parts.push_back(flat(o.alpha));
      return core::concat(parts, 0);
    };
    core::GradCheckResult r = core::grad_check(f, targets, {.max_elements = 24});
    std::printf("%-36s %12.3e %8lld  %s\n", v.name.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << v.name;
    EXPECT_LE(r.max_error, 1e-2) << v.name << ": " << r.worst;
  }
}

// Stepping the StepModel with the gold previous tokens gives the teacher-forced log-probs, and
// reorder() moves rows (including across sentences) without changing their values.
TEST(Seq2SeqStepModel, StepsMatchTeacherForcing) {
  for (Variant v : variants()) {
    Seq2SeqConfig cfg = tiny_config(v);
    cfg.embed_dim = 6;
    cfg.hidden = 8;
    core::Rng rng(7);
    Seq2Seq model(cfg, rng);
    const data::Batch batch = tiny_batch();
    const int b = 2, steps = static_cast<int>(batch.tgt_steps);
    Graph tf(false);
    Var ref = core::log_softmax(model.logits(tf, batch, nullptr));  // [T*B, V]
    decode::SourceBatch src{.batch = b, .steps = static_cast<int>(batch.src_steps), .ids = batch.src,
                            .lengths = batch.src_len};
    Graph g(false);
    auto st = model.encode(g, src);
    // Swap the two sentences' rows, so step() must follow the re-gathered memory.
    const std::vector<int32_t> swap = {1, 0};
    model.reorder(*st, swap);
    for (int t = 0; t < steps; ++t) {
      std::vector<int32_t> prev = {batch.tgt_in_at(t, 1), batch.tgt_in_at(t, 0)};
      g.reset();
      decode::StepOutput out = model.step(g, *st, prev);
      ASSERT_EQ(out.log_probs.shape, (core::Shape{b, cfg.tgt_vocab})) << v.name;
      EXPECT_EQ(out.alignment.data != nullptr, v.attention != AttentionKind::kNone) << v.name;
      for (int r = 0; r < b; ++r)
        for (int k = 0; k < cfg.tgt_vocab; ++k)
          EXPECT_NEAR(out.log_probs.at(r, k), ref.value().at(t * b + (1 - r), k), 1e-5)
              << v.name << " step " << t << " row " << r;
    }
  }
}

TEST(Seq2Seq, RejectsBadConfigAndIds) {
  Seq2SeqConfig cfg = tiny_config(variants()[2]);
  core::Rng rng(1);
  cfg.hidden = 5;  // odd with a bidirectional encoder
  EXPECT_THROW(Seq2Seq(cfg, rng), Error);
  cfg = tiny_config(variants()[2]);
  cfg.src_vocab = 3;
  EXPECT_THROW(Seq2Seq(cfg, rng), Error);
  Seq2Seq model(tiny_config(variants()[2]), rng);
  Graph g(false);
  auto src = decode::SourceBatch::from_ids({{4, 99}});
  try {
    model.encode(g, src);
    FAIL() << "out-of-vocabulary id accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
}

TEST(Seq2Seq, CheckpointRoundTripThroughRegistry) {
  Seq2SeqConfig cfg = tiny_config(variants()[5]);
  core::Rng rng(4);
  Seq2Seq model(cfg, rng);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("engram-s2s-ckpt-{}", ::getpid());
  std::filesystem::remove_all(dir);
  io::save_checkpoint(dir, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  // Without vocabulary files the directory is not a usable model: load_model says so.
  try {
    load_model(dir);
    ADD_FAILURE() << "loaded a seq2seq directory without vocabularies";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocab"), std::string::npos) << e.what();
  }
  std::unique_ptr<Seq2Seq> loaded = load_seq2seq_model(dir);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(loaded->name(), "seq2seq");
  Seq2Seq* s2s = loaded.get();
  EXPECT_EQ(s2s->cfg().attention, AttentionKind::kDot);
  EXPECT_EQ(s2s->cfg().style, AttentionStyle::kLuong);
  const data::Batch batch = tiny_batch();
  Graph g1(false), g2(false);
  Var a = model.logits(g1, batch, nullptr), b = s2s->logits(g2, batch, nullptr);
  ASSERT_EQ(a.numel(), b.numel());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.data()[i], b.data()[i]);
  EXPECT_THROW(family("transformer"), Error);
}

// Reversal of random sequences over 8 symbols, length 3..6: with a fixed seed, a small attention
// model reaches > 95% teacher-forced token accuracy on held-out sequences within a few hundred
// updates (a couple of seconds).
TEST(Seq2SeqLearns, ReversesSequences) {
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
  const std::vector<data::Example> train = make(2000), test = make(200);
  const Seq2SeqConfig cfg = small_config();
  core::Rng rng(1);
  Seq2Seq model(cfg, rng);
  optim::Adam adam(model.params(), {.lr = 0.01f});
  Graph g;
  const int batch_size = 32, updates = 300;
  double first = 0, last = 0;
  for (int step = 0; step < updates; ++step) {
    std::vector<int64_t> idx;
    for (int i = 0; i < batch_size; ++i) idx.push_back((step * batch_size + i) % train.size());
    data::Batch batch = data::collate(train, idx);
    g.reset();
    model.params().zero_grad();
    Var loss = model.loss(g, batch, nullptr, 0.0f);
    g.backward(loss);
    optim::clip_grad_norm(model.params(), 5.0f);
    adam.step();
    if (step < 10) first += loss.data()[0] / 10;
    if (step >= updates - 10) last += loss.data()[0] / 10;
  }
  std::vector<int64_t> idx(test.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  data::Batch batch = data::collate(test, idx);
  Graph eval(false);
  Var logits = model.logits(eval, batch, nullptr);  // [T*B, V]
  int64_t correct = 0, total = 0;
  for (int64_t r = 0; r < logits.shape()[0]; ++r) {
    const int32_t want = batch.tgt_out[r];
    if (want == data::kPadId) continue;
    const float* row = logits.data() + r * cfg.tgt_vocab;
    correct += std::max_element(row, row + cfg.tgt_vocab) - row == want;
    ++total;
  }
  const double acc = static_cast<double>(correct) / total;
  std::printf("reversal: loss %.3f -> %.3f, held-out token accuracy %.3f\n", first, last, acc);
  EXPECT_LT(last, first * 0.2);
  EXPECT_GT(acc, 0.95);
}

}  // namespace seq2seq_test
}  // namespace engram::models
