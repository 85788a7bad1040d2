// Trainer: the shared training loop (see trainer.h for the run directory and resume contract).
#include "engram/train/trainer.h"

#include <chrono>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "engram/core/error.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "engram/optim/clip.h"
#include "engram/train/progress.h"

namespace engram::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Appends one JSON object per line to DIR/metrics.jsonl.
class MetricsLog {
 public:
  explicit MetricsLog(const fs::path& path) : out_(path, std::ios::app) {
    ENGRAM_CHECK(out_.good(), "cannot open metrics file {}", path.string());
  }
  void write(const nlohmann::json& j) {
    out_ << j.dump() << '\n';
    out_.flush();
  }

 private:
  std::ofstream out_;
};

// JSON has no infinities: non-finite scalars are stored as strings ("inf", "-inf", "nan").
nlohmann::json scalars_to_json(const std::map<std::string, double>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) {
    if (std::isfinite(v)) j[k] = v;
    else j[k] = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  }
  return j;
}

std::map<std::string, double> scalars_from_json(const nlohmann::json& j) {
  std::map<std::string, double> m;
  for (const auto& [k, v] : j.items()) m[k] = v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>();
  return m;
}

// Keeps the lines of a metrics file whose "step" is at most `step` (and lines without one), so a
// resumed run does not log the steps after its checkpoint twice. Rewritten atomically.
void truncate_metrics_after(const fs::path& path, int64_t step) {
  std::ifstream in(path);
  if (!in.good()) return;
  std::string kept, line;
  bool dropped = false;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("step") && j["step"].is_number() && j["step"].get<int64_t>() > step) {
      dropped = true;
      continue;
    }
    kept += line + "\n";
  }
  in.close();
  if (dropped) io::write_file_atomic(path, kept);
}

// The name of the first parameter whose gradient holds a non-finite value ("" if none).
std::string non_finite_param(nn::ParamStore& p) {
  for (nn::ParamId id = 0; id < p.count(); ++id) {
    const core::Tensor g = p.grad(id);
    const int64_t n = p.shape(id).numel();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(g.data[i])) return p.name(id);
  }
  return "";
}

std::string metrics_text(const Metrics& m) {
  std::string s;
  for (const auto& [k, v] : m) s += fmt::format("{}{} {:.4g}", s.empty() ? "" : "  ", k, v);
  return s;
}

}  // namespace

