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
#include "engram/core/kernels/blas.h"
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

namespace {
// train.precision: fp32, or bf16 where oneDNN has a bf16 matmul (the Trainer's config check and an
// Updater built without a Trainer, as the benchmarks build one).
void check_precision(const std::string& p) {
  ENGRAM_CHECK(p == "fp32" || p == "bf16", "train.precision '{}' is not fp32 or bf16", p);
  ENGRAM_CHECK(p != "bf16" || core::kernels::bf16_matmul_available(),
               "train.precision bf16: oneDNN has no bf16 matmul for this CPU (it needs AVX512-BF16 or AMX); use fp32");
}
}  // namespace

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
  check_precision(c.precision);
  ENGRAM_CHECK(c.keep_checkpoints >= 0 && c.keep_checkpoints <= 1000, "train.keep_checkpoints {} must be in [0, 1000]",
               c.keep_checkpoints);
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
    : task_(task), clip_(cfg.clip), bf16_(cfg.precision == "bf16"),
      opt_(optim::make_optimizer(task.params(), cfg.optimizer)) {
  optim::check_clip_config(clip_);
  check_precision(cfg.precision);
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
  {
    const core::kernels::Bf16Products products(bf16_, params.values(), params.numel());
    res.batch = task_.train_batch(index);
  }
  if (world().distributed()) {  // the sum of the shards' gradients is the whole batch's
    const auto t0 = Clock::now();
    allreduce_sum(params.grads(), static_cast<size_t>(params.numel()), "the gradient allreduce");
    double lu[2] = {res.batch.loss_sum, static_cast<double>(res.batch.units)};
    allreduce_sum(lu, 2, "the loss allreduce");
    res.batch.loss_sum = lu[0];
    res.batch.units = static_cast<int64_t>(lu[1]);
    res.allreduce_s = std::chrono::duration<double>(Clock::now() - t0).count();
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

}  // namespace engram::train
