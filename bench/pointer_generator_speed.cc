// Pointer-generator training and decoding speed on random token data of fixed lengths (the
// workload of bench/pointer_generator_speed.sh, mirrored by bench/pytorch/pointer_generator.py):
// the model of configs/pointer-generator-bbc-summary.yaml by default (V 10k, E 64, bi-LSTM 2 x 64,
// LSTM decoder 128, additive attention with the coverage feature, the p_gen copy mixture).
// Training = train::Updater (forward + backward + global-norm clipping at 2 + Adam, the update
// `engram train` runs) on one fixed batch whose sources hold `--oov` out-of-vocabulary ids each
// (extended ids V, V+1, ...) and whose targets copy some of them. Decoding = greedy search
// (decode::search over PgStepModel, the extended vocabulary) of `--sentences` sources one at a
// time, each output capped at the target length, with a freshly initialised model (random weights
// rarely pick <eos>, so every search runs the full length on both sides; tokens per output say so).
//   build/bench/pointer_generator_speed [--batch 8] [--src-len 400] [--tgt-len 120] [--vocab 10000]
//       [--steps 5] [--sentences 4] [--what train,greedy] [--threads 1] [--set coverage=false ...]
// Dims: B batch, S source len, T target steps, V vocabulary, X extra (OOV) ids per source.
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
#include "engram/models/pointer_generator/model.h"
#include "engram/train/trainer.h"

namespace {

using namespace engram;

using Clock = std::chrono::steady_clock;

struct SpeedArgs {
  int batch = 8, src_len = 400, tgt_len = 120, vocab = 10000, oov = 20;
  int steps = 5, warmup = 2, sentences = 4, threads = 1;
  std::vector<std::string> what = {"train", "greedy"};
  std::vector<std::string> sets;
};

models::PointerGeneratorConfig default_config(int vocab, int src_len) {
  models::PointerGeneratorConfig c;  // configs/pointer-generator-bbc-summary.yaml
  c.vocab = vocab;
  c.embed_dim = 64;
  c.hidden = 128;
  c.copy = true;
  c.coverage = true;
  c.max_source_tokens = src_len;
  return c;
}

// A source of S ids: vocabulary words, with `oov` of them replaced by the extended ids V, ...,
// V + oov - 1 (each once, at random positions).
std::vector<int32_t> random_source(core::Rng& rng, int s, int vocab, int oov) {
  std::vector<int32_t> ids(s);
  for (auto& id : ids) id = data::kNumSpecial + static_cast<int32_t>(rng.below(vocab - data::kNumSpecial));
  for (int k = 0; k < std::min(oov, s); ++k) ids[rng.below(s)] = vocab + k;
  // Extended ids must be numbered in order of first appearance (text.h): renumber.
  std::vector<int32_t> map(oov, -1);
  int32_t next = vocab;
  for (auto& id : ids)
    if (id >= vocab) {
      if (map[id - vocab] < 0) map[id - vocab] = next++;
      id = map[id - vocab];
    }
  return ids;
}

// The training step's work on one fixed batch, for train::Updater.
class OneBatchTask : public train::TrainTask {
 public:
  OneBatchTask(models::PointerGenerator& model, const data::Batch& batch) : model_(model), batch_(batch) {}
  nn::ParamStore& params() override { return model_.params(); }
  std::string model_name() const override { return model_.name(); }
  YAML::Node model_config() const override { return model_.config(); }
  int64_t batches_per_epoch() const override { return 1; }
  void begin_epoch(int, uint64_t) override {}
  train::BatchResult train_batch(int64_t) override {
    g_.reset();
    const models::PgLoss l = model_.loss(g_, batch_);
    g_.backward(l.total);
    return {l.total.data()[0], 1};
  }
  train::Metrics validate() override { return {}; }
  std::string primary_metric() const override { return "loss"; }
  bool higher_is_better() const override { return false; }

