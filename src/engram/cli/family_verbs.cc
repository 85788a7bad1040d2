// `engram eval -m DIR ...` and `engram show -m DIR ...`: the command line rewritten to the verb of
// DIR's family before parsing (cli.cc), e.g. `engram eval -m RUN` -> `engram seq2seq eval -m RUN`.
#include <filesystem>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/core/error.h"
#include "engram/io/checkpoint.h"
#include "engram/models/registry.h"

namespace engram::cli {

namespace {

// `engram eval -m DIR ...` and `engram show -m DIR ...` run the verb of DIR's family with the same
// arguments: its evaluation (a metrics table) and its picture of one input (SVG).
struct FamilyVerbs {
  const char* family;
  std::vector<std::string> eval, show;
};
const std::vector<FamilyVerbs>& family_verbs() {
  static const std::vector<FamilyVerbs> table = {
      {"seq2seq", {"seq2seq", "eval"}, {"attention"}},
      {"memn2n", {"babi", "eval"}, {"babi", "explain"}},
      {"ntm", {"ntm", "eval"}, {"ntm", "show"}},
      {"tree", {"sentiment", "eval"}, {"sentiment", "show"}},
      {"pointer", {"pointer", "eval"}, {"pointer", "show"}},
      {"speech", {"speech", "eval"}, {"speech", "show"}},
      {"pointer_generator", {"pointer-generator", "eval"}, {"pointer-generator", "show"}},
  };
  return table;
}

}  // namespace

std::vector<std::string> with_family_verb(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (argc < 2 || (args[1] != "eval" && args[1] != "show")) return args;
  std::string dir;
  for (size_t i = 2; i < args.size() && dir.empty(); ++i) {
    const std::string& a = args[i];
    if ((a == "-m" || a == "--model") && i + 1 < args.size()) dir = args[i + 1];
    else if (a.starts_with("--model=")) dir = a.substr(8);
    else if (a.starts_with("-m") && a.size() > 2 && a[2] != '-') dir = a.substr(2);
  }
  if (dir.empty()) return args;
  // A tree of task-T/model (bAbI trained per task, `babi eval` reads it) is memn2n's; else the
  // model's config.yaml names the family.
  namespace fs = std::filesystem;
  const fs::path d = dir;
  bool tree = false;
  if (!fs::exists(d / "config.yaml"))
    for (int t = 1; t <= 20 && !tree; ++t) tree = fs::exists(d / fmt::format("task-{}", t) / "model" / "config.yaml");
  const std::string family = tree ? "memn2n" : io::read_checkpoint_info(models::resolve_model_dir(d)).model_name;
  for (const FamilyVerbs& f : family_verbs()) {
    if (family != f.family) continue;
    const std::vector<std::string>& verb = args[1] == "eval" ? f.eval : f.show;
    args.erase(args.begin() + 1);
    args.insert(args.begin() + 1, verb.begin(), verb.end());
    return args;
  }
  throw Error(fmt::format("engram {} -m: {} holds a '{}' model, a family without {} verb", args[1], dir, family,
                          args[1] == "eval" ? "an eval" : "a show"));
}

}  // namespace engram::cli
