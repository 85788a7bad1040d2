// `engram ntm eval` / `show` (models/ntm/report.h) on the committed golden copy model
// (tests/golden/models/ntm): the header, the table emitted row by row, the show summary and SVG.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engram/core/error.h"
#include "engram/models/ntm/report.h"

namespace engram::models {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<LoadedNtmModel> golden() {
  return load_model_as<LoadedNtmModel>(fs::path(ENGRAM_SOURCE_DIR) / "tests" / "golden" / "models" / "ntm", "ntm");
}

TEST(NtmReport, EvalTableRowByRow) {
  const auto m = golden();
  NtmEvalOptions o;
  o.lengths = {3, 6};
  o.sequences = 20;
  o.batch = 5;
  std::vector<std::string> parts;
  ntm_eval_report(*m, o, [&](const std::string& s) { parts.push_back(s); });
  ASSERT_EQ(parts.size(), 3u);  // header + table head, then one row per length
  EXPECT_EQ(parts[0], "NTM (" + m->dir().string() + ") on copy, trained on lengths 1-6; 20 sequences per row, seed 1\n\n"
                      "| length | cost (bits/seq) | wrong bits/seq | sequences exactly right |\n|---|---|---|---|\n");
  // Inside the training range the golden model copies every sequence exactly.
  EXPECT_EQ(parts[1].rfind("| 3 | ", 0), 0u) << parts[1];
  EXPECT_NE(parts[1].find(" | 0 | 100.0% |\n"), std::string::npos) << parts[1];
  EXPECT_EQ(parts[2].rfind("| 6 | ", 0), 0u) << parts[2];

  o.repeats = {1, 2, 3};  // three repeats for two lengths
  EXPECT_THROW(ntm_eval_report(*m, o, [](const std::string&) {}), Error);
}

TEST(NtmReport, ShowSummaryAndSvg) {
  const auto m = golden();
  const NtmShow s = show_ntm(*m, 4, 0, 1);
  EXPECT_EQ(s.summary.rfind(m->dir().string() + ", length 4: cost ", 0), 0u) << s.summary;
  EXPECT_NE(s.summary.find(" bits, 0 wrong bits"), std::string::npos) << s.summary;
  EXPECT_NE(s.svg.find("<svg"), std::string::npos);
  EXPECT_NE(s.svg.find("write weighting"), std::string::npos);
  EXPECT_NE(s.svg.find("read weighting"), std::string::npos);
}

}  // namespace
}  // namespace engram::models
