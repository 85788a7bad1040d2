// The one shape of a family's train entry on the shared Trainer (models::Family::train): the
// trainer config checked before anything is written, one process per run directory (RunDirLock),
// the task built on rank 0 first (a task may write vocabularies and train.yaml into the run
// directory, which the other ranks then read), the Trainer run, and one summary line. A recipe of
// several Trainer runs in one command (memn2n: one per seed, and per task unless joint) shares
// the first two under one lock (train_runs).
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engram/core/memory.h"
#include "engram/core/rng.h"
#include "engram/io/config.h"
#include "engram/train/run_config.h"

#include "engram/train/distributed.h"
#include "engram/train/run_lock.h"
#include "engram/train/trainer.h"

namespace engram::models {

// A line of a task's setup log (data and vocabulary notes), flushed at once; `log` null: none.
inline void log_note(std::FILE* log, const std::string& text) {
  if (!log) return;
  std::fprintf(log, "%s\n", text.c_str());
  std::fflush(log);
}

// Text pairs of one split (source and target lines, aligned).
struct TextPairs {
  std::vector<std::string> src, tgt;
};

// A text family's generated pairs (data.generate_train / generate_valid) checked against the
// machine's memory before they are drawn: each is held twice (the generator's pair and the
// split's copy), four strings at least.
inline void check_generated_pairs(std::string_view family, int64_t generate_train, int64_t generate_valid) {
  for (const auto& [key, n] :
       {std::pair{"generate_train", generate_train}, std::pair{"generate_valid", generate_valid}})
    core::check_memory(4.0 * sizeof(std::string) * static_cast<double>(n),
                       fmt::format("{}: data.{} {}", family, key, n));
}

// The split of a text family's pairs when its run names no validation data: `held` of all's
// pairs (src / tgt), chosen by a fixed seed (the same ones every run), move to `valid`, the rest
// to `train`, each in file order.
template <class Pairs>
void hold_out(Pairs& all, int64_t held, TextPairs& train, TextPairs& valid) {
  std::vector<size_t> idx(all.src.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  core::Rng split(12345);
  split.shuffle(idx.begin(), idx.end());
  std::vector<bool> is_held(idx.size(), false);
  for (int64_t i = 0; i < held; ++i) is_held[idx[i]] = true;
  for (size_t i = 0; i < idx.size(); ++i) {
    TextPairs& to = is_held[i] ? valid : train;
    to.src.push_back(std::move(all.src[i]));
    to.tgt.push_back(std::move(all.tgt[i]));
  }
}

// "done: N steps in S s[ (resumed)][ (early stop)]; best METRIC V; NEXT" (V with `digits` decimals).
inline std::string train_summary(const train::TrainSummary& s, const std::string& metric, int digits,
                                 const std::string& next) {
  return fmt::format("done: {} steps in {:.1f} s{}{}; best {} {:.{}f}; {}", s.steps, s.seconds,
                     s.resumed ? " (resumed)" : "", s.early_stopped ? " (early stop)" : "", metric, s.best_metric,
                     digits, next);
}

// Checks `tc` (before anything is written), then returns `runs()` (the summary line) with tc's
// run directory locked for this process.
template <class Runs>
std::string train_runs(const train::TrainerConfig& tc, Runs&& runs) {
  train::check_trainer_config(tc);
  const train::RunDirLock lock(tc.run_dir);
  return runs();
}

// Trains the task `make()` builds (a std::unique_ptr<Task>) and returns `done(task, summary)`.
// The Trainer runs with the task's own train config where the task has one (config().train: a
// task that completes its config, e.g. with the vocabulary sizes), else with `tc`.
template <class Make, class Done>
std::string train_task(const train::TrainerConfig& tc, Make&& make, Done&& done) {
  return train_runs(tc, [&] {
    decltype(make()) task;
    train::root_first([&] { task = make(); });
    const train::TrainerConfig* used = &tc;
    if constexpr (requires { task->config().train; }) used = &task->config().train;
    train::Trainer trainer(*task, *used);
    const train::TrainSummary s = trainer.run();
    return done(*task, s);
  });
}

// The same with the one summary line: train_summary(s, the task's primary metric, digits, next).
template <class Make>
std::string train_task(const train::TrainerConfig& tc, Make&& make, int digits, const std::string& next) {
  return train_task(tc, make, [&](const train::TrainTask& task, const train::TrainSummary& s) {
    return train_summary(s, task.primary_metric(), digits, next);
  });
}

// The same for a task built from a run config `cfg` (with cfg.train), written as the run
// directory's train.yaml first.
template <class Config, class Make>
std::string train_config_task(const Config& cfg, Make&& make, int digits, const std::string& next) {
  auto write_then_make = [&] {
    train::write_run_config(cfg.train.run_dir, io::dump_config(cfg));
    return make();
  };
  return train_task(cfg.train, write_then_make, digits, next);
}

}  // namespace engram::models
