// Format stability: one tiny committed checkpoint per family (tests/golden/models/<family>/) must
// keep loading through load_model and give, for every input of its cases.tsv, exactly the output
// recorded there — engram's own output at the commit that made it (tests/golden/README.md,
// "models/"), not a reference tool's and not an accuracy claim: they catch a change of format or
// numerics, not a wrong forward pass that was wrong when recorded. Against that, MemN2N's answers
// and probabilities are also pinned to an independent implementation (below). A damaged copy
// must fail with an engram::Error, never crash.
//
// cases.tsv: one case a line, INPUT<TAB>EXPECTED OUTPUT (UTF-8, LF). With ENGRAM_UPDATE_GOLDEN=1
// the tests write each input's current output into cases.tsv instead of checking it (how
// tests/golden/models/make_golden.sh records them; review the diff).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/models/memn2n/task.h"
#include "engram/models/registry.h"
#include "models/golden_cases.h"

namespace engram::models {
namespace golden_models_test {

namespace fs = std::filesystem;
using data::testing::TempDir;

using engram::testing::golden_dir;

bool updating() {
  const char* env = std::getenv("ENGRAM_UPDATE_GOLDEN");
  return env != nullptr && std::string(env) == "1";
}

struct Case {
  std::string input, expected;
  int line = 0;
};

// The cases of `file`; a line without a tab is an input with no recorded output yet.
std::vector<Case> read_cases(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << file;
  std::vector<Case> cases;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    cases.push_back(tab == std::string::npos ? Case{line, "", n} : Case{line.substr(0, tab), line.substr(tab + 1), n});
  }
  return cases;
}

// Loads the family's golden directory and runs every case (or, when updating, records them).
void check_golden(const std::string& family) {
  const fs::path dir = golden_dir(family);
  std::unique_ptr<LoadedModel> m = load_model(dir);
  EXPECT_EQ(m->family(), family);
  EXPECT_EQ(m->dir(), dir);
  const fs::path file = dir / "cases.tsv";
  std::vector<Case> cases = read_cases(file);
  // An input naming a file of the model's directory (speech's WAVs) is that file.
  auto input_of = [&](const Case& c) {
    return !c.input.empty() && fs::is_regular_file(dir / c.input) ? (dir / c.input).string() : c.input;
  };
  ASSERT_GE(cases.size(), 5u) << file;
  if (updating()) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    for (const Case& c : cases) {
      const std::string got = m->run_line(input_of(c));
      ASSERT_EQ(got.find_first_of("\t\n"), std::string::npos) << "an output cases.tsv cannot hold: " << got;
      out << c.input << '\t' << got << '\n';
    }
    ASSERT_TRUE(out.good()) << "cannot write " << file;
    return;
  }
  for (const Case& c : cases) {
    EXPECT_EQ(m->run_line(input_of(c)), c.expected) << file.string() << ":" << c.line << ": input '" << c.input << "'";
  }
}

// One family pinned to an outside source: tests/golden/models/memn2n_reference.py, a float64
// forward pass of the golden MemN2N in Python's standard library alone (the maths in its
// docstring), gives for the first three cases of memn2n/cases.tsv these answers and softmax
// probabilities (`cut -f1 tests/golden/models/memn2n/cases.tsv | head -3 |
// tests/golden/models/memn2n_reference.py`). engram's float32 forward must agree to 1e-5.
TEST(GoldenModels, Memn2nAgreesWithAnIndependentForwardPass) {
  struct Pinned {
    const char* line;
    const char* answer;
    double probability;
  };
  const Pinned pinned[] = {
      {"Mary moved to the bathroom. John went to the hallway. Where is Mary?", "bathroom", 0.997329894},
      {"Mary moved to the bathroom. John went to the hallway. Where is John?", "hallway", 0.997395835},
      {"Daniel went back to the kitchen. Sandra journeyed to the garden. Daniel travelled to the office. Where is "
       "Daniel?",
       "office", 0.970557959},
  };
  const std::unique_ptr<LoadedBabiModel> m = load_model_as<LoadedBabiModel>(golden_dir("memn2n"), "memn2n");
  for (const Pinned& p : pinned) {
    const LoadedBabiModel::Answer a = m->answer(p.line);
    EXPECT_EQ(a.answer, p.answer) << p.line;
    EXPECT_NEAR(a.explanation.probability, p.probability, 1e-5) << p.line;
  }
}

