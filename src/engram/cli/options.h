// Options every command spells the same way, and flags generated from a typed Config's visit()
// (one schema for the YAML, --set, --dump-config and these flags):
//   -m, --model DIR     a model directory (or a run directory: its best/, else last/)
//   -o, --output FILE   the file a command writes (SVG, JSON)
//   --threads N         threads: the caller and its team's helpers, 1 ... 256
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/decode/options.h"
#include "engram/io/config.h"

namespace engram::cli {

inline CLI::Option* add_model_option(CLI::App* cmd, std::string& dir) {
  return cmd->add_option("-m,--model", dir, "model directory (or a run directory: its best/, else last/)")->required();
}

inline CLI::Option* add_output_option(CLI::App* cmd, std::string& file, const char* what) {
  return cmd->add_option("-o,--output", file, what);
}

// --threads N; also sets the thread team (kernels::set_blas_threads) when parsed. One thread is the
// default; a second splits each product of one input's decoding over two cores (bench/RESULTS.md).
inline CLI::Option* add_threads_option(CLI::App* cmd, int& threads) {
  return cmd
      ->add_option("--threads", threads,
                   "threads: the caller and its helpers, each product split over them (never more than the free cores)")
      ->check(CLI::Range(1, 256));
}
inline void use_threads(int threads) { core::kernels::set_blas_threads(threads); }

// The check of an integer option that must be >= 0 (CLI::NonNegativeNumber spells its upper bound
// as a 309-digit double in its message).
template <class T>
CLI::Range non_negative() {
  return CLI::Range(T{0}, std::numeric_limits<T>::max());
}

// One --flag per listed key of `cfg` (dotted keys; "_" and "." become "-": max_length_ratio ->
// --max-length-ratio), with the field's help and default. A value is read exactly as the config
// reader reads `key: value` (io::apply_override): same types, enum names and errors. A bool field
// is a flag without a value (given = true).
template <class Cfg>
void add_config_flags(CLI::App* cmd, std::shared_ptr<Cfg> cfg, const std::vector<std::string>& keys) {
  const std::vector<io::ConfigField> fields = io::config_fields(*cfg);
  for (const std::string& key : keys) {
    const io::ConfigField* f = nullptr;
    for (const io::ConfigField& x : fields)
      if (x.key == key) f = &x;
    ENGRAM_CHECK(f != nullptr, "add_config_flags: no field '{}'", key);
    std::string flag = "--" + key;
    for (char& c : flag)
      if (c == '_' || c == '.') c = '-';
    if (f->type == "bool") {  // a flag: given = true
      cmd->add_flag_callback(
          flag, [cfg, key] { io::from_yaml(io::detail::override_tree(key + "=true"), *cfg, key); }, f->help);
      continue;
    }
    cmd->add_option_function<std::string>(
           flag,
           [cfg, key, flag](const std::string& v) {
             try {
               io::from_yaml(io::detail::override_tree(key + "=" + v), *cfg, flag);
             } catch (const Error& e) {  // a bad value is a command-line error (exit 2)
               throw CLI::ValidationError(flag, e.what());
             }
           },
           f->help)
        ->type_name(f->type)
        ->default_str(f->value);
  }
}

// One flag per decode option a family honours (decode/options.h: `set`), generated from
// DecodeOptions' visit() with the family's defaults, except those in `skip` (a verb that spells one
// its own way, e.g. translate's --alignments FILE). After parsing, finish_decode_flags applies
// the rules every front end shares (n_best alone = beam), validates, and returns the fields given
// on the command line (CLI11's count()): LoadedModel::decode_options puts the model's own decode
// defaults under them.
inline void add_decode_flags(CLI::App* cmd, const std::shared_ptr<decode::DecodeOptions>& o, const decode::OptionSet& set,
                             const std::vector<std::string>& skip = {}) {
  *o = set.defaults;
  std::vector<std::string> keys;
  for (const std::string& f : set.fields)
    if (std::find(skip.begin(), skip.end(), f) == skip.end()) keys.push_back(f);
  add_config_flags(cmd, o, keys);
}
inline std::vector<std::string> finish_decode_flags(const CLI::App* cmd, decode::DecodeOptions& o,
                                                    const decode::OptionSet& set) {
  std::vector<std::string> given;
  for (const std::string& f : set.fields) {
    std::string flag = "--" + f;
    for (char& c : flag)
      if (c == '_') c = '-';
    const CLI::Option* opt = cmd->get_option_no_throw(flag);
    if (opt && opt->count() > 0) given.push_back(f);
  }
  try {
    decode::finish_options(o, given);
  } catch (const Error& e) {  // a value out of range is a command-line error (exit 2)
    throw CLI::ValidationError("decode options", e.what());
  }
  return given;
}

}  // namespace engram::cli
