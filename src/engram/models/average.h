// Checkpoint averaging (`engram average`): the element-wise mean of the parameters of several
// checkpoints of one model — the same family, the same config (so the same parameter names and
// shapes) — written as a new model directory that loads like any other. Averaging the last
// checkpoints of a run smooths the noise of the final updates (Vaswani et al. 2017 average the
// last 5 or 20); averaging unrelated runs is allowed but rarely useful, since their hidden units
// need not line up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace engram::models {

struct AverageResult {
  std::string family;
  int checkpoints = 0;
  int64_t values = 0;  // parameter values averaged (per checkpoint)
};

// `dirs`: at least two model or run directories (resolve_model_dir). Errors, before anything is
// written, on a family or config that differs from the first's (naming the directory), on a
// non-finite value, and when `out` is one of the inputs. `out` is written atomically
// (io::save_checkpoint) with the first checkpoint's config, and the files its family reads beside
// it (vocabularies, data.yaml, train.yaml: from the first directory, else its run directory).
AverageResult average_checkpoints(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out);

}  // namespace engram::models
