// average_checkpoints: load each checkpoint into the first one's model, sum in double, write the
// mean (average.h).
#include "engram/models/average.h"

#include <cmath>
#include <set>

#include "engram/core/error.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/models/registry.h"

namespace engram::models {

namespace fs = std::filesystem;

namespace {

// Files a family reads beside a checkpoint, in it or in its run directory (the loaders look in
// both): vocabularies (*.txt, *.spm, *.model), data.yaml and train.yaml.
bool companion(const fs::path& f) {
  const std::string name = f.filename().string(), ext = f.extension().string();
  return name == "data.yaml" || name == "train.yaml" || ext == ".txt" || ext == ".spm" || ext == ".model";
}

}  // namespace

AverageResult average_checkpoints(const std::vector<fs::path>& dirs, const fs::path& out) {
  ENGRAM_CHECK(dirs.size() >= 2, "average: {} checkpoint(s); it takes at least two", dirs.size());
  std::vector<fs::path> resolved;
  for (const fs::path& d : dirs) resolved.push_back(resolve_model_dir(d));
  for (size_t i = 0; i < resolved.size(); ++i) {
    ENGRAM_CHECK(!fs::exists(out) || !fs::equivalent(resolved[i], out), "average: the output {} is one of the inputs",
                 out.string());
    // A checkpoint given twice would weigh twice in the mean.
    for (size_t j = 0; j < i; ++j)
      ENGRAM_CHECK(!fs::equivalent(resolved[i], resolved[j]), "average: {} and {} are the same checkpoint ({})",
                   dirs[j].string(), dirs[i].string(), resolved[i].string());
  }
  const io::CheckpointInfo first = io::read_checkpoint_info(resolved[0]);
  const std::string config = io::detail::yaml_text(first.config);
  for (size_t i = 1; i < resolved.size(); ++i) {
    const io::CheckpointInfo info = io::read_checkpoint_info(resolved[i]);
    ENGRAM_CHECK(info.model_name == first.model_name, "average: {} holds a '{}' model, {} a '{}' model",
                 resolved[i].string(), info.model_name, resolved[0].string(), first.model_name);
    ENGRAM_CHECK(io::detail::yaml_text(info.config) == config,
                 "average: {} has another config than {} (checkpoints of one model only: same family, same sizes)",
                 resolved[i].string(), resolved[0].string());
  }
  // The first model holds the running sum's structure; each checkpoint is loaded into it in turn.
  std::unique_ptr<LoadedModel> model = load_model(resolved[0]);
  nn::ParamStore& params = model->params();
  const size_t count = static_cast<size_t>(params.numel());
  std::vector<double> sum(params.values(), params.values() + count);
  for (size_t i = 1; i < resolved.size(); ++i) {
    io::load_checkpoint(resolved[i], params);  // checks every name and shape
    const float* v = params.values();
    for (size_t k = 0; k < count; ++k) sum[k] += v[k];
  }
  float* mean = params.values();
  const double n = static_cast<double>(resolved.size());
  for (size_t k = 0; k < count; ++k) {
    mean[k] = static_cast<float>(sum[k] / n);
    ENGRAM_CHECK(std::isfinite(mean[k]), "average: a non-finite mean (value {} of {})", k, sum.size());
  }
  io::CheckpointData data;
  data.model_name = first.model_name;
  data.config = first.config;
  data.params = &params;
  std::set<std::string> names;
  for (const fs::path& dir : {resolved[0], resolved[0].parent_path()}) {
    if (dir.empty() || !fs::is_directory(dir)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && companion(e.path()) && names.insert(e.path().filename().string()).second)
        data.files.push_back(e.path());
  }
  io::save_checkpoint(out, data);
  return {first.model_name, static_cast<int>(resolved.size()), static_cast<int64_t>(sum.size())};
}

}  // namespace engram::models
