// `engram ntm eval` / `show` (models/ntm/report.h) on the committed golden copy model
// (tests/golden/models/ntm): the header, the table emitted row by row, the show summary and SVG.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engram/core/error.h"
#include "engram/models/ntm/report.h"
#include "viz/xml_check.h"

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
  // The SVG holds five panels of [rows, T] cells, row-major, each cell's value in its tooltip
  // ("row / step: value", 4 significant digits): inputs (bits + 1 wide), targets and outputs
  // (bits), then the write and read weightings over the N memory slots.
  viz::testing::XmlElement doc;
  ASSERT_NO_THROW(doc = viz::testing::parse_xml(s.svg)) << s.svg;
  std::vector<std::string> titles;
  for (const viz::testing::XmlElement* t : doc.find_all("title")) titles.push_back(t->text);
  for (const char* panel : {"inputs", "targets", "outputs", "write weighting", "read weighting"}) {
    bool found = false;
    for (const viz::testing::XmlElement* t : doc.find_all("text")) found = found || t->text == panel;
    EXPECT_TRUE(found) << panel;
  }
  const NtmModelConfig& cfg = m->model->model_config();
  const int in = cfg.ntm.input_size, k = cfg.ntm.output_size, n = cfg.ntm.memory_slots;
  const int per_step = in + 2 * k + 2 * n;
  ASSERT_EQ(titles.size() % per_step, 0u) << titles.size() << " cells";
  const int steps = static_cast<int>(titles.size()) / per_step;
  EXPECT_EQ(steps, 2 * 4 + 1) << "copy of 4 vectors: 4 in, the delimiter, 4 out";
  std::vector<double> v;
  for (const std::string& t : titles) v.push_back(std::stod(t.substr(t.rfind(": ") + 2)));
  // cell (row r, step t) of the panel starting at cell `first`
  auto at = [&](int first, int r, int t) { return v[static_cast<size_t>(first + r * steps + t)]; };
  const int targets = in * steps, outputs = targets + k * steps, write = outputs + k * steps, read = write + n * steps;
  for (int t = 0; t < steps; ++t) {
    double write_sum = 0, read_sum = 0;
    for (int r = 0; r < n; ++r) write_sum += at(write, r, t), read_sum += at(read, r, t);
    EXPECT_NEAR(write_sum, 1.0, 1e-3) << "the write weighting at step " << t << " is a distribution";
    EXPECT_NEAR(read_sum, 1.0, 1e-3) << "the read weighting at step " << t << " is a distribution";
    for (int r = 0; r < k; ++r) {
      // 0 wrong bits: each scored output rounds to its target bit; unscored steps are 0 in both.
      EXPECT_EQ(at(outputs, r, t) > 0.5, at(targets, r, t) > 0.5) << "bit " << r << " at step " << t;
      if (t <= 4) { EXPECT_EQ(at(outputs, r, t), 0.0) << "step " << t << " is not scored"; }
    }
  }
}

}  // namespace
}  // namespace engram::models