 private:
  models::PointerGenerator& model_;
  const data::Batch& batch_;
  core::Graph g_;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void run_speed(const SpeedArgs& a) {
  ENGRAM_CHECK(a.vocab > data::kNumSpecial, "pointer_generator speed: --vocab {} must exceed the {} special tokens",
               a.vocab, data::kNumSpecial);
  ENGRAM_CHECK(a.batch >= 1 && a.src_len >= 1 && a.tgt_len >= 2 && a.steps >= 1 && a.sentences >= 1 && a.oov >= 0 &&
                   a.oov <= a.src_len,
               "pointer_generator speed: --batch, --src-len, --steps, --sentences must be >= 1, --tgt-len >= 2 and "
               "--oov in [0, --src-len]");
  models::PointerGeneratorConfig cfg = default_config(a.vocab, a.src_len);
  for (const std::string& s : a.sets) io::apply_override(cfg, s);
  core::Rng rng(1);
  models::PointerGenerator model(cfg, rng);
  std::printf("pointer_generator: %s, copy %s, coverage %s, %d params, B %d, S %d, T %d, V %d, E %d, H %d; BLAS %s "
              "with %d thread%s\n",
              cfg.cell == models::PgCell::kGru ? "GRU" : "LSTM", cfg.copy ? "on" : "off", cfg.coverage ? "on" : "off",
              static_cast<int>(model.params().numel()), a.batch, a.src_len, a.tgt_len, cfg.vocab, cfg.embed_dim,
              cfg.hidden, core::kernels::blas_backend(), a.threads, a.threads == 1 ? "" : "s");
  auto wants = [&](const char* w) { return std::find(a.what.begin(), a.what.end(), w) != a.what.end(); };

  if (wants("train")) {
    // One fixed batch, time-major: every source S ids with `oov` extended ids, every target T-1
    // tokens + <eos>, a quarter of them copies of the source's extended ids.
    data::Batch batch;
    batch.batch_size = a.batch;
    batch.src_steps = a.src_len;
    batch.tgt_steps = a.tgt_len;
    batch.src.assign(size_t(a.src_len) * a.batch, 0);
    std::vector<int32_t> extra(a.batch, 0);
    for (int b = 0; b < a.batch; ++b) {
      const std::vector<int32_t> s = random_source(rng, a.src_len, a.vocab, a.oov);
      for (int i = 0; i < a.src_len; ++i) {
        batch.src[size_t(i) * a.batch + b] = s[i];
        extra[b] = std::max(extra[b], s[i] - a.vocab + 1);
      }
    }
    batch.src_len.assign(a.batch, a.src_len);
    batch.tgt_in.resize(size_t(a.tgt_len) * a.batch);
    batch.tgt_out.resize(batch.tgt_in.size());
    for (int t = 0; t < a.tgt_len; ++t)
      for (int b = 0; b < a.batch; ++b) {
        const size_t i = size_t(t) * a.batch + b;
        int32_t y = data::kNumSpecial + static_cast<int32_t>(rng.below(a.vocab - data::kNumSpecial));
        if (extra[b] > 0 && rng.below(4) == 0) y = a.vocab + static_cast<int32_t>(rng.below(extra[b]));
        batch.tgt_out[i] = t == a.tgt_len - 1 ? data::kEosId : y;
        batch.tgt_in[i] = t == 0 ? data::kGoId : batch.tgt_out[i - a.batch];
      }
    batch.tgt_len.assign(a.batch, a.tgt_len);
    OneBatchTask task(model, batch);
    train::TrainerConfig tc;
    tc.optimizer.name = "adam";
    tc.optimizer.lr = 1e-4f;
    tc.clip.global_norm = 2.0f;
    train::Updater updater(task, tc);
    double loss = 0;
    auto one_step = [&] { loss = updater.update(0).batch.loss_sum; };
    for (int i = 0; i < a.warmup; ++i) one_step();
    const auto t0 = Clock::now();
    for (int i = 0; i < a.steps; ++i) one_step();
    const double sec = seconds_since(t0) / a.steps;
    std::printf("train: %.1f ms/step, %.0f target tokens/s (loss %.3f, %d timed steps)\n", sec * 1e3,
                double(a.batch) * a.tgt_len / sec, loss, a.steps);
    std::fflush(stdout);
  }

  if (wants("greedy")) {
    // `sentences` random sources decoded one at a time, outputs capped at T tokens; a freshly
    // initialised model.
    core::Rng init2(2);
    models::PointerGenerator fresh(cfg, init2);
    std::vector<std::vector<int32_t>> sources;
    for (int i = 0; i < a.sentences; ++i) sources.push_back(random_source(rng, a.src_len, a.vocab, a.oov));
    decode::SearchOptions so;
    so.beam = 1;
    so.max_length = a.tgt_len;
    so.max_length_ratio = 100.0f;
    const models::PgStepModel stepper(fresh, {});
    core::Graph dg(false);
    int64_t tokens = 0;
    auto run_all = [&] {
      for (const auto& src : sources)
        for (const auto& hyps : decode::search(dg, stepper, decode::SourceBatch::from_ids({src}), so))
          tokens += static_cast<int64_t>(hyps.front().ids.size());
    };
    run_all();  // warm-up
    tokens = 0;
    const auto t0 = Clock::now();
    run_all();
    const double sec = seconds_since(t0);
    std::printf("greedy batch 1: %.2f articles/s (%.1f tokens per output, %d articles)\n", a.sentences / sec,
                double(tokens) / a.sentences, a.sentences);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pointer-generator training and decoding speed on random data (bench/pointer_generator_speed.sh)",
               "pointer_generator_speed"};
  app.option_defaults()->always_capture_default();
  auto a = std::make_shared<SpeedArgs>();
  app.add_option("--batch", a->batch, "training batch (articles)");
  app.add_option("--src-len", a->src_len, "source tokens per article");
  app.add_option("--tgt-len", a->tgt_len, "target steps per article (incl. <eos>); decoding cap");
  app.add_option("--vocab", a->vocab, "vocabulary size (specials included)");
  app.add_option("--oov", a->oov, "out-of-vocabulary (extended) ids per source");
  app.add_option("--steps", a->steps, "timed training steps");
  app.add_option("--warmup", a->warmup,
                 "untimed training steps first (2: the graph arena settles into one block after the first step, "
                 "whose pages the second step touches for the first time)");
  app.add_option("--sentences", a->sentences, "articles decoded one at a time per measurement");
  engram::bench::add_threads_option(app, a->threads);
  app.add_option("--what", a->what, "comma list of train, greedy")->delimiter(',')->check(CLI::IsMember({"train", "greedy"}));
  app.add_option("--set", a->sets, "override a model key, e.g. --set coverage=false")->take_all();
  return engram::bench::speed_main(app, argc, argv, a->threads, [&] { run_speed(*a); });
}
