// Seq2seq training and decoding speed of a Seq2Seq configuration on random token data of fixed
// lengths (the workload of bench/seq2seq_speed.sh, mirrored by
// bench/pytorch/seq2seq.py). Training = train::Updater (forward + backward + global-norm clipping
// + Adam, the update training runs) on one batch; the GEMM FLOPs of a step are counted from the shapes and reported as GFLOP/s.
// Decoding = greedy and beam search over `--sentences` sources, batched and one at a time, each
// hypothesis capped at the target length, with a freshly initialised model (random weights rarely
// pick <eos>, so every search runs the full length on both sides; the tokens per output say so).
//   build/bench/seq2seq_speed [--batch 64] [--src-len 20] [--tgt-len 20] [--vocab 8000] [--steps 5]
//       [--what train,greedy,beam] [--precision fp32,bf16,int8] [--per-call 64,1] [--threads 1] [--set cell=lstm ...]
// Dims: B batch, S source len, T target steps, E embedding, H decoder hidden, C encoder width,
// G decoder gates, A attention width, P readout width, V target vocab.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "speed_options.h"
#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/rng.h"
#include "engram/data/vocab.h"
#include "engram/decode/search.h"
#include "engram/io/config.h"
#include "engram/models/seq2seq/model.h"
#include "engram/train/trainer.h"

namespace {

using namespace engram;

using Clock = std::chrono::steady_clock;

struct SpeedArgs {
  int batch = 64, src_len = 20, tgt_len = 20, vocab = 8000;
  int steps = 5, warmup = 1, sentences = 64, beam = 5, threads = 1;
  std::vector<std::string> what = {"train", "greedy", "beam"};
  std::vector<int> per_call;                       // sentences per search call (default: --sentences, 1)
  std::vector<std::string> precision = {"fp32"};  // decoding weights
  std::string train_precision = "fp32";            // train.precision
  std::vector<std::string> sets;
};

models::Seq2SeqConfig default_config(int vocab) {
  models::Seq2SeqConfig c;  // the architecture: bi-GRU 2 x 512, GRU 512, additive, E 256
  c.src_vocab = c.tgt_vocab = vocab;
  c.embed_dim = 256;
  c.hidden = 512;
  c.encoder_hidden = 512;
  c.bidirectional = true;
  c.cell = models::RnnCell::kGru;
  c.attention = models::AttentionKind::kAdditive;
  c.style = models::AttentionStyle::kBahdanau;
  c.dropout = 0.0f;
  c.label_smoothing = 0.1f;
  return c;
}

// Forward GEMM FLOPs (2mnk) of one teacher-forced batch; a training step is counted as 3x that
// (backward = the input and the weight gradients). Bahdanau / none / Luong, GRU or LSTM.
double forward_flops(const models::Seq2Seq& m, int b, int s, int t) {
  const models::Seq2SeqConfig& c = m.cfg();
  const double gate = c.cell == models::RnnCell::kLstm ? 4 : 3;
  const double e = c.embed_dim, h = c.hidden, cw = m.context_width(), u = m.encoder().rnn().config().hidden_size;
  const double dirs = c.bidirectional ? 2 : 1, sb = double(s) * b, tb = double(t) * b;
  const double v = c.tgt_vocab, p = m.readout_width(), x = m.feed_width();
  const double a = c.attn_dim > 0 ? c.attn_dim : h;
  double f = 0;
  for (int l = 0; l < c.encoder_layers; ++l) {
    const double in = l == 0 ? e : cw;
    f += dirs * 2 * sb * (in + u) * gate * u;  // input projection + recurrence
  }
  f += 2 * b * cw * h * c.decoder_layers;                              // bridge
  f += 2 * tb * (e + x + h) * gate * h;                                // decoder layer 0
  f += (c.decoder_layers - 1) * 2 * tb * (2 * h) * gate * h;           // upper layers
  switch (c.attention) {
    case models::AttentionKind::kNone: break;
    case models::AttentionKind::kDot: f += 2 * tb * s * cw * 2; break;                       // scores + context
    case models::AttentionKind::kGeneral: f += 2 * sb * cw * h + 2 * tb * s * h + 2 * tb * s * cw; break;
    default: f += 2 * sb * cw * a + 2 * tb * h * a + 2 * tb * s * a + 2 * tb * s * cw; break;  // additive
  }
  const bool luong = c.attention != models::AttentionKind::kNone && c.style == models::AttentionStyle::kLuong;
  f += 2 * tb * (luong ? cw + h : h + cw + e) * p;  // combine / readout
  f += 2 * tb * p * v;                              // output projection
  return f;
}

std::vector<int32_t> random_ids(core::Rng& rng, int64_t n, int vocab) {
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = data::kNumSpecial + static_cast<int32_t>(rng.below(vocab - data::kNumSpecial));
  return ids;
}

// The training step's work on one fixed batch, for train::Updater.
class OneBatchTask : public train::TrainTask {
 public:
  OneBatchTask(models::Seq2Seq& model, const data::Batch& batch, float smoothing)
      : model_(model), batch_(batch), smoothing_(smoothing) {}
  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return model_.name(); }
  YAML::Node model_config() const override { return model_.config(); }
  int64_t batches_per_epoch() const override { return 1; }
  void begin_epoch(int, uint64_t) override {}
  train::BatchResult train_batch(int64_t) override {
    g_.reset();
    core::Var l = model_.loss(g_, batch_, nullptr, smoothing_);
    g_.backward(l);
    return {l.data()[0], 1};
  }
  train::Metrics validate() override { return {}; }
  std::string primary_metric() const override { return "loss"; }
  bool higher_is_better() const override { return false; }

