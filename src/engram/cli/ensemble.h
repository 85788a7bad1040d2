// The flags of a loaded model's ensemble and precision, spelled the same by every verb that
// takes them (engram run, translate, summarize, the family verbs' eval and show):
//   --ensemble DIR   another model (or run) directory run with -m's as one ensemble (repeatable)
//   --precision P    fp32 | bf16 (the decode-options schema's field, decode/options.h)
// Both go through the model's hooks (LoadedModel::set_ensemble, set_precision), which check them.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engram/cli/options.h"
#include "engram/decode/options.h"
#include "engram/models/registry.h"

namespace engram::cli {

inline CLI::Option* add_ensemble_dirs_option(CLI::App* cmd, std::vector<std::string>& dirs) {
  return cmd
      ->add_option("--ensemble", dirs,
                   "another model (or run) directory run with -m's as one ensemble, output probabilities averaged "
                   "(repeatable; the same family and vocabulary / task)")
      ->expected(1)
      ->take_all();
}

// --precision alone, from the schema (for verbs whose other decode options are their own).
inline void add_precision_flag(CLI::App* cmd, const std::shared_ptr<decode::DecodeOptions>& o) {
  add_config_flags(cmd, o, {"precision"});
}

// The members of `dirs` (each loaded as whatever family it holds: set_ensemble names a mismatch
// with both directories), then the precision, onto `m`. Returns the directories read, "-m's +
// each member's" (a run directory as its best/ or last/).
inline std::string use_ensemble_and_precision(models::LoadedModel& m, const std::vector<std::string>& dirs,
                                              decode::Precision precision) {
  std::string names = m.dir().string();
  if (!dirs.empty()) {
    std::vector<std::unique_ptr<models::LoadedModel>> members =
        models::load_ensemble_members<models::LoadedModel>(dirs, m.family());
    for (const auto& member : members) names += " + " + member->dir().string();
    m.set_ensemble(std::move(members));
  }
  m.set_precision(precision);
  return names;
}


// The flags of a verb that reads one model: -m DIR, --ensemble DIR ..., --precision, --threads.
struct ModelArgs {
  std::string dir;
  std::vector<std::string> ensemble;
  std::shared_ptr<decode::DecodeOptions> decode = std::make_shared<decode::DecodeOptions>();
  int threads = 1;
  const CLI::App* cmd = nullptr;  // set by add_model_flags: where --precision was (or was not) given
};

// Adds -m, --ensemble, --precision (unless the verb adds its own decode flags, which hold it:
// `precision` false) and --threads.
inline void add_model_flags(CLI::App* cmd, ModelArgs& a, bool precision = true) {
  a.cmd = cmd;
  add_model_option(cmd, a.dir);
  add_ensemble_dirs_option(cmd, a.ensemble);
  if (precision) add_precision_flag(cmd, a.decode);
  add_threads_option(cmd, a.threads);
}

// Uses a's threads and loads -m's model as family T (`family` names it in the error of another);
// puts the model's decode defaults under the fields `given` on the command line (`d` becomes
// LoadedModel::decode_options(d, given)); then --ensemble's members and d's precision
// (use_ensemble_and_precision; `names` gets the directories read).
template <class T>
std::unique_ptr<T> load_model_flags(const ModelArgs& a, std::string_view family, decode::DecodeOptions& d,
                                    const std::vector<std::string>& given, std::string* names = nullptr) {
  use_threads(a.threads);
  std::unique_ptr<T> m = models::load_model_as<T>(a.dir, family);
  d = m->decode_options(d, given);
  const std::string read = use_ensemble_and_precision(*m, a.ensemble, d.precision);
  if (names) *names = read;
  return m;
}
// A verb whose one decode flag is add_model_flags' --precision: `d` (a's options) with the model's
// decode defaults under --precision where it was typed.
template <class T>
std::unique_ptr<T> load_model_flags(const ModelArgs& a, std::string_view family, decode::DecodeOptions& d,
                                    std::string* names = nullptr) {
  d = *a.decode;
  std::vector<std::string> given;
  const CLI::Option* flag = a.cmd ? a.cmd->get_option_no_throw("--precision") : nullptr;
  if (flag && flag->count() > 0) given.emplace_back("precision");
  return load_model_flags<T>(a, family, d, given, names);
}

}  // namespace engram::cli
