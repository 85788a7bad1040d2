// `engram ntm eval|show|speed`: the Neural Turing Machine (and its LSTM baseline) on the
// paper's algorithmic tasks; training is `engram train configs/ntm-*.yaml`. A thin adapter over
// models/ntm/.
//   engram ntm eval -m DIR --lengths 10,20,30,50,80,120 [--repeats 10]   cost in bits per sequence
//   engram ntm show -m DIR --length 30 -o copy.svg      inputs, outputs, write / read weightings
//   engram ntm speed [CONFIG.yaml] [--set key=value] --batch 1,16   training sequences/s
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/models/ntm/task.h"
#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/io/config.h"
#include "engram/viz/memory.h"

namespace engram::cli {

namespace {

namespace fs = std::filesystem;
// Limits (docs/limits.md): an evaluated sequence of at most kMaxLength steps (recall: items); a
// drawn one of at most kMaxShowLength (the SVG grows with it).
constexpr int kMaxLength = 1000;
constexpr int kMaxShowLength = 200;
using models::NtmTrainConfig;
using models::default_ntm_train_config;
using models::train_ntm;
using models::ntm_training_speed;
using models::NtmExtrapolationSet;
using models::NtmArchitecture;
using models::NtmTaskKind;

struct EvalArgs {
  std::string dir;
  std::vector<int> lengths = {10, 20, 30, 50, 80, 120}, repeats;
  int64_t sequences = 100, batch = 25;
  int64_t seed = 1;
  int threads = 1;
};

void run_eval(const EvalArgs& a) {
  auto loaded = models::load_model_as<models::LoadedNtmModel>(a.dir, "ntm");
  const fs::path dir = loaded->dir();
  const models::NtmTaskModel* model = loaded->model.get();
  const models::NtmTaskConfig& task = model->model_config().task;
  const bool repeat_task = task.task == NtmTaskKind::kRepeatCopy;
  use_threads(a.threads);
  const std::vector<int>& lengths = a.lengths;
  std::vector<int> repeats = a.repeats.empty() ? std::vector<int>{repeat_task ? task.max_repeat : 1}
                                               : a.repeats;
  ENGRAM_CHECK(repeats.size() == 1 || lengths.size() == 1 || repeats.size() == lengths.size(),
               "--repeats has {} values for {} lengths (give one, or one per length)", repeats.size(), lengths.size());
  const size_t rows = std::max(lengths.size(), repeats.size());
  const bool lstm = model->model_config().architecture == NtmArchitecture::kLstm;
  std::printf("%s (%s) on %s, trained on %s %d-%d%s; %lld sequences per row, seed %lld\n\n",
              lstm ? "LSTM baseline" : "NTM", dir.string().c_str(), models::task_name(task.task),
              task.task == NtmTaskKind::kRecall ? "items" : "lengths", task.min_len, task.max_len,
              repeat_task ? fmt::format(", repeats {}-{}", task.min_repeat, task.max_repeat).c_str() : "",
              static_cast<long long>(a.sequences), static_cast<long long>(a.seed));
  const char* what = task.task == NtmTaskKind::kRecall ? "items" : "length";
  // Repeat copy separates the count (the end marker) from the copying (the data bits where the
  // model does not output the end marker); see models::EvalResult.
  if (repeat_task)
    std::printf("| %s | repeats | cost (bits/seq) | wrong bits/seq | wrong end markers/seq | wrong copy bits/seq "
                "| sequences copied exactly |\n|---|---|---|---|---|---|---|\n", what);
  else std::printf("| %s | cost (bits/seq) | wrong bits/seq | sequences exactly right |\n|---|---|---|---|\n", what);
  for (size_t i = 0; i < rows; ++i) {
    const int len = lengths[lengths.size() == 1 ? 0 : i], rep = repeats[repeats.size() == 1 ? 0 : i];
    const models::EvalResult r =
        models::evaluate_at(model->seq(), task, len, rep, a.sequences, a.batch, static_cast<uint64_t>(a.seed));
    const std::string skipped = r.non_finite ? fmt::format(" ({} batches non-finite, skipped)", r.non_finite) : "";
    if (repeat_task)
      std::printf("| %d | %d | %.4g | %.3g | %.3g | %.3g | %.1f%% |%s\n", len, rep, r.bits, r.bit_errors, r.marker_errors,
                  r.copy_errors, 100.0 * r.exact, skipped.c_str());
    else std::printf("| %d | %.4g | %.3g | %.1f%% |%s\n", len, r.bits, r.bit_errors, 100.0 * r.exact, skipped.c_str());
    std::fflush(stdout);
  }
}

struct ShowArgs {
  std::string dir, out = "ntm.svg";
  int length = 30, repeat = 0;
  int64_t seed = 1;
  int threads = 1;
};

void run_show(const ShowArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedNtmModel>(a.dir, "ntm");
  const fs::path dir = loaded->dir();
  const models::NtmTaskModel* model = loaded->model.get();
  const models::NtmTaskConfig& task = model->model_config().task;
  core::Rng rng(static_cast<uint64_t>(a.seed));
  const int repeat = a.repeat > 0 ? a.repeat : task.max_repeat;
  const data::tasks::SeqBatch b = models::make_task_batch_at(task, a.length, repeat, 1, rng);
  core::Graph g(false, size_t{1} << 24);
  models::SeqTrace trace;
  const models::SeqLoss l = models::sequence_loss(g, model->seq(), b, &trace);
  ENGRAM_CHECK(!l.non_finite, "ntm show: non-finite {} weighting at step {}", l.non_finite ? l.non_finite->head : "",
               l.non_finite ? l.non_finite->step : 0);
  const int steps = static_cast<int>(b.steps), k = static_cast<int>(b.out_width);
  std::vector<float> outputs(static_cast<size_t>(steps) * k, 0.0f);  // [T, K], 0 where not scored
  for (size_t i = 0; i < l.rows.size(); ++i)
    std::copy(l.probs.begin() + i * k, l.probs.begin() + (i + 1) * k, outputs.begin() + static_cast<int64_t>(l.rows[i]) * k);
  std::vector<viz::TimePanel> panels = {
      {"inputs", b.input, steps, static_cast<int>(b.in_width)},
      {"targets", b.target, steps, k},
      {"outputs", outputs, steps, k},
  };
  // One panel per head: [T, N] from the trace's [T, heads, N].
  auto head_panel = [&](const std::vector<float>& w, int heads, int h, const std::string& name) {
    std::vector<float> v;
    for (int t = 0; t < steps; ++t)
      v.insert(v.end(), w.begin() + (static_cast<int64_t>(t) * heads + h) * trace.slots,
               w.begin() + (static_cast<int64_t>(t) * heads + h + 1) * trace.slots);
    panels.push_back({heads == 1 ? name : fmt::format("{} {}", name, h), std::move(v), steps, trace.slots});
  };
  for (int h = 0; h < trace.write_heads; ++h) head_panel(trace.write_w, trace.write_heads, h, "write weighting");
  for (int h = 0; h < trace.read_heads; ++h) head_panel(trace.read_w, trace.read_heads, h, "read weighting");
  viz::write_svg(a.out, viz::memory_svg(panels));
  std::printf("%s, %s %d%s: cost %.3f bits, %.0f wrong bits; wrote %s\n", dir.string().c_str(),
              task.task == NtmTaskKind::kRecall ? "items" : "length", a.length,
              task.task == NtmTaskKind::kRepeatCopy ? fmt::format(" x {} repeats", repeat).c_str() : "", l.bits,
              l.bit_errors, a.out.c_str());
}

struct SpeedArgs {
  std::string config;             // optional run config (default: the copy recipe)
  std::vector<std::string> sets;  // --set key=value
  std::vector<int> batches = {1, 16};
  int steps = 200, warmup = 20, threads = 1;
};

void run_speed(const SpeedArgs& a) {
  YAML::Node node;
  node["model"] = "ntm";
  if (!a.config.empty()) node = io::load_yaml_file(a.config);
  const NtmTrainConfig cfg = models::read_ntm_config(node, a.config.empty() ? "<defaults>" : a.config, a.sets);
  use_threads(a.threads);
  const auto& n = cfg.ntm.ntm;
  std::printf("%s on %s (lengths %d-%d cycling), %s, BLAS %s with %d thread%s\n",
              cfg.ntm.architecture == NtmArchitecture::kNtm ? "NTM" : "LSTM baseline",
              models::task_name(cfg.ntm.task.task), cfg.ntm.task.min_len, cfg.ntm.task.max_len,
              cfg.ntm.architecture == NtmArchitecture::kNtm
                  ? fmt::format("controller {} x{}, memory {} x {}, {} read / {} write heads, {} ops", n.controller_size,
                                n.controller_layers, n.memory_slots, n.memory_width, n.read_heads, n.write_heads,
                                n.fused ? "fused" : "composed")
                        .c_str()
                  : fmt::format("{} x {}", cfg.ntm.lstm.layers, cfg.ntm.lstm.hidden_size).c_str(),
              core::kernels::blas_backend(), a.threads, a.threads == 1 ? "" : "s");
  for (int batch : a.batches) {
    const double rate = ntm_training_speed(cfg, batch, a.steps, a.warmup);
    std::printf("batch %d: %.1f sequences/s (%d timed updates)\n", batch, rate, a.steps);
    std::fflush(stdout);
  }
}

}  // namespace

void register_ntm(CLI::App& app) {
  auto* ntm = app.add_subcommand("ntm", "Neural Turing Machine on the copy / repeat-copy / associative-recall tasks");
  ntm->require_subcommand(1);

  auto ea = std::make_shared<EvalArgs>();
  auto* eval = ntm->add_subcommand("eval", "cost in bits per sequence at each length");
  add_model_option(eval, ea->dir);
  eval->add_option("--lengths", ea->lengths, "sequence lengths (recall: item counts), e.g. 10,20,30,50,80,120")
      ->delimiter(',')->check(CLI::Range(1, kMaxLength));
  eval->add_option("--repeats", ea->repeats, "repeat copy: repeat counts (one, or one per length)")
      ->delimiter(',')->check(CLI::Range(1, 100));
  eval->add_option("--sequences", ea->sequences, "sequences per length")->check(CLI::Range(1, 100000));
  eval->add_option("--batch", ea->batch, "sequences per forward pass")->check(CLI::Range(1, 1024));
  eval->add_option("--seed", ea->seed, "seed of the test sequences")->check(CLI::NonNegativeNumber);
  add_threads_option(eval, ea->threads);
  eval->callback([ea] { run_eval(*ea); });

  auto sa = std::make_shared<ShowArgs>();
  auto* show = ntm->add_subcommand("show", "SVG of one run: inputs, outputs, write and read weightings over time");
  add_model_option(show, sa->dir);
  show->add_option("--length", sa->length, "sequence length (recall: items)")->check(CLI::Range(1, kMaxShowLength));
  show->add_option("--repeat", sa->repeat, "repeat copy: repeats (0 = the training maximum)")->check(CLI::Range(0, 100));
  show->add_option("--seed", sa->seed, "seed of the sequence")->check(CLI::NonNegativeNumber);
  add_output_option(show, sa->out, "SVG file to write");
  add_threads_option(show, sa->threads);
  show->callback([sa] { run_show(*sa); });

  auto pa = std::make_shared<SpeedArgs>();
  auto* speed = ntm->add_subcommand("speed", "training sequences/s (forward + backward + update)");
  speed->add_option("config", pa->config, "run config (model: ntm; default: the paper's copy recipe)");
  speed->add_option("--set", pa->sets, "override a config key, e.g. --set ntm.architecture=lstm (repeatable)");
  speed->add_option("--batch", pa->batches, "batch sizes, e.g. 1,16")->delimiter(',')->check(CLI::Range(1, 1024));
  speed->add_option("--steps", pa->steps, "timed updates per batch size")->check(CLI::Range(1, 1000000));
  speed->add_option("--warmup", pa->warmup, "untimed updates first")->check(CLI::Range(0, 1000000));
  add_threads_option(speed, pa->threads);
  speed->callback([pa] { run_speed(*pa); });
}

}  // namespace engram::cli