uint64_t batch_seed(uint64_t seed, int epoch, int64_t index) {
  const uint64_t b = static_cast<uint64_t>(epoch), c = static_cast<uint64_t>(index);
  uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^ c;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t epoch_seed(uint64_t seed, int epoch) { return batch_seed(seed, epoch, -1); }

void check_trainer_config(const TrainerConfig& c) {
  ENGRAM_CHECK(c.max_epochs > 0 || c.max_steps > 0, "train: max_epochs and max_steps are both 0");
  ENGRAM_CHECK(c.max_epochs >= 0 && c.max_steps >= 0 && c.valid_every >= 0 && c.checkpoint_every >= 0 &&
                   c.patience >= 0,
               "train: max_epochs {}, max_steps {}, valid_every {}, checkpoint_every {} and patience {} must be >= 0",
               c.max_epochs, c.max_steps, c.valid_every, c.checkpoint_every, c.patience);
  ENGRAM_CHECK(std::isfinite(c.max_minutes) && c.max_minutes >= 0, "train: max_minutes {} must be >= 0",
               c.max_minutes);
  ENGRAM_CHECK(!c.run_dir.empty(), "train: run_dir is empty");
  ENGRAM_CHECK(c.log_every > 0, "train: log_every must be positive, got {}", c.log_every);
  optim::check_clip_config(c.clip);
  ENGRAM_CHECK(c.max_bad_steps >= 0, "train.max_bad_steps must be >= 0 (0 = never stop), got {}", c.max_bad_steps);
  // The optimizer and the schedule check their own options: build them once on a probe.
  nn::ParamStore probe;
  probe.add("probe", {1});
  optim::make_optimizer(probe, c.optimizer);
  if (c.schedule.is_plateau()) optim::make_plateau(c.schedule, c.optimizer.lr);
  else optim::make_schedule(c.schedule, c.optimizer.lr);
}

Trainer::Trainer(TrainTask& task, TrainerConfig cfg) : task_(task), cfg_(std::move(cfg)) { check_trainer_config(cfg_); }

Updater::Updater(TrainTask& task, const TrainerConfig& cfg)
    : task_(task), clip_(cfg.clip), opt_(optim::make_optimizer(task.params(), cfg.optimizer)) {
  optim::check_clip_config(clip_);
}

Updater::Result Updater::update(int64_t index) {
  nn::ParamStore& params = task_.params();
  params.zero_grad();
  Result res;
  res.batch = task_.train_batch(index);
  res.grad_norm = optim::global_norm(params.grads(), params.numel());
  if (!std::isfinite(res.batch.loss_sum) || !std::isfinite(res.grad_norm)) {
    res.skipped = true;
    res.bad_param = non_finite_param(params);
    return res;
  }
  optim::clip_gradients(params, clip_);
  opt_->step();
  return res;
}

TrainSummary Trainer::run() {
  const auto t0 = Clock::now();
  const fs::path dir = cfg_.run_dir;
  fs::create_directories(dir);
  nn::ParamStore& params = task_.params();
  Updater updater(task_, cfg_);
  optim::Optimizer* opt = &updater.optimizer();
  const bool plateau_mode = cfg_.schedule.is_plateau();
  std::unique_ptr<optim::LrSchedule> schedule;
  optim::ReduceOnPlateau plateau = optim::make_plateau(
      plateau_mode ? cfg_.schedule : optim::ScheduleConfig{.name = "plateau", .maximize = task_.higher_is_better()},
      cfg_.optimizer.lr);
  if (!plateau_mode) schedule = optim::make_schedule(cfg_.schedule, cfg_.optimizer.lr);

  TrainSummary sum;
  int64_t step = 0;
  int start_epoch = 0;
  int64_t start_index = 0;
  bool has_best = false;
  double best = 0;
  int bad_validations = 0;

  // ---- resume
  const fs::path last_dir = dir / "last", best_dir = dir / "best";
  io::remove_checkpoint_leftovers(last_dir);  // and recover last/ from an interrupted swap
  io::remove_checkpoint_leftovers(best_dir);
  double prior_seconds = 0;  // training seconds of earlier sessions (resume)
  if (fs::exists(last_dir)) {
    io::CheckpointInfo info = io::load_checkpoint(last_dir, params, opt);
    ENGRAM_CHECK(info.model_name == task_.model_name(), "run dir {} holds a '{}' model, not '{}'", dir.string(),
                 info.model_name, task_.model_name());
    const nlohmann::json& t = info.trainer;
    ENGRAM_CHECK(t.is_object() && t.contains("step"), "{}: trainer.json lacks the training position", last_dir.string());
    step = t.at("step").get<int64_t>();
    start_epoch = t.at("epoch").get<int>();
    start_index = t.at("next_batch").get<int64_t>();
    has_best = t.value("has_best", false);
    best = t.value("best", 0.0);
    bad_validations = t.value("bad_validations", 0);
    if (t.contains("plateau")) plateau.load_state_scalars(scalars_from_json(t.at("plateau")));
    if (t.contains("extra")) task_.load_extra_state(t.at("extra"));
    prior_seconds = t.value("elapsed_s", 0.0);
    sum.resumed = true;
  }
  // Lines logged after the checkpoint resumed from would be logged again: keep each step once.
  if (sum.resumed) truncate_metrics_after(dir / "metrics.jsonl", step);
  MetricsLog metrics(dir / "metrics.jsonl");
  ProgressLine progress;
  if (sum.resumed) {
    // A run that already reached its step or epoch limit, or stopped early, is finished: running
    // it again changes nothing (raise train.max_steps / max_epochs to train further).
    const bool steps_done = cfg_.max_steps > 0 && step >= cfg_.max_steps;
    const bool epochs_done = cfg_.max_epochs > 0 && start_epoch >= cfg_.max_epochs;
    const bool stopped_early = cfg_.patience > 0 && bad_validations >= cfg_.patience;
    if (steps_done || epochs_done || stopped_early) {
      progress.print(fmt::format("{} is finished at step {} ({}); nothing to do", dir.string(), step,
                                 steps_done ? "train.max_steps" : epochs_done ? "train.max_epochs" : "early stopping"));
      sum.steps = step;
      sum.epochs_done = start_epoch;
      sum.best_metric = best;
      sum.early_stopped = stopped_early;
      sum.seconds = 0;
      return sum;
    }
    progress.print(fmt::format("resuming {} at step {} (epoch {}, batch {})", dir.string(), step, start_epoch + 1,
                               start_index));
  }

  const int64_t per_epoch = task_.batches_per_epoch();
  ENGRAM_CHECK(per_epoch > 0, "trainer: the task has no training batches");
  const int64_t total_steps = cfg_.max_steps > 0 ? cfg_.max_steps : per_epoch * cfg_.max_epochs;

  int64_t last_saved_step = -1;
  auto trainer_state = [&](int epoch, int64_t next_batch) {
    nlohmann::json t;
    t["step"] = step;
    t["epoch"] = epoch;
    t["next_batch"] = next_batch;
    t["has_best"] = has_best;
    t["best"] = best;
    t["bad_validations"] = bad_validations;
    t["plateau"] = scalars_to_json(plateau.state_scalars());
    t["seed"] = cfg_.seed;
    t["extra"] = task_.extra_state();
    t["elapsed_s"] = prior_seconds + seconds_since(t0);
    return t;
  };
  auto save = [&](const fs::path& where, int epoch, int64_t next_batch, bool with_optimizer) {
    io::CheckpointData d;
    d.model_name = task_.model_name();
    d.config = task_.model_config();
    d.params = &params;
    d.optimizer = with_optimizer ? opt : nullptr;
    d.trainer = trainer_state(epoch, next_batch);
    d.files = task_.checkpoint_files();
    io::save_checkpoint(where, d);
    if (with_optimizer) last_saved_step = step;
  };
  // Position after the batch just done: (epoch, index + 1), rolled over at the epoch's end.
  auto position_after = [&](int epoch, int64_t index) {
    return index + 1 >= per_epoch ? std::pair<int, int64_t>{epoch + 1, 0} : std::pair<int, int64_t>{epoch, index + 1};
  };

  bool stop = false;
  auto validate = [&](int epoch, int64_t index) {
    Metrics m = task_.validate();
    const std::string key = task_.primary_metric();
    ENGRAM_CHECK(m.count(key), "validation did not report the primary metric '{}'", key);
    const double v = m.at(key);
    const bool improved = !has_best || (task_.higher_is_better() ? v > best : v < best);
    if (improved) {
      best = v;
      has_best = true;
      bad_validations = 0;
    } else {
      ++bad_validations;
    }
    if (plateau_mode) opt->set_lr(plateau.observe(v));
    task_.after_validation(m);
    // elapsed_s: training wall clock so far, earlier sessions of a resumed run included.
    nlohmann::json j = {{"event", "valid"}, {"step", step}, {"epoch", epoch + 1}, {"lr", opt->lr()},
                        {"elapsed_s", prior_seconds + seconds_since(t0)}};
    for (const auto& [k, val] : m) j[k] = val;
    metrics.write(j);
    sum.last_valid = m;
    auto [e, i] = position_after(epoch, index);
    if (improved) save(best_dir, e, i, false);
    if (cfg_.checkpoint_every == 0) save(last_dir, e, i, true);
    progress.print(fmt::format("valid step {}  {}{}", step, metrics_text(m), improved ? "  (best)" : ""));
    if (cfg_.patience > 0 && bad_validations >= cfg_.patience) {
      progress.print(fmt::format("early stopping: {} validations without improvement", bad_validations));
      sum.early_stopped = true;
      stop = true;
    }
  };

  double window_loss = 0;
  int64_t window_units = 0, window_steps = 0;
  int bad_in_row = 0;  // consecutive non-finite batches (the NaN guard)
  auto window_t0 = Clock::now();
  const int64_t start_step = step;
  int epoch = start_epoch;
  for (; epoch < cfg_.max_epochs || cfg_.max_epochs == 0; ++epoch) {
    if (stop) break;
    task_.begin_epoch(epoch, cfg_.seed);
    int64_t index = epoch == start_epoch ? start_index : 0;
    for (; index < per_epoch; ++index) {
      if (!plateau_mode) opt->set_lr(schedule->lr(step));
      const Updater::Result u = updater.update(index);
      const BatchResult& r = u.batch;
      if (u.skipped) {
        const double norm = u.grad_norm;
        const std::string& where = u.bad_param;
        progress.print(fmt::format("warning: step {} (epoch {}, batch {}): non-finite loss {} or gradient norm {}{}; "
                                   "update skipped", step + 1, epoch + 1, index, r.loss_sum, norm,
                                   where.empty() ? "" : " (first in " + where + ")"));
        metrics.write({{"event", "nan"}, {"step", step + 1}, {"epoch", epoch + 1}, {"batch", index}, {"param", where}});
        ++bad_in_row;
        ENGRAM_CHECK(cfg_.max_bad_steps == 0 || bad_in_row < cfg_.max_bad_steps,
                     "stopped: {} batches in a row had a non-finite loss or gradient (the last at step {}{}); "
                     "lower the learning rate or clip harder (train.clip)", bad_in_row, step + 1,
                     where.empty() ? "" : ", parameter " + where);
      } else {
        bad_in_row = 0;
      }
      ++step;
      window_loss += r.loss_sum;
      window_units += r.units;
      ++window_steps;
      if (on_step) on_step(step);
      if (step % cfg_.log_every == 0) {
        const double secs = seconds_since(window_t0);
        const double loss = window_units ? window_loss / window_units : 0;
        const double rate = secs > 0 ? window_units / secs : 0;
        const double eta = (total_steps - step) * (secs / std::max<int64_t>(window_steps, 1));
        const bool ppl = task_.reports_perplexity();
        progress.update(fmt::format("step {}  epoch {}  loss {:.4f}{}  {:.0f} units/s  lr {:.3g}  ETA {}", step,
                                    epoch + 1, loss,
                                    ppl ? fmt::format("  ppl {:.2f}", std::exp(std::min(loss, 50.0))) : "", rate,
                                    opt->lr(), format_duration(eta)));
        nlohmann::json line = {{"event", "train"}, {"step", step}, {"epoch", epoch + 1}, {"loss", loss}};
        if (ppl) line["ppl"] = std::exp(std::min(loss, 50.0));
        line["units_per_s"] = rate;
        line["lr"] = opt->lr();
        metrics.write(line);
        window_loss = 0;
        window_units = window_steps = 0;
        window_t0 = Clock::now();
      }
      if (cfg_.valid_every > 0 && step % cfg_.valid_every == 0) validate(epoch, index);
      if (cfg_.checkpoint_every > 0 && step % cfg_.checkpoint_every == 0) {
        auto [e, i] = position_after(epoch, index);
        save(last_dir, e, i, true);
      }
      const bool out_of_time = cfg_.max_minutes > 0 && seconds_since(t0) > cfg_.max_minutes * 60;
      if ((cfg_.max_steps > 0 && step >= cfg_.max_steps) || out_of_time) {
        if (out_of_time) progress.print(fmt::format("time limit of {} minutes reached", cfg_.max_minutes));
        const bool just_validated = cfg_.valid_every > 0 && step % cfg_.valid_every == 0;
        if (!just_validated) validate(epoch, index);
        if (last_saved_step != step) {
          auto [e, i] = position_after(epoch, index);
          save(last_dir, e, i, true);
        }
        stop = true;
      }
      if (stop) break;
    }
    if (stop) break;
    if (cfg_.valid_every == 0) validate(epoch, per_epoch - 1);
  }
  if (!stop && step > start_step && last_saved_step != step) save(last_dir, epoch, 0, true);
  sum.steps = step;
  sum.epochs_done = epoch;
  sum.best_metric = best;
  sum.seconds = seconds_since(t0);
  return sum;
}

}  // namespace engram::train