TEST(GoldenModels, Seq2seqTranslatesAsRecorded) { check_golden("seq2seq"); }
TEST(GoldenModels, Memn2nAnswersAsRecorded) { check_golden("memn2n"); }
TEST(GoldenModels, NtmGeneratesAsRecorded) { check_golden("ntm"); }
TEST(GoldenModels, TreeLabelsAsRecorded) { check_golden("tree"); }
TEST(GoldenModels, PointerPointsAsRecorded) { check_golden("pointer"); }
TEST(GoldenModels, PointerGeneratorSummarizesAsRecorded) { check_golden("pointer_generator"); }
TEST(GoldenModels, SpeechTranscribesAsRecorded) { check_golden("speech"); }

// A copy of the family's golden directory in `tmp`, without cases.tsv.
fs::path copy_golden(const TempDir& tmp, const std::string& family) {
  const fs::path dst = tmp.file(family);
  fs::create_directories(dst);
  for (const fs::directory_entry& e : fs::directory_iterator(golden_dir(family)))
    if (e.path().filename() != "cases.tsv") fs::copy_file(e.path(), dst / e.path().filename());
  return dst;
}

// Every family's checkpoint with model.safetensors truncated (empty, inside the 8-byte header
// length, inside the JSON header, half way, one byte short) or missing, and with config.yaml cut
// in half, fails to load with an engram::Error.
TEST(GoldenModels, DamagedCopiesFailWithAnError) {
  for (const std::string family : {"seq2seq", "memn2n", "ntm", "tree", "pointer", "pointer_generator"}) {
    SCOPED_TRACE(family);
    TempDir tmp;
    const fs::path dir = copy_golden(tmp, family);
    ASSERT_NO_THROW(load_model(dir)) << "the intact copy loads";
    const fs::path weights = dir / "model.safetensors";
    const std::uintmax_t size = fs::file_size(weights);
    const std::string bytes = [&] {
      std::ifstream in(weights, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    ASSERT_EQ(bytes.size(), size);
    for (const std::uintmax_t keep : std::vector<std::uintmax_t>{0, 5, 40, size / 2, size - 1}) {
      SCOPED_TRACE("model.safetensors cut to " + std::to_string(keep) + " of " + std::to_string(size) + " bytes");
      std::ofstream(weights, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(keep));
      EXPECT_THROW(load_model(dir), Error);
    }
    fs::remove(weights);
    EXPECT_THROW(load_model(dir), Error);
    std::ofstream(weights, std::ios::binary | std::ios::trunc) << bytes;

    const fs::path config = dir / "config.yaml";
    std::ifstream in(config, std::ios::binary);
    const std::string yaml(std::istreambuf_iterator<char>(in), {});
    in.close();
    std::ofstream(config, std::ios::binary | std::ios::trunc) << yaml.substr(0, yaml.size() / 2);
    EXPECT_THROW(load_model(dir), Error) << "config.yaml cut to:\n" << yaml.substr(0, yaml.size() / 2);
  }
}

// Every family's checkpoint with one width in config.yaml raised to 40,000 (billions of
// parameters where the file holds thousands) fails with an engram::Error naming
// model.safetensors before the larger model's parameters are mapped (without the budget: a shape
// mismatch after the larger model is mapped, or, where it passes 3/4 of the machine's memory,
// core::memory_limit's error).
TEST(GoldenModels, AConfigOfALargerModelThanItsTensorsIsRefusedBeforeItIsBuilt) {
  const std::pair<std::string, std::vector<std::string>> widths[] = {
      {"seq2seq", {"hidden"}},        {"memn2n", {"dim"}},      {"ntm", {"ntm", "controller_size"}},
      {"tree", {"hidden"}},           {"pointer", {"hidden"}},  {"pointer_generator", {"hidden"}},
      {"speech", {"decoder_hidden"}}};
  for (const auto& [family, path] : widths) {
    SCOPED_TRACE(family);
    TempDir tmp;
    const fs::path dir = copy_golden(tmp, family);
    YAML::Node file = YAML::LoadFile((dir / "config.yaml").string());
    YAML::Node node = file["config"];
    for (size_t i = 0; i + 1 < path.size(); ++i) node.reset(node[path[i]]);  // (operator= would copy into it)
    ASSERT_TRUE(node[path.back()].IsScalar()) << path.back();
    node[path.back()] = 40000;
    std::ofstream(dir / "config.yaml", std::ios::trunc) << file;
    std::string error;
    try {
      load_model(dir);
    } catch (const Error& e) {
      error = e.what();
    }
    EXPECT_NE(error.find((dir / "model.safetensors").string() + " holds "), std::string::npos) << error;
    EXPECT_NE(error.find("the model its config describes has more"), std::string::npos) << error;
  }
}

}  // namespace golden_models_test
}  // namespace engram::models
