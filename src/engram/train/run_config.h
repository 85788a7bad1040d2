// RUN/train.yaml, the effective config of a run, and what may change when a run resumes. A
// resumed run continues the numbers of the run it resumes, so every key that shapes them (seed,
// data and batching, model, optimizer, learning rate and schedule, log_every, valid_every, ...)
// must be what the run was started with; only the keys of kResumableKeys may differ (to extend a
// run, give it more time, or checkpoint it at another rate): they bound or save the run, they do
// not change an update.
#pragma once

#include <filesystem>
#include <string>

namespace engram::train {

// Config keys (dotted paths, a key and everything under it) a resumed run may change.
inline constexpr const char* kResumableKeys[] = {
    "train.max_steps",        "train.max_epochs",    "train.max_minutes", "train.patience",
    "train.checkpoint_every", "train.max_bad_steps", "train.run_dir",     "train.init_from",
    "train.distributed",      "train.keep_checkpoints"};

// Whether run_dir holds a checkpoint to resume (RUN/last, or the last/ of a run one or two levels
// below: MemN2N's RUN/seed-S/last and RUN/task-T/seed-S/last).
bool has_resumable_checkpoint(const std::filesystem::path& run_dir);

// Checks `yaml` (the config this process is about to train with, as io::dump_config writes it)
// against RUN/train.yaml when the run resumes: a one-line error names the first key whose value
// differs and is not in kResumableKeys. Keys only one of the two holds are not compared (a
// config written by a version without them). Then rank 0 writes `yaml` to RUN/train.yaml
// (atomically). Every rank checks.
void write_run_config(const std::filesystem::path& run_dir, const std::string& yaml);

}  // namespace engram::train
