// The family table. Add a family here with one line (and its folder, configs/ and docs/).
#include "engram/models/registry.h"

#include <algorithm>
#include <array>

#include "engram/io/checkpoint.h"
#include "engram/io/files.h"
#include "engram/train/distributed.h"

namespace engram::models {

// Each family's entry, defined in models/<family>/family.cc.
const Family& seq2seq_family();
const Family& memn2n_family();
const Family& ntm_family();
const Family& pointer_family();
const Family& tree_family();
const Family& speech_family();
const Family& pointer_generator_family();

namespace {

namespace fs = std::filesystem;

const std::array<const Family*, 7>& table() {
  static const std::array<const Family*, 7> t = {&seq2seq_family(), &memn2n_family(), &ntm_family(), &tree_family(),
                                                 &pointer_family(), &speech_family(), &pointer_generator_family()};
  return t;
}

// A run config without its `decode:` section and --set decode.*, and that section (a map; an
// empty one where the config has none).
struct DecodeSplit {
  YAML::Node node;
  std::vector<std::string> sets;
  YAML::Node decode;
  bool has_decode() const { return decode.IsMap() && decode.size() > 0; }
};

DecodeSplit split_decode(const RunConfigFile& run, const std::vector<std::string>& sets) {
  DecodeSplit s{YAML::Clone(run.node), {}, YAML::Node(YAML::NodeType::Map)};
  if (s.node["decode"]) {
    s.decode = YAML::Clone(s.node["decode"]);
    s.node.remove("decode");
    ENGRAM_CHECK(s.decode.IsMap(), "{}: decode must be a map of decode options (decode: {{alpha: 0.6}})", run.source);
  }
  for (const std::string& a : sets) {
    if (a.rfind("decode.", 0) != 0) {
      s.sets.push_back(a);
      continue;
    }
    for (const auto& kv : io::detail::override_tree(a)["decode"]) s.decode[kv.first.as<std::string>()] = kv.second;
  }
  decode::read_model_defaults(s.decode, run.source);
  return s;
}

std::string decode_section_text(const YAML::Node& decode) {
  YAML::Node wrapped;
  wrapped["decode"] = decode;
  return YAML::Dump(wrapped) + "\n";
}

std::string known_names() {
  std::string known;
  for (const Family* f : table()) known += (known.empty() ? "" : ", ") + std::string(f->name);
  return known;
}

}  // namespace

std::span<const Family* const> families() { return table(); }

const Family& family(std::string_view name) {
  for (const Family* f : table())
    if (name == f->name) return *f;
  throw Error(fmt::format("unknown model family '{}' (known: {})", name, known_names()));
}

RunConfigFile read_run_config(const std::string& file_or_run_dir) {
  RunConfigFile r;
  r.source = file_or_run_dir;
  if (fs::is_directory(r.source)) {
    r.run_dir = r.source;
    r.source = (fs::path(r.source) / "train.yaml").string();
    ENGRAM_CHECK(fs::exists(r.source), "{}: a run directory to resume needs its train.yaml", file_or_run_dir);
  }
  r.node = io::load_yaml_file(r.source);
  ENGRAM_CHECK(r.node.IsMap() && r.node["model"] && r.node["model"].IsScalar(),
               "{}: a run config starts with 'model: <family>' (one of {}); configs written before the one "
               "config shape (model: {{...}} / trainer:) must be rewritten: see docs/families.md",
               r.source, known_names());
  r.family = &family(r.node["model"].as<std::string>());
  return r;
}

fs::path resolve_model_dir(const fs::path& dir) {
  for (const fs::path& p : {dir, dir / "best", dir / "last", dir / "model"})
    if (fs::exists(p / "config.yaml")) return p;
  // A checkpoint interrupted between its two renames is recovered by read_checkpoint_info.
  if (io::recover_checkpoint(dir)) return dir;
  throw Error(fmt::format("{} is neither a model directory (config.yaml) nor a run directory with best/, last/ or "
                          "model/", dir.string()));
}

std::string train_run(const RunConfigFile& run, const std::vector<std::string>& sets) {
  const DecodeSplit s = split_decode(run, sets);
  if (s.has_decode()) {
    const YAML::Node effective = YAML::Load(run.family->dump_config(s.node, run.source, s.sets));
    const fs::path run_dir = effective["train"]["run_dir"].as<std::string>();
    if (train::world().root()) {
      fs::create_directories(run_dir);
      io::write_file_atomic(run_dir / kDecodeDefaultsFile, YAML::Dump(s.decode) + "\n");
    }
  }
  return run.family->train(s.node, run.source, s.sets);
}

std::string effective_run_config(const RunConfigFile& run, const std::vector<std::string>& sets) {
  const DecodeSplit s = split_decode(run, sets);
  return run.family->dump_config(s.node, run.source, s.sets) + (s.has_decode() ? decode_section_text(s.decode) : "");
}

std::unique_ptr<LoadedModel> load_model(const fs::path& dir) {
  const fs::path d = resolve_model_dir(dir);
  const io::CheckpointInfo info = io::read_checkpoint_info(d);
  std::unique_ptr<LoadedModel> m = family(info.model_name).load(d);
  fs::path run = d.lexically_normal();
  run = (run.has_filename() ? run : run.parent_path()).parent_path();  // "runs/x/best/" -> "runs/x"
  fs::path file = d / kDecodeDefaultsFile;
  if (!fs::exists(file) && fs::exists(run / "train.yaml")) file = run / kDecodeDefaultsFile;
  if (fs::exists(file))
    m->set_decode_defaults(
        decode::read_model_defaults(io::load_yaml_file(file), file.string(), &m->inference().options, m->family()));
  return m;
}

std::unique_ptr<Request> LoadedModel::request(const nlohmann::json& body, const ServeLimits& limits) const {
  std::unique_ptr<Request> r = parse_request(body, limits);
  if (decode_defaults_.fields.empty()) return r;
  const std::vector<std::string>& inputs = inference().inputs;
  std::vector<std::string> given;  // the option fields of the body (an input field shadows one: ntm's "seed")
  for (const std::string& f : decode::option_names())
    if (body.contains(f) && !body[f].is_null() && std::find(inputs.begin(), inputs.end(), f) == inputs.end())
      given.push_back(f);
  r->options = decode_options(r->options, given);
  return r;
}

}  // namespace engram::models
