// Trainer: the shared training loop (see trainer.h for the run directory and resume contract).
#include "engram/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "engram/core/error.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "engram/optim/clip.h"
#include "engram/train/progress.h"

namespace engram::train {

namespace {
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_stop() noexcept { g_stop_requested.store(true); }
void clear_stop_request() noexcept { g_stop_requested.store(false); }
bool stop_requested() noexcept { return g_stop_requested.load(); }


namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

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

std::pair<int64_t, int64_t> shard_range(int64_t n, Shard s) {
  ENGRAM_CHECK(s.size >= 1 && s.rank >= 0 && s.rank < s.size, "shard {} of {}", s.rank, s.size);
  return {n * s.rank / s.size, n * (s.rank + 1) / s.size};
}

uint64_t shard_seed(uint64_t seed, Shard s) { return s.rank == 0 ? seed : batch_seed(seed, -2, s.rank); }

void check_trainer_config(const TrainerConfig& c) {
  ENGRAM_CHECK(c.max_epochs > 0 || c.max_steps > 0, "train: max_epochs and max_steps are both 0");
  ENGRAM_CHECK(c.max_epochs >= 0 && c.max_steps >= 0 && c.valid_every >= 0 && c.checkpoint_every >= 0 &&
                   c.patience >= 0,
               "train: max_epochs {}, max_steps {}, valid_every {}, checkpoint_every {} and patience {} must be >= 0",
               c.max_epochs, c.max_steps, c.valid_every, c.checkpoint_every, c.patience);
  ENGRAM_CHECK(std::isfinite(c.max_minutes) && c.max_minutes >= 0, "train: max_minutes {} must be >= 0",
               c.max_minutes);
  ENGRAM_CHECK(!c.run_dir.empty(), "train: run_dir is empty");
  ENGRAM_CHECK(c.best_ties == "earliest" || c.best_ties == "latest", "train: best_ties '{}' is not earliest or latest",
               c.best_ties);
  ENGRAM_CHECK(c.log_every > 0, "train: log_every must be positive, got {}", c.log_every);
  optim::check_clip_config(c.clip);
  ENGRAM_CHECK(c.max_bad_steps >= 0, "train.max_bad_steps must be >= 0 (0 = never stop), got {}", c.max_bad_steps);
  ENGRAM_CHECK(std::isfinite(c.distributed.timeout_s) && c.distributed.timeout_s > 0 && c.distributed.check_every >= 0,
               "train.distributed: timeout_s {} must be > 0 and check_every {} >= 0", c.distributed.timeout_s,
               c.distributed.check_every);
  // init_from is read at a fresh start only: a run that has a last/ checkpoint resumes from it.
  if (!c.init_from.empty() && !fs::exists(fs::path(c.run_dir) / "last"))
    ENGRAM_CHECK(fs::exists(fs::path(c.init_from) / "model.safetensors"),
                 "train.init_from: {} is not a checkpoint directory (no model.safetensors)", c.init_from);
  // The optimizer and the schedule check their own options (the param_lr groups' names are
  // matched when the optimizer is built over the model).
  optim::check_optimizer_config(c.optimizer);
  if (c.schedule.is_plateau()) optim::make_plateau(c.schedule, c.optimizer.lr);
  else optim::make_schedule(c.schedule, c.optimizer.lr);
}

Trainer::Trainer(TrainTask& task, TrainerConfig cfg) : task_(task), cfg_(std::move(cfg)) { check_trainer_config(cfg_); }

Updater::Updater(TrainTask& task, const TrainerConfig& cfg)
    : task_(task), clip_(cfg.clip), opt_(optim::make_optimizer(task.params(), cfg.optimizer)) {
  optim::check_clip_config(clip_);
  const World& w = world();
  if (w.distributed()) {
    ENGRAM_CHECK(task.shardable(), "{}: this family does not support data-parallel training yet (run it "
                 "without mpirun, or with -np 1)", task.model_name());
    task.set_shard({w.rank, w.size});
    set_timeout(cfg.distributed.timeout_s);
  }
}

Updater::Result Updater::update(int64_t index) {
  nn::ParamStore& params = task_.params();
  params.zero_grad();
  Result res;
  res.batch = task_.train_batch(index);
  if (world().distributed()) {  // the sum of the shards' gradients is the whole batch's
    const auto t0 = Clock::now();
    allreduce_sum(params.grads(), static_cast<size_t>(params.numel()), "the gradient allreduce");
    double lu[2] = {res.batch.loss_sum, static_cast<double>(res.batch.units)};
    allreduce_sum(lu, 2, "the loss allreduce");
    res.batch.loss_sum = lu[0];
    res.batch.units = static_cast<int64_t>(lu[1]);
    res.allreduce_s = seconds_since(t0);
  }
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

namespace {

// Whether two files hold the same bytes (read in blocks: a file of any size in bounded memory).
bool same_bytes(const fs::path& a, const fs::path& b) {
  if (fs::file_size(a) != fs::file_size(b)) return false;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  ENGRAM_CHECK(fa && fb, "cannot read {} or {}", a.string(), b.string());
  std::vector<char> ba(1 << 16), bb(1 << 16);
  while (fa && fb) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount() || !std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin())) return false;
  }
  ENGRAM_CHECK(fa.eof() && fb.eof(), "error reading {} or {}", a.string(), b.string());
  return true;
}

}  // namespace

