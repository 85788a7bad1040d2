// `engram eval -m DIR` and `engram show -m DIR` run the verb of DIR's family (cli/family_verbs.cc), and
// `engram seq2seq eval` scores a model's translations: through cli::run, as the binary runs them,
// on the golden model of every family (tests/golden/models).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engram/cli/cli.h"
#include "engram/models/registry.h"
#include "io/temp_dir.h"

namespace engram::cli {
namespace {

using io::testing::TempDir;

const std::string kModels = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/models/";

struct Result {
  int rc = 0;
  std::string out, err;
};

// `engram ARGS...` through cli::run: its exit code, standard output and standard error.
Result engram(std::vector<std::string> args) {
  args.insert(args.begin(), "engram");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Result r;
  r.rc = cli::run(static_cast<int>(argv.size()), argv.data());
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The verb each family's eval and show are (the family commands of docs/families.md).
TEST(FamilyVerbs, EvalAndShowWithAModelRunTheVerbOfItsFamily) {
  const std::vector<std::vector<std::string>> expected = {
      {"seq2seq", "seq2seq eval", "attention"},
      {"memn2n", "babi eval", "babi explain"},
      {"ntm", "ntm eval", "ntm show"},
      {"tree", "sentiment eval", "sentiment show"},
      {"pointer", "pointer eval", "pointer show"},
      {"speech", "speech eval", "speech show"},
      {"pointer_generator", "pointer-generator eval", "pointer-generator show"},
  };
  ASSERT_EQ(models::families().size(), expected.size()) << "a family without eval and show verbs here";
  for (const auto& f : expected) {
    SCOPED_TRACE(f[0]);
    const std::string dir = kModels + f[0];
    for (int verb : {1, 2}) {
      const Result r = engram({verb == 1 ? "eval" : "show", "-m", dir, "--help"});
      EXPECT_EQ(r.rc, 0) << r.err;
      EXPECT_NE(r.out.find("Usage: engram " + f[verb] + " [OPTIONS]"), std::string::npos) << r.out;
    }
    const Result joined = engram({"eval", "--model=" + dir, "--help"});  // the other spellings of -m
    EXPECT_NE(joined.out.find("Usage: engram " + f[1] + " "), std::string::npos) << joined.out;
  }
}

// bAbI trained per task leaves a tree of task-T/model, which `babi eval` reads whole.
TEST(FamilyVerbs, ATreeOfBabiTaskModelsIsEvaluatedByBabiEval) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.path() / "task-3");
  std::filesystem::copy(kModels + "memn2n", tmp.path() / "task-3" / "model");
  const Result r = engram({"eval", "-m", tmp.path().string(), "--help"});
  EXPECT_NE(r.out.find("Usage: engram babi eval [OPTIONS]"), std::string::npos) << r.out << r.err;
  const Result one = engram({"eval", "-m", (tmp.path() / "task-3").string(), "--help"});  // its model/
  EXPECT_NE(one.out.find("Usage: engram babi eval [OPTIONS]"), std::string::npos) << one.out << one.err;
  std::filesystem::create_directories(tmp.path() / "task-4");
  const Result empty = engram({"eval", "-m", (tmp.path() / "task-4").string(), "--help"});  // neither
  EXPECT_EQ(empty.rc, 1);
  EXPECT_NE(empty.err.find("is neither a model directory"), std::string::npos) << empty.err;
}

TEST(FamilyVerbs, WithoutAModelEvalScoresFilesAndShowAsksForOne) {
  const Result plain = engram({"eval", "--help"});
  EXPECT_NE(plain.out.find("Usage: engram eval [OPTIONS] metric hyp refs..."), std::string::npos) << plain.out;
  const Result show = engram({"show"});
  EXPECT_EQ(show.rc, 2);
  EXPECT_NE(show.err.find("--model is required"), std::string::npos) << show.err;
  const Result missing = engram({"eval", "-m", kModels + "no-such-model", "--src", "x"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("no-such-model is neither a model directory"), std::string::npos) << missing.err;
}

// The golden seq2seq model translates each case's input to its expected output (cases.tsv), so
// scored against those outputs its greedy translations are BLEU 100 and chrF2 100; against other
// references the scores are sacreBLEU's of the same translations (`engram eval bleu|chrf`).
TEST(FamilyVerbs, Seq2seqEvalScoresTheTranslationsOfAFile) {
  TempDir tmp;
  std::ifstream cases(kModels + "seq2seq/cases.tsv");
  std::string line, src, ref, other;
  int n = 0;
  while (std::getline(cases, line)) {
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos);
    src += line.substr(0, tab) + "\n";
    ref += line.substr(tab + 1) + "\n";
    other += (n++ % 2 ? line.substr(tab + 1) : "1999-01-01") + "\n";
  }
  for (const auto& [name, text] : {std::pair{"src", src}, {"ref", ref}, {"other", other}}) {
    std::ofstream(tmp.path() / name) << text;
  }
  const std::string dir = kModels + "seq2seq", hyp = (tmp.path() / "hyp").string();
  const Result r = engram({"eval", "-m", dir, "--src", (tmp.path() / "src").string(), "--ref",
                           (tmp.path() / "ref").string(), "-o", hyp});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(hyp), ref);
  EXPECT_NE(r.out.find("| " + dir + " | " + std::to_string(n) + " | 100.0 | 100.0 | "), std::string::npos) << r.out;

  const Result o = engram({"seq2seq", "eval", "-m", dir, "--src", (tmp.path() / "src").string(), "--ref",
                           (tmp.path() / "other").string()});
  ASSERT_EQ(o.rc, 0) << o.err;
  const Result bleu = engram({"eval", "bleu", hyp, (tmp.path() / "other").string()});
  const Result chrf = engram({"eval", "chrf", hyp, (tmp.path() / "other").string()});
  EXPECT_NE(o.out.find("\n" + bleu.out + chrf.out), std::string::npos) << o.out << bleu.out << chrf.out;
  EXPECT_EQ(o.out.find("| 100.0 |"), std::string::npos) << o.out;

  const Result alone = engram({"eval", "-m", dir, "--src", (tmp.path() / "src").string()});
  EXPECT_EQ(alone.rc, 1);
  EXPECT_NE(alone.err.find("--src and --ref go together"), std::string::npos) << alone.err;
  const Result none = engram({"eval", "-m", dir});  // a model directory outside a run: no valid.src
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.err.find("no valid.src"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace engram::cli
