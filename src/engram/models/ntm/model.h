// The registered "ntm" model: a sequence model for the NTM paper's tasks (the NTM itself or the
// LSTM baseline) together with its task, in one config saved in the checkpoint, so
// `engram ntm eval` / `show` rebuild exactly what was trained.
// Dims: T steps, B batch, I inputs, K outputs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "engram/models/loaded_family.h"
#include "engram/models/ntm/lstm_seq.h"
#include "engram/models/ntm/ntm.h"
#include "engram/models/ntm/seq_task.h"
#include "engram/models/registry.h"

namespace engram::models {

enum class NtmArchitecture { kNtm, kLstm };

struct NtmModelConfig {
  NtmArchitecture architecture = NtmArchitecture::kNtm;
  NtmTaskConfig task;
  NtmConfig ntm;
  LstmSeqConfig lstm;

  template <class V>
  void visit(V& v) {
    v("architecture", architecture, "ntm|lstm (the paper's LSTM baseline)");
    v("task", task, "the task the model is trained on");
    v("ntm", ntm, "NTM settings (architecture ntm)");
    v("lstm", lstm, "LSTM baseline settings (architecture lstm)");
  }
};

class NtmTaskModel : public Model {
 public:
  static constexpr const char* kName = "ntm";
  // The input / output sizes of the chosen architecture are set from the task.
  NtmTaskModel(const NtmModelConfig& cfg, core::Rng& rng);

  std::string name() const override { return kName; }
  nn::ParamStore& params() override { return store_; }
  YAML::Node config() const override;
  const SeqModel& seq() const { return *seq_; }
  const NtmModelConfig& model_config() const { return cfg_; }

 private:
  NtmModelConfig cfg_;
  nn::ParamStore store_;
  std::unique_ptr<SeqModel> seq_;
};

// A loaded "ntm" model directory (the family's LoadedModel).
struct LoadedNtmModel : LoadedFamily<LoadedNtmModel, NtmTaskModel> {
  // What models() holds of each member, what run_line, run_requests, `ntm eval` and `ntm show`
  // run (sequence_loss_of, evaluate_at): its sequence model.
  static const SeqModel& net(const LoadedNtmModel& m) { return m.model->seq(); }
  // "LENGTH [REPEAT [SEED]]" (recall: LENGTH = items): one generated sequence of the model's
  // task -> "target ... | output ... | N wrong bits", vectors as 0/1 strings.
  std::string run_line(const std::string& line) override;
  std::string input_help() const override { return "LENGTH [REPEAT [SEED]]: one generated sequence of the task"; }
  // POST /v1/ntm (serve.cc, docs/serve.md): {"length", "repeat"?, "seed"?} -> one generated
  // sequence of the model's task: {"input" [T][W], "target" [T][K], "output" [T][K] (sigmoid
  // outputs, 0 where not scored), "scored" [T], "bits", "bit_errors", "write_weightings"
  // [heads][T][N], "read_weightings" [heads][T][N], "add_vectors" [write heads][T][M],
  // "read_vectors" [read heads][T][M]} (all four empty for the LSTM baseline).
  const InferenceSpec& inference() const override;
  std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const override;
  std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const override;
  // Members: ntm models (NTM or LSTM baseline) of the same task (kind, bits, item length, repeat
  // range): the same inputs and output bits. Each output bit's probability is their mean; the
  // weightings shown are this model's.
  void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) override;
};

// The family's loader (models::load_model calls it); errors name a wrong model kind.
std::unique_ptr<LoadedNtmModel> load_ntm_model(const std::filesystem::path& dir);

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::NtmArchitecture> {
  static constexpr std::pair<engram::models::NtmArchitecture, const char*> items[] = {
      {engram::models::NtmArchitecture::kNtm, "ntm"}, {engram::models::NtmArchitecture::kLstm, "lstm"}};
};
