// Fuzz harness: YAML run configs into typed Configs (io/config.h) and the registry's run-config
// entry points (models/registry.h). Lines of the input that start with "#set " (YAML comments)
// are also applied as `--set key=value` overrides. For each of the three run configs
// (models::Seq2SeqTrainConfig, BabiConfig, NtmTrainConfig) the harness runs parse_yaml +
// from_yaml + apply_override, then checks that what dump_config / to_yaml write reads back to the
// same config. Then it writes the input to a file and runs read_run_config and the named
// family's dump_config, whose output must read back to itself.
#include "engram/io/config.h"
#include "engram/models/memn2n/task.h"
#include "engram/models/ntm/task.h"
#include "engram/models/registry.h"
#include "engram/models/seq2seq/task.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "config";

std::vector<std::string> set_lines(std::string_view text) {
  std::vector<std::string> sets;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    if (line.rfind("#set ", 0) == 0) sets.emplace_back(line.substr(5));
    pos = end + 1;
  }
  return sets;
}

// Writer output must read back: an engram::Error there is a finding, not a rejected input.
template <class F>
auto must_read_back(const char* what, F&& f) {
  try {
    return f();
  } catch (const engram::Error& e) {
    engram::fuzz::finding(kHarness, fmt::format("{} does not read back: {}", what, e.what()));
  }
}

template <class Cfg>
void typed(const YAML::Node& node, const std::vector<std::string>& sets, const char* name) {
  Cfg cfg;
  engram::io::from_yaml(node, cfg, "fuzz.yaml");
  for (const std::string& s : sets) engram::io::apply_override(cfg, s);
  const std::string text = engram::io::dump_config(cfg);
  const std::string again = must_read_back("dump_config", [&] {
    Cfg back;
    engram::io::from_yaml(engram::io::parse_yaml(text, "dump"), back, "dump");
    return engram::io::dump_config(back);
  });
  FUZZ_CHECK(kHarness, again == text, "{}: dump_config -> from_yaml -> dump_config differs:\n{}\n---\n{}", name, text,
             again);
  const std::string via_node = must_read_back("to_yaml", [&] {
    Cfg back;
    engram::io::from_yaml(engram::io::to_yaml(cfg), back, "to_yaml");
    return engram::io::dump_config(back);
  });
  FUZZ_CHECK(kHarness, via_node == text, "{}: to_yaml -> from_yaml differs:\n{}\n---\n{}", name, text, via_node);
  (void)engram::io::config_fields(cfg);
}

void run(std::string_view bytes) {
  const std::string text(bytes);
  const std::vector<std::string> sets = set_lines(text);
  const YAML::Node node = engram::io::parse_yaml(text, "fuzz.yaml");
  // Each typed config on its own: one rejecting the input does not skip the others.
  engram::fuzz::guard(kHarness, [&] { typed<engram::models::Seq2SeqTrainConfig>(node, sets, "seq2seq"); });
  engram::fuzz::guard(kHarness, [&] { typed<engram::models::BabiConfig>(node, sets, "memn2n"); });
  engram::fuzz::guard(kHarness, [&] { typed<engram::models::NtmTrainConfig>(node, sets, "ntm"); });

  const auto path = engram::fuzz::temp_file("run.yaml", bytes);
  const engram::models::RunConfigFile run = engram::models::read_run_config(path.string());
  FUZZ_CHECK(kHarness, run.family != nullptr, "read_run_config returned no family");
  const std::string dumped = run.family->dump_config(run.node, run.source, sets);
  const std::string again = must_read_back("the family's dump_config", [&] {
    const auto back = engram::fuzz::temp_file("dump.yaml", dumped);
    const engram::models::RunConfigFile r2 = engram::models::read_run_config(back.string());
    FUZZ_CHECK(kHarness, r2.family == run.family, "dump_config changed the family");
    return r2.family->dump_config(r2.node, r2.source, {});
  });
  FUZZ_CHECK(kHarness, again == dumped, "{}: dump_config does not read back to itself:\n{}\n---\n{}", run.family->name,
             dumped, again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
