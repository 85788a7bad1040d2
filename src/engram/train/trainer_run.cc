// Trainer::run: the run of a task from its position (fresh, or resumed from RUN/last) through its
// phases (PhaseRun: each phase's epochs of updates with validation, logging and checkpoints).
// The run directory and resume contract: trainer.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "engram/core/error.h"
#include "engram/io/checkpoint.h"
#include "engram/io/files.h"
#include "engram/train/progress.h"
#include "engram/train/trainer.h"

namespace engram::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Appends one JSON object per line to DIR/metrics.jsonl; on ranks other than 0 of a distributed
// run, writes nothing (rank 0 logs for the job).
class MetricsLog {
 public:
  explicit MetricsLog(const fs::path& path) : path_(path.string()) {
    if (!world().root()) return;
    out_.open(path, std::ios::app);
    ENGRAM_CHECK(out_.good(), "cannot open metrics file {}", path_);
  }
  void write(const nlohmann::json& j) {
    if (!world().root()) return;
    out_ << j.dump() << '\n';
    out_.flush();
    ENGRAM_CHECK(out_.good(), "cannot write metrics file {}", path_);
  }

 private:
  std::string path_;
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
  ENGRAM_CHECK(j.is_object(), "scalars must be an object of numbers, got {}", j.type_name());
  std::map<std::string, double> m;
  for (const auto& [k, v] : j.items()) {
    ENGRAM_CHECK(v.is_number() || v.is_string(), "'{}' is not a number", k);
    if (v.is_number()) {
      m[k] = v.get<double>();
      continue;
    }
    const std::string& text = v.get_ref<const std::string&>();
    char* end = nullptr;
    m[k] = std::strtod(text.c_str(), &end);
    ENGRAM_CHECK(!text.empty() && end == text.c_str() + text.size(), "'{}' is not a number", k);
  }
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


std::string metrics_text(const Metrics& m) {
  std::string s;
  for (const auto& [k, v] : m) s += fmt::format("{}{} {:.4g}", s.empty() ? "" : "  ", k, v);
  return s;
}


// Where a run stands: its phase, the step within the phase (offset: the steps of the phases
// before it, so metrics count steps over the whole run), the epoch and batch to go on from, the
// phase's best metric and patience, the states a checkpoint carries for the phase (plateau,
// task, log window) and the training seconds of earlier sessions.
struct RunPosition {
  int phase = 0;
  int64_t offset = 0, step = 0;
  int start_epoch = 0;
  int64_t start_index = 0;
  bool has_best = false;
  double best = 0;
  int bad_validations = 0;
  nlohmann::json plateau_state, extra_state, window_state;
  double prior_seconds = 0;