 private:
  models::Seq2Seq& model_;
  const data::Batch& batch_;
  float smoothing_;
  core::Graph g_;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void run_speed(const SpeedArgs& a) {
  ENGRAM_CHECK(a.vocab > data::kNumSpecial, "seq2seq speed: --vocab {} must exceed the {} special tokens", a.vocab,
               data::kNumSpecial);
  ENGRAM_CHECK(a.batch >= 1 && a.src_len >= 1 && a.tgt_len >= 2 && a.steps >= 1 && a.sentences >= 1 && a.beam >= 1,
               "seq2seq speed: --batch, --src-len, --steps, --sentences, --beam must be >= 1 and --tgt-len >= 2");
  models::Seq2SeqConfig cfg = default_config(a.vocab);
  for (const std::string& s : a.sets) io::apply_override(cfg, s);
  core::Rng rng(1);
  models::Seq2Seq model(cfg, rng);
  std::printf("seq2seq: %s, %d params, B %d, S %d, T %d, V %d; BLAS %s with %d thread%s\n",
              cfg.cell == models::RnnCell::kGru ? "GRU" : "LSTM",
              static_cast<int>(model.params().numel()), a.batch, a.src_len, a.tgt_len, cfg.tgt_vocab,
              core::kernels::blas_backend(), a.threads, a.threads == 1 ? "" : "s");
  auto listed = [](const std::vector<std::string>& list, const char* w) {
    return std::find(list.begin(), list.end(), w) != list.end();
  };
  auto wants = [&](const char* w) { return a.what.empty() || listed(a.what, w); };

  if (wants("train")) {
    // One fixed batch: every source S tokens, every target T-1 tokens + <eos>.
    data::Batch batch;
    batch.batch_size = a.batch;
    batch.src_steps = a.src_len;
    batch.tgt_steps = a.tgt_len;
    batch.src = random_ids(rng, int64_t{a.src_len} * a.batch, cfg.src_vocab);
    batch.src_len.assign(a.batch, a.src_len);
    std::vector<int32_t> y = random_ids(rng, int64_t{a.tgt_len} * a.batch, cfg.tgt_vocab);
    batch.tgt_in.resize(y.size());
    batch.tgt_out.resize(y.size());
    for (int t = 0; t < a.tgt_len; ++t)
      for (int b = 0; b < a.batch; ++b) {
        const int64_t i = int64_t{t} * a.batch + b;
        batch.tgt_in[i] = t == 0 ? data::kGoId : y[i - a.batch];
        batch.tgt_out[i] = t == a.tgt_len - 1 ? data::kEosId : y[i];
      }
    batch.tgt_len.assign(a.batch, a.tgt_len);
    // The update training runs (train::Updater): forward + backward, global-norm clipping at 1,
    // Adam at lr 1e-4, on this one batch.
    OneBatchTask task(model, batch, cfg.label_smoothing);
    train::TrainerConfig tc;
    tc.optimizer.name = "adam";
    tc.optimizer.lr = 1e-4f;
    tc.clip.global_norm = 1.0f;
    tc.precision = a.train_precision;
    train::Updater updater(task, tc);
    double loss = 0;
    auto one_step = [&] { loss = updater.update(0).batch.loss_sum; };
    for (int i = 0; i < a.warmup; ++i) one_step();
    const auto t0 = Clock::now();
    for (int i = 0; i < a.steps; ++i) one_step();
    const double sec = seconds_since(t0) / a.steps;
    const double gflop = 3 * forward_flops(model, a.batch, a.src_len, a.tgt_len) / 1e9;
    std::printf("train: %.1f ms/step, %.0f target tokens/s, %.1f sentences/s, %.2f GFLOP/step, %.1f GFLOP/s "
                "(loss %.3f, %d timed steps, %s products)\n",
                sec * 1e3, double(a.batch) * a.tgt_len / sec, a.batch / sec, gflop, gflop / sec, loss, a.steps,
                a.train_precision.c_str());
    std::fflush(stdout);
  }

  // Decoding: `sentences` random sources of S tokens; outputs capped at T tokens. A freshly
  // initialised model (the trained one has learnt that <eos> is the commonest random target).
  core::Rng init2(2);
  models::Seq2Seq fresh(cfg, init2);
  std::vector<std::vector<int32_t>> sources;
  for (int i = 0; i < a.sentences; ++i) sources.push_back(random_ids(rng, a.src_len, cfg.src_vocab));
  decode::SearchOptions so;
  so.max_length = a.tgt_len;
  so.max_length_ratio = 10.0f;
  core::Graph dg(false);
  const core::Bf16Weights bf16 = nn::bf16_weights(fresh.params());
  const core::Int8Weights int8 = nn::int8_weights(fresh.params());
  const core::PackedWeights packed = nn::packed_weights(fresh.params());  // fp32, as engram translate uses it
  dg.use_packed_weights(&packed);
  auto decode_rate = [&](int beam, int per_call) {
    so.beam = beam;
    int64_t tokens = 0;
    auto run_all = [&] {
      for (int i = 0; i < a.sentences; i += per_call) {
        std::vector<std::vector<int32_t>> chunk(sources.begin() + i,
                                                sources.begin() + std::min(a.sentences, i + per_call));
        for (const auto& hyps : decode::search(dg, fresh, decode::SourceBatch::from_ids(chunk), so))
          tokens += static_cast<int64_t>(hyps.front().ids.size());
      }
    };
    run_all();  // warm-up
    tokens = 0;
    const auto t0 = Clock::now();
    run_all();
    const double sec = seconds_since(t0);
    return std::pair{a.sentences / sec, double(tokens) / a.sentences};
  };
  for (const std::string precision : {"fp32", "bf16", "int8"}) {
    if (!listed(a.precision, precision.c_str())) continue;
    dg.use_bf16_weights(precision == "bf16" ? &bf16 : nullptr);
    dg.use_int8_weights(precision == "int8" ? &int8 : nullptr);
    const std::string tag = precision == "fp32" ? "" : " " + precision;
    for (int beam : {1, a.beam}) {
      if (!wants(beam == 1 ? "greedy" : "beam")) continue;
      for (int per_call : a.per_call.empty() ? std::vector<int>{a.sentences, 1} : a.per_call) {
        auto [rate, len] = decode_rate(beam, per_call);
        std::printf("%s%s batch %d: %.1f sentences/s (%.1f tokens per output, %d sentences)\n",
                    beam == 1 ? "greedy" : fmt::format("beam {}", beam).c_str(), tag.c_str(), per_call,
                    rate, len, a.sentences);
        std::fflush(stdout);
      }
      if (a.beam == 1) break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"seq2seq training and decoding speed on random data (bench/seq2seq_speed.sh)", "seq2seq_speed"};
  app.option_defaults()->always_capture_default();
  auto a = std::make_shared<SpeedArgs>();
  CLI::App* speed = &app;
  speed->add_option("--batch", a->batch, "training batch (sentences)");
  speed->add_option("--src-len", a->src_len, "source tokens per sentence");
  speed->add_option("--tgt-len", a->tgt_len, "target steps per sentence (incl. <eos>); decoding cap");
  speed->add_option("--vocab", a->vocab, "source and target vocabulary size");
  speed->add_option("--steps", a->steps, "timed training steps");
  speed->add_option("--train-precision", a->train_precision, "train.precision of the timed steps")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  speed->add_option("--warmup", a->warmup, "untimed training steps first");
  speed->add_option("--sentences", a->sentences, "sentences decoded per measurement");
  speed->add_option("--beam", a->beam, "beam size of the beam measurement");
  speed->add_option("--threads", a->threads, "BLAS/OpenMP threads")->check(CLI::PositiveNumber);
  speed->add_option("--what", a->what, "comma list of train, greedy, beam")
      ->delimiter(',')
      ->check(CLI::IsMember({"train", "greedy", "beam"}));
  speed->add_option("--precision", a->precision, "decoding weights, comma list of fp32, bf16, int8")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}));
  speed->add_option("--per-call", a->per_call, "comma list of sentences per search call (default: --sentences, 1)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  speed->add_option("--set", a->sets, "override a model key, e.g. --set cell=lstm")->take_all();
  return engram::bench::speed_main(app, argc, argv, a->threads, [&] { run_speed(*a); });
}
