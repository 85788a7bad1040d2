// What the families' shared parsing and validation refuse, for the CLI and the server alike (the
// routes' parse_request runs the same functions), on the tiny committed models of
// tests/golden/models/: an empty bAbI story, a repeat count for an NTM that does not repeat,
// pointer coordinates a model or solver cannot read, a sentence past the tree limits, an empty
// SST split.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/data/tasks/pointer_tasks.h"
#include "engram/models/memn2n/task.h"
#include "engram/models/ntm/model.h"
#include "engram/models/ntm/report.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/registry.h"
#include "engram/models/tree/task.h"

namespace engram::models {
namespace input_checks_test {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path golden(const std::string& family) { return fs::path(ENGRAM_SOURCE_DIR) / "tests" / "golden" / "models" / family; }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InputChecks, Memn2nRefusesAnEmptyStoryAndAQuestionOfNoWords) {
  const auto m = load_model_as<LoadedBabiModel>(golden("memn2n"), "memn2n");
  EXPECT_NE(error_of([&] { m->run_line("Where is Mary?"); }).find("memn2n input: the story is empty"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m->parse_request(json{{"story", {" ", "..."}}, {"question", "Where is Mary?"}}, {}); })
                .find("the story is empty"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m->run_line("Mary went home. , ?"); }).find("has no words"), std::string::npos);
  EXPECT_EQ(error_of([&] { m->parse_request(json{{"story", {"Mary went home."}}, {"question", "Where is Mary?"}}, {}); }),
            "");
}

TEST(InputChecks, NtmCopyModelRefusesARepeatCount) {
  const auto m = load_model_as<LoadedNtmModel>(golden("ntm"), "ntm");  // a copy model
  const std::string want = "repeat 3: a copy model does not repeat (only repeat-copy models take a repeat count)";
  EXPECT_EQ(error_of([&] { m->run_line("5 3"); }), want);
  EXPECT_EQ(error_of([&] { m->parse_request(json{{"length", 5}, {"repeat", 3}}, {}); }), want);
  EXPECT_EQ(error_of([&] { show_ntm(*m, 5, 3, 1); }), want);
  NtmEvalOptions o;
  o.lengths = {5};
  o.repeats = {3};
  o.sequences = 2;
  EXPECT_EQ(error_of([&] { ntm_eval_report(*m, o, [](const std::string&) {}); }), want);
  // Once is what a copy model does: repeat 1 (needed to give a seed on the line) is accepted.
  EXPECT_EQ(error_of([&] { m->run_line("5 1 7"); }), "");
  EXPECT_EQ(error_of([&] { show_ntm(*m, 5, 0, 1); }), "");
}

TEST(InputChecks, PointerRouteAndLineReadCoordinatesAsTheFileReaderDoes) {
  const auto m = load_model_as<LoadedPointerModel>(golden("pointer"), "pointer");  // a sorting model
  // Overflows float (read as inf), beyond the documented limit, and a mix of huge values.
  EXPECT_NE(error_of([&] { m->parse_request(json{{"points", {0.5, 1e39}}}, {}); })
                .find("'points'[1]: coordinate 1e+39 is not a finite number"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m->parse_request(json{{"points", {0.5, -1e30}}}, {}); })
                .find("'points'[1]: coordinate -1e+30 is outside [-1e+18, 1e+18]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m->run_line("0.5 1e30 output"); }).find("is outside [-1e+18, 1e+18]"), std::string::npos);
  // The largest coordinates allowed decode to a valid output, with no internal error.
  EXPECT_EQ(error_of([&] { m->parse_request(json{{"points", {1e18, -1e18, 3e17, -2e17}}}, {}); }), "");
  const json big = {{"points", {1e18, -1e18, 3e17, -2e17}}};
  const std::unique_ptr<Request> parsed = m->parse_request(big, {});
  const std::vector<json> out = m->run_requests(std::vector<const Request*>{parsed.get()});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["output"].size(), 4u);
}

TEST(InputChecks, PointerFileTspReferenceMustBeAFullTour) {
  data::testing::TempDir dir;
  const std::string file = dir.write("tsp.txt", "0 0 1 0 1 1 0 1 output 1 2 3 1\n");
  const auto fo = data::tasks::pointer_file_options(data::tasks::PointerTask::kTsp);
  EXPECT_EQ(error_of([&] { data::tasks::read_pointer_file(file, fo); }),
            file + ":1: the output names 3 of the 4 points; it must name every point once (a full tour)");
  const std::string ok = dir.write("ok.txt", "0 0 1 0 1 1 0 1 output 1 2 3 4 1\n");
  EXPECT_EQ(data::tasks::read_pointer_file(ok, fo).at(0).target.size(), 4u);
  const auto so = data::tasks::pointer_file_options(data::tasks::PointerTask::kSort);
  const std::string unsorted = dir.write("sort.txt", "0.5 0.1 0.9 output 2 3 1\n");
  EXPECT_EQ(error_of([&] { data::tasks::read_pointer_file(unsorted, so); }),
            unsorted + ":1: the output is not in ascending order (index 3 = 0.9 before index 1 = 0.5)");
  EXPECT_EQ(data::tasks::read_pointer_file(dir.write("sorted.txt", "0.5 0.1 0.9 output 2 1 3\n"), so).size(), 1u);
  // A hull's reference names only its vertices.
  const std::string hull = dir.write("hull.txt", "0 0 1 0 0.5 0.2 0 1 output 1 2 4 1\n");
  EXPECT_EQ(data::tasks::read_pointer_file(hull, data::tasks::pointer_file_options(data::tasks::PointerTask::kHull))
                .at(0)
                .target.size(),
            3u);
}

TEST(InputChecks, SentimentShowAppliesTheTreeLimitsToASentenceAndEvalRefusesAnEmptySplit) {
  const auto m = load_model_as<LoadedTreeModel>(golden("tree"), "tree");
  std::string words;
  for (int i = 0; i < 1001; ++i) words += "good ";
  EXPECT_NE(error_of([&] { sentiment_svg(*m, words); }).find("nested 1001 levels deep, over the limit of 1000"),
            std::string::npos);
  data::testing::TempDir dir;
  const std::string d = fs::path(dir.file("test.txt")).parent_path().string();
  dir.write("test.txt", "");
  EXPECT_EQ(error_of([&] { evaluate_sentiment(*m, "test", data::SentimentView::kFine, d); }),
            d + "/test.txt: no trees");
  dir.write("dev.txt", "(2 (2 a) (2 b))\n");  // only a neutral root: none in the binary view
  EXPECT_NE(error_of([&] { evaluate_sentiment(*m, "dev", data::SentimentView::kBinary, d); })
                .find("no trees with a non-neutral root"),
            std::string::npos);
}

}  // namespace input_checks_test
}  // namespace engram::models
