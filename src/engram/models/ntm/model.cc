// The "ntm" model: builds the NTM or the LSTM baseline for its task, saves / loads it.
#include "engram/models/ntm/model.h"
#include "engram/models/loading.h"

#include <sstream>

#include "engram/io/checkpoint.h"
#include "engram/models/ntm/ensemble.h"

namespace engram::models {

NtmTaskModel::NtmTaskModel(const NtmModelConfig& cfg, core::Rng& rng) : cfg_(cfg) {
  const int in = task_input_size(cfg.task), out = task_output_size(cfg.task);
  if (cfg.architecture == NtmArchitecture::kNtm) {
    cfg_.ntm.input_size = in, cfg_.ntm.output_size = out;
    seq_ = std::make_unique<Ntm>(store_, "ntm", cfg_.ntm, rng);
  } else {
    cfg_.lstm.input_size = in, cfg_.lstm.output_size = out;
    seq_ = std::make_unique<LstmSeq>(store_, "lstm_baseline", cfg_.lstm, rng);
  }
}

YAML::Node NtmTaskModel::config() const { return io::to_yaml(cfg_); }

std::unique_ptr<LoadedNtmModel> load_ntm_model(const std::filesystem::path& dir) {
  auto m = std::make_unique<LoadedNtmModel>();
  m->model_dir = dir;
  m->model = load_checkpoint_model<NtmTaskModel, NtmModelConfig>(dir);
  return m;
}

void LoadedNtmModel::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) {
  setup.set_members(*this, std::move(members), [&](const LoadedModel& member) {
    const NtmTaskConfig& a = model->model_config().task;
    const NtmTaskConfig& b = dynamic_cast<const LoadedNtmModel&>(member).model->model_config().task;
    const bool repeats = a.task != NtmTaskKind::kRepeatCopy || (a.min_repeat == b.min_repeat && a.max_repeat == b.max_repeat);
    ENGRAM_CHECK(a.task == b.task && a.bits == b.bits && a.item_len == b.item_len && repeats,
                 "--ensemble: {} is trained on {} ({} bits, items of {}, repeats {}-{}) and {} on {} ({} bits, items of "
                 "{}, repeats {}-{}) (an ensemble shares its task)",
                 member.dir().string(), task_name(b.task), b.bits, b.item_len, b.min_repeat, b.max_repeat,
                 dir().string(), task_name(a.task), a.bits, a.item_len, a.min_repeat, a.max_repeat);
  });
}

std::string LoadedNtmModel::run_line(const std::string& line) {
  std::istringstream in(line);
  long long length = 0, repeat = 0, seed = 1;
  std::string rest;
  in >> length;
  ENGRAM_CHECK(!in.fail() && length >= 1 && length <= 1000,
               "ntm input: LENGTH [REPEAT [SEED]] with LENGTH 1..1000, got '{}'", line.substr(0, 80));
  const NtmTaskConfig& task = model->model_config().task;
  repeat = task.task == NtmTaskKind::kRepeatCopy ? task.max_repeat : 1;
  if (in >> repeat) in >> seed;
  ENGRAM_CHECK(!(in >> rest) && repeat >= 1 && repeat <= 100 && seed >= 0,
               "ntm input: LENGTH [REPEAT [SEED]] with REPEAT 1..100 and SEED >= 0, got '{}'", line.substr(0, 80));
  check_task_repeat(task, static_cast<int>(repeat));
  core::Rng rng(static_cast<uint64_t>(seed));
  const data::tasks::SeqBatch b =
      make_task_batch_at(task, static_cast<int>(length), static_cast<int>(repeat), 1, rng);
  core::Graph g(false, size_t{1} << 24);
  const SeqLoss l = sequence_loss_of(g, models(), b);
  ENGRAM_CHECK(!l.non_finite, "ntm: non-finite {} weighting at step {}", l.non_finite ? l.non_finite->head : "",
               l.non_finite ? l.non_finite->step : 0);
  const int64_t k = b.out_width;
  std::string target, output;
  for (size_t r = 0; r < l.rows.size(); ++r) {
    const int64_t t = l.rows[r];  // batch 1: row = time step
    target += r ? " " : "", output += r ? " " : "";
    for (int64_t j = 0; j < k; ++j) {
      target += b.tgt(t, 0, j) > 0.5f ? '1' : '0';
      output += l.probs[r * k + j] > 0.5f ? '1' : '0';
    }
  }
  return fmt::format("target {} | output {} | {:.0f} wrong bits", target, output, l.bit_errors);
}

}  // namespace engram::models