  // The next phase starts at its step 0, epoch 0, without a best.
  void next_phase() {
    offset += step;
    step = 0, start_epoch = 0, start_index = 0, has_best = false, best = 0, bad_validations = 0;
  }
};

// The position in `last`'s trainer.json; a damaged one is an error naming the file.
RunPosition read_position(const nlohmann::json& t, const fs::path& last_dir, int main_phase) {
  RunPosition pos;
  ENGRAM_CHECK(t.is_object() && t.contains("step"), "{}: trainer.json lacks the training position", last_dir.string());
  try {  // a key of the wrong type or missing, or a number that is no number: one line naming the file
    // A checkpoint without a phase predates phases: it is in the main phase.
    pos.phase = t.value("phase", main_phase);
    ENGRAM_CHECK(pos.phase >= 0 && pos.phase <= main_phase, "{}: phase {} of a task with {} phases", last_dir.string(),
                 pos.phase, main_phase + 1);
    for (const char* k : {"step", "epoch", "next_batch"})
      ENGRAM_CHECK(t.contains(k) && t.at(k).is_number_integer() && t.at(k).get<int64_t>() >= 0,
                   "'{}' is missing or not a count", k);
    pos.offset = t.value("offset", int64_t{0});
    pos.step = t.at("step").get<int64_t>() - pos.offset;
    pos.start_epoch = t.at("epoch").get<int>();
    pos.start_index = t.at("next_batch").get<int64_t>();
    pos.has_best = t.value("has_best", false);
    pos.best = t.value("best", 0.0);
    pos.bad_validations = t.value("bad_validations", 0);
    if (t.contains("plateau")) pos.plateau_state = t.at("plateau");
    if (t.contains("extra")) pos.extra_state = t.at("extra");
    if (t.contains("window")) {
      pos.window_state = t.at("window");
      const std::map<std::string, double> win = scalars_from_json(pos.window_state);
      for (const char* k : {"loss", "units", "steps"}) ENGRAM_CHECK(win.count(k), "no window '{}'", k);
      ENGRAM_CHECK(win.at("units") >= 0 && win.at("steps") >= 0 && win.at("units") <= 9.007199254740992e15 &&
                       win.at("steps") <= 9.007199254740992e15,
                   "window units {} and steps {} must be counts", win.at("units"), win.at("steps"));
    }
    pos.prior_seconds = t.value("elapsed_s", 0.0);
  } catch (const Error& e) {
    throw Error(fmt::format("{} is damaged: {}", (last_dir / "trainer.json").string(), e.what()));
  } catch (const std::exception& e) {
    throw Error(fmt::format("{} is damaged ({})", (last_dir / "trainer.json").string(), e.what()));
  }
  return pos;
}

// S of a kept checkpoint's directory name "step-S" (train.keep_checkpoints), else -1.
int64_t kept_step(std::string_view name) {
  if (!name.starts_with("step-")) return -1;
  const std::string_view digits = name.substr(5);
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return -1;
  return std::stoll(std::string(digits));
}

// What every phase of one run shares: the task, the run's config and directories, the log, the
// phases, the clocks and the position and summary it advances.
struct RunContext {
  TrainTask& task;
  const TrainerConfig& cfg;
  const World& w;
  fs::path dir, last_dir, best_dir;
  std::vector<TrainPhase> pre;  // phases before the main one
  int main_phase = 0;
  int64_t per_epoch = 0;        // batches per epoch
  Clock::time_point t0;         // this session's start
  std::function<bool()> out_of_time;
  const std::function<void(int64_t)>& on_step;
  MetricsLog& metrics;
  ProgressLine& progress;
  RunPosition& pos;
  TrainSummary& sum;
};

// One phase of a run (an earlier phase, or the main one): its limits and learning rate, a fresh
// optimizer, the schedule, the log window; then its epochs of updates with validation, logging
// and checkpoints, until a limit, early stopping or the time limit.
class PhaseRun {
 public:
  // Begins phase c.pos.phase (TrainTask::begin_phase) with its config, optimizer and schedule.
  explicit PhaseRun(RunContext& c);
  // Resumes the phase from last/ when the run resumes in it. false: the phase is already done
  // (the run is finished when it is the main phase: `finished`).
  bool resume(std::optional<io::CheckpointInfo>& resumed, bool& finished);
  // The epochs of updates; true when the run stopped on the time limit or a stop request.
  bool train();

 private:
  void check_same_parameters();
  nlohmann::json trainer_state(int epoch, int64_t next_batch);
  void save(const fs::path& where, int epoch, int64_t next_batch, bool with_optimizer);
  void keep_checkpoint(int epoch, int64_t next_batch);
  std::pair<int, int64_t> position_after(int epoch, int64_t index) const;
  void validate(int epoch, int64_t index);
  void report_skipped(const Updater::Result& u, int epoch, int64_t index);
  void log_window(int epoch);
  // After an update: logging, validation, checkpoints, the rank check and the step and time
  // limits. true when the phase stops here.
  bool after_update(int epoch, int64_t index, bool& timed_out);

