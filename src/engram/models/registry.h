// The family registry: one table maps a family name ("seq2seq", "memn2n", "ntm", ...) to what
// the shared front ends need — train a run from its config, print the effective config, load a
// model directory — so `engram train`, `load_model` and the server know every family without a
// line of family code. A family lives in models/<name>/ and adds one line to registry.cc.
//
// Every run config has one shape (docs/families.md):
//   model: <name>          the family
//   <name>: {...}          the model's Config (saved as the checkpoint's config.yaml)
//   data: {...}            where examples come from and how they are batched
//   train: {...}           the Trainer's config (train/trainer.h)
//   task: {...}            optional: the family's own recipe keys (MemN2N: seeds, linear start)
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/decode/ensemble.h"
#include "engram/io/config.h"
#include "engram/models/inference.h"
#include "engram/nn/param_store.h"

namespace engram::models {

// The small base of a model object with a registry name (Seq2Seq, the NTM task model).
class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;     // the registry name, saved in config.yaml
  virtual nn::ParamStore& params() = 0;     // every parameter
  virtual YAML::Node config() const = 0;    // every Config field (io::to_yaml)
};

// A model directory loaded with everything it needs to run (vocabularies, task settings).
// Family code reaches its own type with model_as<T>().
class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  virtual std::string family() const = 0;
  virtual const std::filesystem::path& dir() const = 0;  // the checkpoint directory read
  virtual nn::ParamStore& params() = 0;
  // One input in the family's text form -> one line of output (seq2seq: a source sentence ->
  // its translation; memn2n: "statement. statement. question?" -> the answer; ntm: bit vectors
  // -> the model's output vectors). Errors on input the family cannot read.
  virtual std::string run_line(const std::string& line) = 0;
  virtual std::string input_help() const = 0;  // what run_line reads, one line

  // The inference contract (inference.h; docs/families.md): the fields a request of the family
  // may hold; one request body parsed once (throws engram::Error, HTTP 400 with the message, on
  // one the family cannot serve; its units are its inputs); and requests that passed
  // parse_request run together (the server's batcher gathers up to --max-batch units), grouped by
  // equal options, one reply per request in order: the answer and the data of the family's
  // pictures (attention, hops, read / write weightings). Front ends call request(), which puts the
  // model's own decode defaults under the body's fields. parse_request and run_requests are called
  // from several worker threads at once: they read the model and nothing else shared, and every
  // call builds its own graph and arena.
  virtual const InferenceSpec& inference() const = 0;
  virtual std::unique_ptr<Request> parse_request(const nlohmann::json& body, const ServeLimits& limits) const = 0;
  virtual std::vector<nlohmann::json> run_requests(std::span<const Request* const> requests) const = 0;
  // Decode-time weights from now on (decode::Precision). Families without bf16 products refuse
  // bf16 with an error naming the family. Not thread-safe: call before decoding.
  virtual void set_precision(decode::Precision p) {
    ENGRAM_CHECK(p == decode::Precision::kFp32, "the {} family decodes in fp32 only", family());
  }
  // More models run with this one as one ensemble from now on (run_line, run_requests and the
  // family's evaluation average their output probabilities; docs/families.md says how each
  // family does), replacing any given before; empty = this model alone. Each member must be of
  // this family with the same vocabulary / task / output size, else an error naming both
  // directories; at most decode::kMaxEnsemble models in all. Families without ensembles refuse
  // members with an error naming the family. Not thread-safe: call before decoding.
  virtual void set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) {
    ENGRAM_CHECK(members.empty(), "the {} family takes no ensemble members here ({} given)", family(),
                 members.size());
  }

  // This model's own decode defaults: its run config's `decode:` section (RUN/decode.yaml), set
  // by load_model; none where the run had none.
  void set_decode_defaults(decode::ModelDefaults d) { decode_defaults_ = std::move(d); }
  // The options every front end decodes with (decode::with_model_defaults): `asked` (the
  // family's defaults with the `given` fields of a command line or request over them), where each
  // field the model's defaults name and `given` does not takes the model's value.
  decode::DecodeOptions decode_options(const decode::DecodeOptions& asked,
                                       const std::vector<std::string>& given) const {
    return decode::with_model_defaults(asked, given, decode_defaults_);
  }
  // The precision a front end decodes at when none is given: the model's own (its run's decode:
  // section), else fp32.
  decode::Precision own_precision() const { return decode_options(inference().options.defaults, {}).precision; }
  // parse_request, then decode_options over the option fields the body gives: what the server and
  // Python run.
  std::unique_ptr<Request> request(const nlohmann::json& body, const ServeLimits& limits) const;

 private:
  decode::ModelDefaults decode_defaults_;
};