void Trainer::init_from_checkpoint(const fs::path& from) {
  const io::CheckpointInfo info = io::read_checkpoint_info(from);
  ENGRAM_CHECK(info.model_name == task_.model_name(), "train.init_from: {} holds a '{}' model, not '{}'",
               from.string(), info.model_name, task_.model_name());
  for (const fs::path& file : task_.checkpoint_files()) {
    const fs::path theirs = from / file.filename();
    ENGRAM_CHECK(fs::exists(theirs), "train.init_from: {} lacks {} (the run's {})", from.string(),
                 file.filename().string(), file.string());
    ENGRAM_CHECK(same_bytes(file, theirs),
                 "train.init_from: {} differs from {}: the weights would meet other ids", file.string(),
                 theirs.string());
  }
  io::load_params_file(from / "model.safetensors", task_.params());
  ProgressLine().print(fmt::format("initialised from {} (step {} of that run)", from.string(),
                                   info.trainer.is_object() ? info.trainer.value("step", int64_t{0}) : int64_t{0}));
}

TrainSummary Trainer::run() {
  const auto t0 = Clock::now();
  const auto limit_t0 = started.value_or(t0);  // train.max_minutes counts from here
  const fs::path dir = cfg_.run_dir;
  const World& w = world();
  if (w.root()) fs::create_directories(dir);
  nn::ParamStore& params = task_.params();
  const std::vector<TrainPhase> pre = task_.phases();  // phases before the main one
  const int main_phase = static_cast<int>(pre.size());
  for (const TrainPhase& ph : pre)
    ENGRAM_CHECK(ph.max_epochs >= 1 && ph.patience >= 0 && std::isfinite(ph.lr) && ph.lr >= 0,
                 "trainer: phase '{}' needs max_epochs >= 1, patience >= 0 and lr >= 0", ph.name);

  TrainSummary sum;
  // ---- the position (phase, step within it, epoch, batch) and the phase's best / patience
  int phase = 0;
  int64_t offset = 0;  // steps of the phases before this one (metrics count steps over the whole run)
  int64_t step = 0;
  int start_epoch = 0;
  int64_t start_index = 0;
  bool has_best = false;
  double best = 0;
  int bad_validations = 0;
  nlohmann::json plateau_state, extra_state, window_state;

  // ---- resume
  const fs::path last_dir = dir / "last", best_dir = dir / "best";
  if (w.root()) {
    io::remove_checkpoint_leftovers(last_dir);  // and recover last/ from an interrupted swap
    io::remove_checkpoint_leftovers(best_dir);
  }
  barrier("the start of training");  // the other ranks read last/ once rank 0 has tidied it
  double prior_seconds = 0;  // training seconds of earlier sessions (resume)
  std::optional<io::CheckpointInfo> resumed;
  if (fs::exists(last_dir)) {
    resumed = io::read_checkpoint_info(last_dir);
    ENGRAM_CHECK(resumed->model_name == task_.model_name(), "run dir {} holds a '{}' model, not '{}'", dir.string(),
                 resumed->model_name, task_.model_name());
    const nlohmann::json& t = resumed->trainer;
    ENGRAM_CHECK(t.is_object() && t.contains("step"), "{}: trainer.json lacks the training position", last_dir.string());
    try {  // a key of the wrong type or missing, or a number that is no number: one line naming the file
      // A checkpoint without a phase predates phases: it is in the main phase.
      phase = t.value("phase", main_phase);
      ENGRAM_CHECK(phase >= 0 && phase <= main_phase, "{}: phase {} of a task with {} phases", last_dir.string(), phase,
                   main_phase + 1);
      for (const char* k : {"step", "epoch", "next_batch"})
        ENGRAM_CHECK(t.contains(k) && t.at(k).is_number_integer() && t.at(k).get<int64_t>() >= 0,
                     "'{}' is missing or not a count", k);
      offset = t.value("offset", int64_t{0});
      step = t.at("step").get<int64_t>() - offset;
      start_epoch = t.at("epoch").get<int>();
      start_index = t.at("next_batch").get<int64_t>();
      has_best = t.value("has_best", false);
      best = t.value("best", 0.0);
      bad_validations = t.value("bad_validations", 0);
      if (t.contains("plateau")) plateau_state = t.at("plateau");
      if (t.contains("extra")) extra_state = t.at("extra");
      if (t.contains("window")) {
        window_state = t.at("window");
        const std::map<std::string, double> win = scalars_from_json(window_state);
        for (const char* k : {"loss", "units", "steps"}) ENGRAM_CHECK(win.count(k), "no window '{}'", k);
        ENGRAM_CHECK(win.at("units") >= 0 && win.at("steps") >= 0 && win.at("units") <= 9.007199254740992e15 &&
                         win.at("steps") <= 9.007199254740992e15,
                     "window units {} and steps {} must be counts", win.at("units"), win.at("steps"));
      }
      prior_seconds = t.value("elapsed_s", 0.0);
    } catch (const Error& e) {
      throw Error(fmt::format("{} is damaged: {}", (last_dir / "trainer.json").string(), e.what()));
    } catch (const std::exception& e) {
      throw Error(fmt::format("{} is damaged ({})", (last_dir / "trainer.json").string(), e.what()));
    }
    sum.resumed = true;
  }
  if (!resumed && !cfg_.init_from.empty()) init_from_checkpoint(cfg_.init_from);
  // Lines logged after the checkpoint resumed from would be logged again: keep each step once.
  if (sum.resumed && w.root()) truncate_metrics_after(dir / "metrics.jsonl", offset + step);
  MetricsLog metrics(dir / "metrics.jsonl");
  ProgressLine progress;
  const int64_t per_epoch = task_.batches_per_epoch();
  if (w.distributed())
    progress.print(fmt::format("data parallel: {} ranks, each computing 1/{} of every batch ({} batches per epoch, "
                               "{} parameters); rank 0 writes", w.size, w.size, per_epoch, params.numel()));
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
    sum.phase = phase;
    sum.steps = offset + step;
    sum.out_of_time = true;
    return sum;
  }
  bool stop_run = false;  // a time limit: the run ends resumable, wherever it is
  for (; phase <= main_phase && !stop_run; ++phase) {
    const bool is_main = phase == main_phase;
    task_.begin_phase(phase);
    // This phase's limits and learning rate: the main phase is the config's; an earlier phase has
    // its epochs (capped at train.max_epochs), train.max_steps, its patience and a constant lr.
    TrainerConfig pc = cfg_;
    if (!is_main) {
      pc.max_epochs = cfg_.max_epochs > 0 ? std::min(pre[phase].max_epochs, cfg_.max_epochs) : pre[phase].max_epochs;
      pc.patience = pre[phase].patience;
      pc.optimizer.lr = pre[phase].lr;
      pc.schedule = optim::ScheduleConfig{.name = "constant"};
    }
    Updater updater(task_, pc);  // a fresh optimizer per phase
    // The log window: the updates since the last train line (every log_every). Its sums are
    // checkpointed with the position, so a resumed run logs the loss an uninterrupted one does
    // whatever checkpoint_every is.
    double window_loss = 0, window_allreduce_s = 0;
    int64_t window_units = 0, window_steps = 0;
    optim::Optimizer* opt = &updater.optimizer();
    const bool plateau_mode = pc.schedule.is_plateau();
    std::unique_ptr<optim::LrSchedule> schedule;
    optim::ReduceOnPlateau plateau = optim::make_plateau(
        plateau_mode ? pc.schedule : optim::ScheduleConfig{.name = "plateau", .maximize = task_.higher_is_better()},
        pc.optimizer.lr);
    if (!plateau_mode) schedule = optim::make_schedule(pc.schedule, pc.optimizer.lr);
    if (resumed) {  // the checkpoint is of this phase: its parameters, optimizer, plateau and task state
      io::load_checkpoint(last_dir, params, opt);
      if (plateau_state.is_object()) plateau.load_state_scalars(scalars_from_json(plateau_state));
      if (!extra_state.is_null()) task_.load_extra_state(extra_state);
      if (window_state.is_object()) {
        const std::map<std::string, double> win = scalars_from_json(window_state);
        window_loss = win.at("loss");
        window_units = static_cast<int64_t>(win.at("units"));
        window_steps = static_cast<int64_t>(win.at("steps"));
      }
      resumed.reset();
      // A phase that already reached its limits, or stopped early, is done; a finished run
      // run again changes nothing (raise train.max_steps / max_epochs to train further).
      const bool steps_done = pc.max_steps > 0 && step >= pc.max_steps;
      const bool epochs_done = pc.max_epochs > 0 && start_epoch >= pc.max_epochs;
      const bool stopped_early = pc.patience > 0 && bad_validations >= pc.patience;
      if (steps_done || epochs_done || stopped_early) {
        if (is_main) {
          progress.print(fmt::format("{} is finished at step {} ({}); nothing to do", dir.string(), offset + step,
                                     steps_done ? "train.max_steps" : epochs_done ? "train.max_epochs" : "early stopping"));
          sum.phase = phase;
          sum.steps = offset + step;
          sum.epochs_done = start_epoch;
          sum.best_metric = best;
          sum.early_stopped = stopped_early;
          return sum;
        }
        offset += step;
        step = 0, start_epoch = 0, start_index = 0, has_best = false, best = 0, bad_validations = 0;
        continue;
      }
      progress.print(fmt::format("resuming {} at step {} (epoch {}, batch {}{})", dir.string(), offset + step,
                                 start_epoch + 1, start_index, is_main ? "" : ", phase " + pre[phase].name));
    } else if (!is_main) {
      progress.print(fmt::format("phase {}: up to {} epochs{} at lr {:.3g}", pre[phase].name, pc.max_epochs,
                                 pc.max_steps > 0 ? fmt::format(" or {} updates", pc.max_steps) : "",
                                 pc.optimizer.lr));
    }
    const int64_t total_steps = pc.max_steps > 0 ? pc.max_steps : per_epoch * pc.max_epochs;
    // Every rank must hold the same parameters: at the start of each phase (same seed, same
    // checkpoint) and every distributed.check_every updates (same updates).
    auto check_same_parameters = [&] {
      const uint64_t h = checksum(params.values(), static_cast<size_t>(params.numel()));
      ENGRAM_CHECK(all_equal(h, "the parameter checksum"), "the parameters differ between ranks at step {} "
                   "(checksum of rank {}: {:016x}); the ranks must run the same engram binary, config and "
                   "thread count", offset + step, w.rank, h);
    };
    if (w.distributed() && pc.distributed.check_every > 0) check_same_parameters();

    int64_t last_saved_step = -1;
    auto trainer_state = [&](int epoch, int64_t next_batch) {
      nlohmann::json t;
      t["phase"] = phase;
      t["offset"] = offset;
      t["step"] = offset + step;
      t["epoch"] = epoch;
      t["next_batch"] = next_batch;
      t["has_best"] = has_best;
      t["best"] = best;
      t["bad_validations"] = bad_validations;
      t["plateau"] = scalars_to_json(plateau.state_scalars());
      t["seed"] = cfg_.seed;
      t["extra"] = task_.extra_state();
      t["window"] = scalars_to_json({{"loss", window_loss},
                                     {"units", static_cast<double>(window_units)},
                                     {"steps", static_cast<double>(window_steps)}});
      t["elapsed_s"] = prior_seconds + seconds_since(t0);
      return t;
    };
    auto save = [&](const fs::path& where, int epoch, int64_t next_batch, bool with_optimizer) {
      if (with_optimizer) last_saved_step = step;
      if (!w.root()) return;  // rank 0 writes the job's checkpoints
      io::CheckpointData d;
      d.model_name = task_.model_name();
      d.config = task_.model_config();
      d.params = &params;
      d.optimizer = with_optimizer ? opt : nullptr;
      d.trainer = trainer_state(epoch, next_batch);
      d.files = task_.checkpoint_files();
      io::save_checkpoint(where, d);
    };
    // Position after the batch just done: (epoch, index + 1), rolled over at the epoch's end.
    auto position_after = [&](int epoch, int64_t index) {
      return index + 1 >= per_epoch ? std::pair<int, int64_t>{epoch + 1, 0} : std::pair<int, int64_t>{epoch, index + 1};
    };

    bool stop = false;
    auto validate = [&](int epoch, int64_t index) {
      // Rank 0 validates; the others take its metrics, so every rank makes the same decisions.
      Metrics m;
      if (w.root()) m = task_.validate();
      if (w.distributed()) {
        std::string text = w.root() ? scalars_to_json(m).dump() : "";
        broadcast(text, "the validation metrics (validation runs on rank 0)");
        if (!w.root()) m = scalars_from_json(nlohmann::json::parse(text));
      }
      const std::string key = task_.primary_metric();
      ENGRAM_CHECK(m.count(key), "validation did not report the primary metric '{}'", key);
      const double v = m.at(key);
      const bool improved = !has_best || (task_.higher_is_better() ? v > best : v < best);
      const bool keep = improved || (pc.best_ties == "latest" && v == best);  // best/ takes this one
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
      nlohmann::json j = {{"event", "valid"}, {"step", offset + step}, {"epoch", epoch + 1}, {"lr", opt->lr()},
                          {"elapsed_s", prior_seconds + seconds_since(t0)}};
      if (!is_main) j["phase"] = pre[phase].name;
      for (const auto& [k, val] : m) j[k] = val;
      metrics.write(j);
      sum.last_valid = m;
      auto [e, i] = position_after(epoch, index);
      if (keep && is_main) save(best_dir, e, i, false);  // best/ is the main phase's
      if (pc.checkpoint_every == 0) save(last_dir, e, i, true);
      progress.print(fmt::format("valid step {}  {}{}", offset + step, metrics_text(m), keep ? "  (best)" : ""));
      if (pc.patience > 0 && bad_validations >= pc.patience) {
        progress.print(fmt::format("{}: {} validations without improvement", is_main ? "early stopping" : "end of phase",
                                   bad_validations));
        if (is_main) sum.early_stopped = true;
        stop = true;
      }
    };

    int bad_in_row = 0;  // consecutive non-finite batches (the NaN guard)
    auto window_t0 = Clock::now();
    const int64_t start_step = step;
    int epoch = start_epoch;
    for (; epoch < pc.max_epochs || pc.max_epochs == 0; ++epoch) {
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
                                     "update skipped", offset + step + 1, epoch + 1, index, r.loss_sum, norm,
                                     where.empty() ? "" : " (first in " + where + ")"));
          metrics.write({{"event", "nan"}, {"step", offset + step + 1}, {"epoch", epoch + 1}, {"batch", index},
                         {"param", where}});
          ++bad_in_row;
          ENGRAM_CHECK(pc.max_bad_steps == 0 || bad_in_row < pc.max_bad_steps,
                       "stopped: {} batches in a row had a non-finite loss or gradient (the last at step {}{}); "
                       "lower the learning rate or clip harder (train.clip)", bad_in_row, offset + step + 1,
                       where.empty() ? "" : ", parameter " + where);
        } else {
          bad_in_row = 0;
        }
        ++step;
        window_allreduce_s += u.allreduce_s;
        window_loss += r.loss_sum;
        window_units += r.units;
        ++window_steps;
        if (on_step) on_step(offset + step);
        if (step % pc.log_every == 0) {
          const double secs = seconds_since(window_t0);
          const double loss = window_units ? window_loss / window_units : 0;
          const double rate = secs > 0 ? window_units / secs : 0;
          const double eta = (total_steps - step) * (secs / std::max<int64_t>(window_steps, 1));
          const bool ppl = task_.reports_perplexity();
          progress.update(fmt::format("step {}  epoch {}  loss {:.4f}{}  {:.0f} units/s  lr {:.3g}  ETA {}",
                                      offset + step, epoch + 1, loss,
                                      ppl ? fmt::format("  ppl {:.2f}", std::exp(std::min(loss, 50.0))) : "", rate,
                                      opt->lr(), format_duration(eta)));
          nlohmann::json line = {{"event", "train"}, {"step", offset + step}, {"epoch", epoch + 1}, {"loss", loss}};
          if (!is_main) line["phase"] = pre[phase].name;
          if (ppl) line["ppl"] = std::exp(std::min(loss, 50.0));
          line["units_per_s"] = rate;
          line["lr"] = opt->lr();
          line["updates_per_s"] = secs > 0 ? window_steps / secs : 0;
          if (w.distributed()) {
            line["ranks"] = w.size;
            line["allreduce_share"] = secs > 0 ? window_allreduce_s / secs : 0;
          }
          metrics.write(line);
          window_loss = window_allreduce_s = 0;
          window_units = window_steps = 0;
          window_t0 = Clock::now();
        }
        if (pc.valid_every > 0 && step % pc.valid_every == 0) validate(epoch, index);
        if (pc.checkpoint_every > 0 && step % pc.checkpoint_every == 0) {
          auto [e, i] = position_after(epoch, index);
          save(last_dir, e, i, true);
        }
        if (w.distributed() && pc.distributed.check_every > 0 && step % pc.distributed.check_every == 0)
          check_same_parameters();
        const bool timed_out = out_of_time();
        if ((pc.max_steps > 0 && step >= pc.max_steps) || timed_out) {
          if (timed_out)
            progress.print(stop_requested() ? std::string("stopped on request; the run resumes from its last checkpoint")
                                            : fmt::format("time limit of {} minutes reached", cfg_.max_minutes));
          const bool just_validated = pc.valid_every > 0 && step % pc.valid_every == 0;
          if (!just_validated) validate(epoch, index);
          if (last_saved_step != step) {
            auto [e, i] = position_after(epoch, index);
            save(last_dir, e, i, true);
          }
          stop = true;
          stop_run = stop_run || timed_out;
        }
        if (stop) break;
      }
      if (stop) break;
      if (pc.valid_every == 0) validate(epoch, per_epoch - 1);
    }
    if (!stop && step > start_step && last_saved_step != step) save(last_dir, epoch, 0, true);
    sum.phase = phase;
    sum.steps = offset + step;
    sum.epochs_done = epoch;
    if (is_main) sum.best_metric = best;
    if (!is_main && !stop_run) {  // on to the next phase, from the parameters this one ends with
      offset += step;
      step = 0, start_epoch = 0, start_index = 0, has_best = false, best = 0, bad_validations = 0;
      plateau_state = nullptr;
      extra_state = nullptr;
      window_state = nullptr;
    }
  }
  sum.out_of_time = stop_run;
  sum.seconds = seconds_since(t0);
  return sum;
}

}  // namespace engram::train