  RunContext& c_;
  const bool is_main_;
  const TrainerConfig pc_;  // this phase's limits, lr and schedule
  Updater updater_;          // a fresh optimizer per phase
  optim::Optimizer* opt_;
  const bool plateau_mode_;
  std::unique_ptr<optim::LrSchedule> schedule_;
  optim::ReduceOnPlateau plateau_;
  // The log window: the updates since the last train line (every log_every). Its sums are
  // checkpointed with the position, so a resumed run logs the loss an uninterrupted one does
  // whatever checkpoint_every is.
  double window_loss_ = 0, window_allreduce_s_ = 0;
  int64_t window_units_ = 0, window_steps_ = 0;
  Clock::time_point window_t0_;
  int64_t last_saved_step_ = -1;
  bool stop_ = false;
  int bad_in_row_ = 0;  // consecutive non-finite batches (the NaN guard)
};

// This phase's config: the main phase is the run's; an earlier phase has its epochs (capped at
// train.max_epochs), train.max_steps, its patience and a constant lr.
TrainerConfig phase_config(const RunContext& c, int phase) {
  TrainerConfig pc = c.cfg;
  if (phase != c.main_phase) {
    const TrainPhase& ph = c.pre[phase];
    pc.max_epochs = c.cfg.max_epochs > 0 ? std::min(ph.max_epochs, c.cfg.max_epochs) : ph.max_epochs;
    pc.patience = ph.patience;
    pc.optimizer.lr = ph.lr;
    pc.schedule = optim::ScheduleConfig{.name = "constant"};
  }
  return pc;
}

PhaseRun::PhaseRun(RunContext& c)
    : c_(c),
      is_main_(c.pos.phase == c.main_phase),
      pc_((c.task.begin_phase(c.pos.phase), phase_config(c, c.pos.phase))),
      updater_(c.task, pc_),
      opt_(&updater_.optimizer()),
      plateau_mode_(pc_.schedule.is_plateau()),
      plateau_(optim::make_plateau(
          plateau_mode_ ? pc_.schedule : optim::ScheduleConfig{.name = "plateau", .maximize = c.task.higher_is_better()},
          pc_.optimizer.lr)) {
  if (!plateau_mode_) schedule_ = optim::make_schedule(pc_.schedule, pc_.optimizer.lr);
}

bool PhaseRun::resume(std::optional<io::CheckpointInfo>& resumed, bool& finished) {
  RunPosition& pos = c_.pos;
  finished = false;
  if (resumed) {  // the checkpoint is of this phase: its parameters, optimizer, plateau and task state
    io::load_checkpoint(c_.last_dir, c_.task.params(), opt_);
    if (pos.plateau_state.is_object()) plateau_.load_state_scalars(scalars_from_json(pos.plateau_state));
    if (!pos.extra_state.is_null()) c_.task.load_extra_state(pos.extra_state);
    if (pos.window_state.is_object()) {
      const std::map<std::string, double> win = scalars_from_json(pos.window_state);
      window_loss_ = win.at("loss");
      window_units_ = static_cast<int64_t>(win.at("units"));
      window_steps_ = static_cast<int64_t>(win.at("steps"));
    }
    resumed.reset();
    // A phase that already reached its limits, or stopped early, is done; a finished run run
    // again changes nothing (raise train.max_steps / max_epochs to train further).
    const bool steps_done = pc_.max_steps > 0 && pos.step >= pc_.max_steps;
    const bool epochs_done = pc_.max_epochs > 0 && pos.start_epoch >= pc_.max_epochs;
    const bool stopped_early = pc_.patience > 0 && pos.bad_validations >= pc_.patience;
    if (steps_done || epochs_done || stopped_early) {
      if (is_main_) {
        c_.progress.print(fmt::format("{} is finished at step {} ({}); nothing to do", c_.dir.string(),
                                      pos.offset + pos.step,
                                      steps_done ? "train.max_steps" : epochs_done ? "train.max_epochs" : "early stopping"));
        c_.sum.phase = pos.phase;
        c_.sum.steps = pos.offset + pos.step;
        c_.sum.epochs_done = pos.start_epoch;
        c_.sum.best_metric = pos.best;
        c_.sum.early_stopped = stopped_early;
        finished = true;
        return false;
      }
      pos.next_phase();
      return false;
    }
    c_.progress.print(fmt::format("resuming {} at step {} (epoch {}, batch {}{})", c_.dir.string(),
                                  pos.offset + pos.step, pos.start_epoch + 1, pos.start_index,
                                  is_main_ ? "" : ", phase " + c_.pre[pos.phase].name));
  } else if (!is_main_) {
    c_.progress.print(fmt::format("phase {}: up to {} epochs{} at lr {:.3g}", c_.pre[pos.phase].name, pc_.max_epochs,
                                  pc_.max_steps > 0 ? fmt::format(" or {} updates", pc_.max_steps) : "",
                                  pc_.optimizer.lr));
  }
  // Every rank must hold the same parameters: at the start of each phase (same seed, same
  // checkpoint) and every distributed.check_every updates (same updates).
  if (c_.w.distributed() && pc_.distributed.check_every > 0) check_same_parameters();
  return true;
}

void PhaseRun::check_same_parameters() {
  const nn::ParamStore& params = c_.task.params();
  const uint64_t h = checksum(params.values(), static_cast<size_t>(params.numel()));
  ENGRAM_CHECK(all_equal(h, "the parameter checksum"), "the parameters differ between ranks at step {} "
               "(checksum of rank {}: {:016x}); the ranks must run the same engram binary, config and "
               "thread count", c_.pos.offset + c_.pos.step, c_.w.rank, h);
}

nlohmann::json PhaseRun::trainer_state(int epoch, int64_t next_batch) {
  const RunPosition& pos = c_.pos;
  nlohmann::json t;
  t["phase"] = pos.phase;
  t["offset"] = pos.offset;
  t["step"] = pos.offset + pos.step;
  t["epoch"] = epoch;
  t["next_batch"] = next_batch;
  t["has_best"] = pos.has_best;
  t["best"] = pos.best;
  t["bad_validations"] = pos.bad_validations;
  t["plateau"] = scalars_to_json(plateau_.state_scalars());
  t["seed"] = c_.cfg.seed;
  t["extra"] = c_.task.extra_state();
  t["window"] = scalars_to_json({{"loss", window_loss_},
                                 {"units", static_cast<double>(window_units_)},
                                 {"steps", static_cast<double>(window_steps_)}});
  t["elapsed_s"] = pos.prior_seconds + seconds_since(c_.t0);
  return t;
}

// RUN/step-S of this validation, then the oldest RUN/step-* beyond keep_checkpoints removed
// (ordered by S; names that are not step-DIGITS are left alone).
void PhaseRun::keep_checkpoint(int epoch, int64_t next_batch) {
  const int64_t step = c_.pos.offset + c_.pos.step;
  save(c_.dir / fmt::format("step-{}", step), epoch, next_batch, false);
  if (!c_.w.root()) return;
  std::vector<std::pair<int64_t, fs::path>> kept;
  for (const fs::directory_entry& e : fs::directory_iterator(c_.dir)) {
    const int64_t s = kept_step(e.path().filename().string());
    if (s >= 0 && e.is_directory()) kept.emplace_back(s, e.path());
  }
  std::sort(kept.begin(), kept.end());
  for (size_t k = 0; k + pc_.keep_checkpoints < kept.size(); ++k) {
    std::error_code ec;
    fs::remove_all(kept[k].second, ec);
    ENGRAM_CHECK(!ec, "cannot remove the old checkpoint {}: {}", kept[k].second.string(), ec.message());
  }
}

void PhaseRun::save(const fs::path& where, int epoch, int64_t next_batch, bool with_optimizer) {
  if (with_optimizer) last_saved_step_ = c_.pos.step;
  if (!c_.w.root()) return;  // rank 0 writes the job's checkpoints
  io::CheckpointData d;
  d.model_name = c_.task.model_name();
  d.config = c_.task.model_config();
  d.params = &c_.task.params();
  d.optimizer = with_optimizer ? opt_ : nullptr;
  d.trainer = trainer_state(epoch, next_batch);
  d.files = c_.task.checkpoint_files();
  io::save_checkpoint(where, d);
}

// Position after the batch just done: (epoch, index + 1), rolled over at the epoch's end.
std::pair<int, int64_t> PhaseRun::position_after(int epoch, int64_t index) const {
  return index + 1 >= c_.per_epoch ? std::pair<int, int64_t>{epoch + 1, 0} : std::pair<int, int64_t>{epoch, index + 1};
}

void PhaseRun::validate(int epoch, int64_t index) {
  RunPosition& pos = c_.pos;
  // Rank 0 validates; the others take its metrics, so every rank makes the same decisions.
  Metrics m;
  if (c_.w.root()) m = c_.task.validate();
  if (c_.w.distributed()) {
    std::string text = c_.w.root() ? scalars_to_json(m).dump() : "";
    broadcast(text, "the validation metrics (validation runs on rank 0)");
    if (!c_.w.root()) m = scalars_from_json(nlohmann::json::parse(text));
  }
  const std::string key = c_.task.primary_metric();
  ENGRAM_CHECK(m.count(key), "validation did not report the primary metric '{}'", key);
  const double v = m.at(key);
  const bool improved = !pos.has_best || (c_.task.higher_is_better() ? v > pos.best : v < pos.best);
  const bool keep = improved || (pc_.best_ties == "latest" && v == pos.best);  // best/ takes this one
  if (improved) {
    pos.best = v;
    pos.has_best = true;
    pos.bad_validations = 0;
  } else {
    ++pos.bad_validations;
  }
  if (plateau_mode_) opt_->set_lr(plateau_.observe(v));
  c_.task.after_validation(m);
  // elapsed_s: training wall clock so far, earlier sessions of a resumed run included.
  nlohmann::json j = {{"event", "valid"}, {"step", pos.offset + pos.step}, {"epoch", epoch + 1}, {"lr", opt_->lr()},
                      {"elapsed_s", pos.prior_seconds + seconds_since(c_.t0)}};
  if (!is_main_) j["phase"] = c_.pre[pos.phase].name;
  for (const auto& [k, val] : m) j[k] = val;
  c_.metrics.write(j);
  c_.sum.last_valid = m;
  auto [e, i] = position_after(epoch, index);
  if (keep && is_main_) save(c_.best_dir, e, i, false);  // best/ is the main phase's
  if (is_main_ && pc_.keep_checkpoints > 0) keep_checkpoint(e, i);
  if (pc_.checkpoint_every == 0) save(c_.last_dir, e, i, true);
  c_.progress.print(fmt::format("valid step {}  {}{}", pos.offset + pos.step, metrics_text(m), keep ? "  (best)" : ""));
  if (pc_.patience > 0 && pos.bad_validations >= pc_.patience) {
    c_.progress.print(fmt::format("{}: {} validations without improvement", is_main_ ? "early stopping" : "end of phase",
                                  pos.bad_validations));
    if (is_main_) c_.sum.early_stopped = true;
    stop_ = true;
  }
}

// The NaN guard: a batch with a non-finite loss or gradient norm is skipped and logged; too many
// in a row stop the run.
void PhaseRun::report_skipped(const Updater::Result& u, int epoch, int64_t index) {
  const int64_t step = c_.pos.offset + c_.pos.step;
  const std::string& where = u.bad_param;
  c_.progress.print(fmt::format("warning: step {} (epoch {}, batch {}): non-finite loss {} or gradient norm {}{}; "
                                "update skipped", step + 1, epoch + 1, index, u.batch.loss_sum, u.grad_norm,
                                where.empty() ? "" : " (first in " + where + ")"));
  c_.metrics.write({{"event", "nan"}, {"step", step + 1}, {"epoch", epoch + 1}, {"batch", index}, {"param", where}});
  ++bad_in_row_;
  ENGRAM_CHECK(pc_.max_bad_steps == 0 || bad_in_row_ < pc_.max_bad_steps,
               "stopped: {} batches in a row had a non-finite loss or gradient (the last at step {}{}); "
               "lower the learning rate or clip harder (train.clip)", bad_in_row_, step + 1,
               where.empty() ? "" : ", parameter " + where);
}

// The train line of the log window (progress and metrics.jsonl), then a new window.
void PhaseRun::log_window(int epoch) {
  const RunPosition& pos = c_.pos;
  const int64_t total_steps = pc_.max_steps > 0 ? pc_.max_steps : c_.per_epoch * pc_.max_epochs;
  const double secs = seconds_since(window_t0_);
  const double loss = window_units_ ? window_loss_ / window_units_ : 0;
  const double rate = secs > 0 ? window_units_ / secs : 0;
  const double eta = (total_steps - pos.step) * (secs / std::max<int64_t>(window_steps_, 1));
  const bool ppl = c_.task.reports_perplexity();
  c_.progress.update(fmt::format("step {}  epoch {}  loss {:.4f}{}  {:.0f} units/s  lr {:.3g}  ETA {}",
                                 pos.offset + pos.step, epoch + 1, loss,
                                 ppl ? fmt::format("  ppl {:.2f}", std::exp(std::min(loss, 50.0))) : "", rate,
                                 opt_->lr(), format_duration(eta)));
  nlohmann::json line = {{"event", "train"}, {"step", pos.offset + pos.step}, {"epoch", epoch + 1}, {"loss", loss}};
  if (!is_main_) line["phase"] = c_.pre[pos.phase].name;
  if (ppl) line["ppl"] = std::exp(std::min(loss, 50.0));
  line["units_per_s"] = rate;
  line["lr"] = opt_->lr();
  line["updates_per_s"] = secs > 0 ? window_steps_ / secs : 0;
  if (c_.w.distributed()) {
    line["ranks"] = c_.w.size;
    line["allreduce_share"] = secs > 0 ? window_allreduce_s_ / secs : 0;
  }
  c_.metrics.write(line);
  window_loss_ = window_allreduce_s_ = 0;
  window_units_ = window_steps_ = 0;
  window_t0_ = Clock::now();
}

bool PhaseRun::after_update(int epoch, int64_t index, bool& timed_out) {
  const int64_t step = c_.pos.step;
  if (c_.on_step) c_.on_step(c_.pos.offset + step);
  if (step % pc_.log_every == 0) log_window(epoch);
  if (pc_.valid_every > 0 && step % pc_.valid_every == 0) validate(epoch, index);
  if (pc_.checkpoint_every > 0 && step % pc_.checkpoint_every == 0) {
    auto [e, i] = position_after(epoch, index);
    save(c_.last_dir, e, i, true);
  }
  if (c_.w.distributed() && pc_.distributed.check_every > 0 && step % pc_.distributed.check_every == 0)
    check_same_parameters();
  timed_out = c_.out_of_time();
  if ((pc_.max_steps > 0 && step >= pc_.max_steps) || timed_out) {
    if (timed_out)
      c_.progress.print(stop_requested() ? std::string("stopped on request; the run resumes from its last checkpoint")
                                         : fmt::format("time limit of {} minutes reached", c_.cfg.max_minutes));
    const bool just_validated = pc_.valid_every > 0 && step % pc_.valid_every == 0;
    if (!just_validated) validate(epoch, index);
    if (last_saved_step_ != step) {
      auto [e, i] = position_after(epoch, index);
      save(c_.last_dir, e, i, true);
    }
    stop_ = true;
  }
  return stop_;
}

bool PhaseRun::train() {
  RunPosition& pos = c_.pos;
  bool timed_out = false;
  window_t0_ = Clock::now();
  const int64_t start_step = pos.step;
  int epoch = pos.start_epoch;
  for (; epoch < pc_.max_epochs || pc_.max_epochs == 0; ++epoch) {
    if (stop_) break;
    c_.task.begin_epoch(epoch, c_.cfg.seed);
    for (int64_t index = epoch == pos.start_epoch ? pos.start_index : 0; index < c_.per_epoch; ++index) {
      if (!plateau_mode_) opt_->set_lr(schedule_->lr(pos.step));
      const Updater::Result u = updater_.update(index);
      if (u.skipped) report_skipped(u, epoch, index);
      else bad_in_row_ = 0;
      ++pos.step;
      window_allreduce_s_ += u.allreduce_s;
      window_loss_ += u.batch.loss_sum;
      window_units_ += u.batch.units;
      ++window_steps_;
      if (after_update(epoch, index, timed_out)) break;
    }
    if (stop_) break;
    if (pc_.valid_every == 0) validate(epoch, c_.per_epoch - 1);
  }
  if (!stop_ && pos.step > start_step && last_saved_step_ != pos.step) save(c_.last_dir, epoch, 0, true);
  c_.sum.phase = pos.phase;
  c_.sum.steps = pos.offset + pos.step;
  c_.sum.epochs_done = epoch;
  if (is_main_) c_.sum.best_metric = pos.best;
  return timed_out;
}

}  // namespace