// A family's entry in the registry.
struct Family {
  const char* name;
  const char* summary;  // one line, for `engram train --help` and `engram families`
  // The effective run config (defaults, the family's recipe, the file, then each --set) as YAML.
  std::string (*dump_config)(const YAML::Node& run, const std::string& source, const std::vector<std::string>& sets);
  // Trains the run (resuming from its run directory when there is one); prints progress; returns
  // a one-line summary of the result.
  std::string (*train)(const YAML::Node& run, const std::string& source, const std::vector<std::string>& sets);
  // Loads a checkpoint directory of this family.
  std::unique_ptr<LoadedModel> (*load)(const std::filesystem::path& dir);
  // The server's route of the family: POST /v1/<route> (LoadedModel::parse_request / run_requests).
  const char* route = nullptr;
};

// Every registered family, in registration order.
std::span<const Family* const> families();
// The family `name`; an unknown name is an error listing the known ones.
const Family& family(std::string_view name);

// A run config file (or RUN_DIR, meaning RUN_DIR/train.yaml), checked to name a family.
struct RunConfigFile {
  YAML::Node node;
  std::string source;   // the file read
  std::string run_dir;  // the run directory given (resume), else ""
  const Family* family = nullptr;
};
RunConfigFile read_run_config(const std::string& file_or_run_dir);

// Where a run directory keeps its config's `decode:` section (only the keys the config names).
inline constexpr const char* kDecodeDefaultsFile = "decode.yaml";
// Trains `run` (with each --set key=value) through its family's Family::train, after taking its
// `decode:` section and every `--set decode.KEY=VALUE` out: checked as decode options
// (decode::read_model_defaults) and written to RUN/decode.yaml, where load_model finds it.
std::string train_run(const RunConfigFile& run, const std::vector<std::string>& sets);
// The effective run config (Family::dump_config) followed by its `decode:` section, if any.
std::string effective_run_config(const RunConfigFile& run, const std::vector<std::string>& sets);

// MODEL_DIR (config.yaml) or a run directory: its best/, else last/, else model/ (MemN2N's
// selected seed). Errors say what is missing.
std::filesystem::path resolve_model_dir(const std::filesystem::path& dir);
// Loads any family's model directory (resolve_model_dir, then the family its config.yaml names),
// with its decode defaults: MODEL_DIR/decode.yaml, else that of the run directory holding it
// (one with train.yaml); a key its family does not honour is an error naming the file.
std::unique_ptr<LoadedModel> load_model(const std::filesystem::path& dir);

// `m` as family type T, or an error naming the family it is ("runs/x holds a 'ntm' model; this
// command takes seq2seq").
template <class T>
T& model_as(LoadedModel& m, std::string_view wanted) {
  T* t = dynamic_cast<T*>(&m);
  ENGRAM_CHECK(t != nullptr, "{} holds a '{}' model; this command takes {}", m.dir().string(), m.family(), wanted);
  return *t;
}
template <class T>
std::unique_ptr<T> load_model_as(const std::filesystem::path& dir, std::string_view wanted) {
  std::unique_ptr<LoadedModel> m = load_model(dir);
  model_as<T>(*m, wanted);
  return std::unique_ptr<T>(static_cast<T*>(m.release()));
}

// The models of `--ensemble DIR ...` (decoded with -m's model as one, decode/ensemble.h), each
// loaded as family `wanted`: at most decode::kMaxEnsemble - 1, counted before any is loaded.
template <class T>
std::vector<std::unique_ptr<T>> load_ensemble_members(const std::vector<std::string>& dirs, std::string_view wanted) {
  ENGRAM_CHECK(dirs.size() < static_cast<size_t>(decode::kMaxEnsemble),
               "--ensemble: {} models in one ensemble (at most {} with -m's)", dirs.size() + 1, decode::kMaxEnsemble);
  std::vector<std::unique_ptr<T>> out;
  for (const std::string& d : dirs) out.push_back(load_model_as<T>(d, wanted));
  return out;
}

// The shared parse of a family's run config: Run's defaults (or, with `recipe`, the recipe the
// file and the overrides ask for: `recipe` sees a probe parsed on the defaults), then the file,
// then each --set key=value. Strict: unknown keys and bad values are errors naming the key.
template <class Run>
Run parse_run_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets,
                     Run (*recipe)(const Run& probe) = nullptr) {
  Run cfg;
  io::from_yaml(node, cfg, source);
  for (const std::string& s : sets) io::apply_override(cfg, s);
  if (recipe) {
    cfg = recipe(cfg);
    io::from_yaml(node, cfg, source);
    for (const std::string& s : sets) io::apply_override(cfg, s);
  }
  return cfg;
}

// The family entry points built on parse_run_config: dump_config prints the parsed Run; train
// checks `model:` names the family and calls `run(cfg)`.
template <class Run, Run (*Recipe)(const Run&)>
std::string dump_run_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  return io::dump_config(parse_run_config<Run>(node, source, sets, Recipe));
}
// The same over a family's own reader of its run config (one that applies its recipe and checks).
template <class Run, Run (*Read)(const YAML::Node&, const std::string&, const std::vector<std::string>&)>
std::string dump_read_config(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  return io::dump_config(Read(node, source, sets));
}

}  // namespace engram::models