// The run: the phases checked, last/ tidied and read (resume), the log opened, then each phase
// from the position on (PhaseRun), until the main phase ends or the time limit stops the run.
TrainSummary Trainer::run() {
  const auto t0 = Clock::now();
  const auto limit_t0 = started.value_or(t0);  // train.max_minutes counts from here
  const fs::path dir = cfg_.run_dir;
  const World& w = world();
  if (w.root()) fs::create_directories(dir);
  const std::vector<TrainPhase> pre = task_.phases();  // phases before the main one
  const int main_phase = static_cast<int>(pre.size());
  for (const TrainPhase& ph : pre)
    ENGRAM_CHECK(ph.max_epochs >= 1 && ph.patience >= 0 && std::isfinite(ph.lr) && ph.lr >= 0,
                 "trainer: phase '{}' needs max_epochs >= 1, patience >= 0 and lr >= 0", ph.name);

  TrainSummary sum;
  RunPosition pos;
  // ---- resume
  const fs::path last_dir = dir / "last", best_dir = dir / "best";
  if (w.root()) {
    io::remove_checkpoint_leftovers(last_dir);  // and recover last/ from an interrupted swap
    io::remove_checkpoint_leftovers(best_dir);
    for (const fs::path& p : io::interrupted_checkpoints(dir))  // and of RUN/step-S (train.keep_checkpoints)
      if (kept_step(p.filename().string()) >= 0) io::remove_checkpoint_leftovers(p);
  }
  barrier("the start of training");  // the other ranks read last/ once rank 0 has tidied it
  std::optional<io::CheckpointInfo> resumed;
  if (fs::exists(last_dir)) {
    resumed = io::read_checkpoint_info(last_dir);
    ENGRAM_CHECK(resumed->model_name == task_.model_name(), "run dir {} holds a '{}' model, not '{}'", dir.string(),
                 resumed->model_name, task_.model_name());
    pos = read_position(resumed->trainer, last_dir, main_phase);
    sum.resumed = true;
  }
  if (!resumed && !cfg_.init_from.empty()) init_from_checkpoint(cfg_.init_from);
  // Lines logged after the checkpoint resumed from would be logged again: keep each step once.
  if (sum.resumed && w.root()) truncate_metrics_after(dir / "metrics.jsonl", pos.offset + pos.step);
  MetricsLog metrics(dir / "metrics.jsonl");
  ProgressLine progress;
  const int64_t per_epoch = task_.batches_per_epoch();
  if (w.distributed())
    progress.print(fmt::format("data parallel: {} ranks, each computing 1/{} of every batch ({} batches per epoch, "
                               "{} parameters); rank 0 writes", w.size, w.size, per_epoch, task_.params().numel()));
  ENGRAM_CHECK(per_epoch > 0, "trainer: the task has no training batches");

  // Whether train.max_minutes has run out; under mpirun rank 0's clock decides for the job.
  auto out_of_time = [&] {
    if (cfg_.max_minutes <= 0 && !stop_requested()) return false;
    bool out = stop_requested() || seconds_since(limit_t0) > cfg_.max_minutes * 60;
    if (w.distributed()) {
      double flag = w.root() && out ? 1 : 0;
      allreduce_sum(&flag, 1, "the time-limit check");
      out = flag > 0;
    }
    return out;
  };
  if (out_of_time()) {  // a run of a recipe that started past the command's limit
    progress.print(fmt::format("time limit of {} minutes reached before {} started; nothing trained", cfg_.max_minutes,
                               dir.string()));
    sum.phase = pos.phase;
    sum.steps = pos.offset + pos.step;
    sum.out_of_time = true;
    return sum;
  }
  RunContext c{task_, cfg_, w, dir, last_dir, best_dir, pre, main_phase, per_epoch, t0, out_of_time, on_step,
               metrics, progress, pos, sum};
  bool stop_run = false;  // a time limit: the run ends resumable, wherever it is
  for (; pos.phase <= main_phase && !stop_run; ++pos.phase) {
    PhaseRun phase(c);
    bool finished = false;
    if (!phase.resume(resumed, finished)) {
      if (finished) return sum;
      continue;  // an earlier phase already done: on to the next
    }
    stop_run = phase.train();
    if (pos.phase != main_phase && !stop_run) {  // on to the next phase, from the parameters this one ends with
      pos.next_phase();
      pos.plateau_state = nullptr;
      pos.extra_state = nullptr;
      pos.window_state = nullptr;
    }
  }
  sum.out_of_time = stop_run;
  sum.seconds = seconds_since(t0);
  return sum;
}

}  // namespace engram::train
