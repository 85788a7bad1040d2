// `engram eval`'s report (eval/report.h) on in-memory "files": the sacreBLEU text line, score
// only, JSON, ROUGE's four lines, the by-length table and the input checks. Expected strings are
// the engram binary's output before the report moved out of cli/ (unchanged byte for byte), except
// ROUGE's, which since gained "|stem:" and the ROUGE-Lsum line.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "engram/core/error.h"
#include "engram/eval/report.h"

namespace engram::eval {
namespace {

const std::map<std::string, std::vector<std::string>> kFiles = {
    {"hyp", {"the cat sat on the mat", "a dog runs"}},
    {"ref", {"the cat sat on the mat", "a dog ran"}},
    {"src", {"die katze sass auf der matte", "ein hund"}},
    {"one", {"x"}},
};

std::vector<std::string> read(const std::string& path) { return kFiles.at(path); }

MetricReportOptions options(const std::string& metric) {
  MetricReportOptions o;
  o.metric = metric;
  o.hyp = "hyp";
  o.refs = {"ref"};
  return o;
}

// markdown_head, the head of every report's Markdown table: the expected strings are the heads
// the reports wrote by hand before it (memn2n's, pointer-generator's, pointer's), byte for byte.
TEST(MarkdownHead, TheHeadsTheReportsWroteByHand) {
  EXPECT_EQ(markdown_head({"n", "instances", "exact sequence"}), "| n | instances | exact sequence |\n|---|---|---|\n");
  EXPECT_EQ(markdown_head({"task", "name", "test error %", "paper % (test)", "support hit %"}, "rlrrr"),
            "| task | name | test error % | paper % (test) | support hit % |\n|---:|---|---:|---:|---:|\n");
  EXPECT_EQ(markdown_head({"ROUGE (stem: yes)", "F1", "P", "R"}, "lrrr", true),
            "| ROUGE (stem: yes) | F1 | P | R |\n| --- | ---: | ---: | ---: |\n");
  EXPECT_EQ(markdown_head({"a", "b", "c"}, "r"), "| a | b | c |\n|---:|---|---|\n") << "columns past align: left";
}

TEST(MetricReport, BleuLineAndTable) {
  const std::string line = "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0+engram = 88.4 "
                           "88.9/85.7/80.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 9 ref_len = 9)";
  EXPECT_EQ(metric_report(options("bleu"), read), line);
  MetricReportOptions o = options("bleu");
  o.by_length = "src";
  o.buckets = "3";
  EXPECT_EQ(metric_report(o, read), line + "\n\n| source words | segments | BLEU |\n|---|---|---|\n"
                                           "| 1-3 | 1 | 0.0 |\n| 4+ | 1 | 100.0 |");
}

// Unsegmented Chinese: one whitespace "word" per line, so buckets count characters instead.
TEST(MetricReport, ByLengthInCharacters) {
  const std::map<std::string, std::vector<std::string>> files = {
      {"hyp", {"Welcome to Beijing .", "I like it"}},
      {"ref", {"Welcome to Beijing .", "I like tea"}},
      {"src", {"欢迎 来北京。", "我喜欢"}},  // 6 characters (the space is not one), 3
  };
  auto from = [&](const std::string& path) { return files.at(path); };
  MetricReportOptions o = options("bleu");
  o.by_length = "src";
  o.buckets = "5";
  o.length_unit = "chars";
  const std::string table = metric_report(o, from);
  EXPECT_NE(table.find("| source characters | segments | BLEU |\n|---|---|---|\n| 1-5 | 1 | 0.0 |\n| 6+ | 1 | 100.0 |"),
            std::string::npos) << table;
  o.length_unit = "words";  // both sources are short in words: 2 and 1
  EXPECT_NE(metric_report(o, from).find("| 1-5 | 2 |"), std::string::npos);
  auto error_of = [&](const MetricReportOptions& bad) -> std::string {
    try {
      metric_report(bad, from);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  o.length_unit = "bytes";
  EXPECT_EQ(error_of(o), "eval: --length-unit 'bytes' must be words or chars");
  o = options("bleu");
  o.length_unit = "chars";
  EXPECT_EQ(error_of(o), "eval: --length-unit applies to --by-length only, not to bleu");
}

TEST(MetricReport, ScoreOnlyJsonRouge) {
  MetricReportOptions chrf = options("chrf");
  chrf.score_only = true;
  chrf.width = 2;
  EXPECT_EQ(metric_report(chrf, read), "88.85");
  MetricReportOptions acc = options("acc");
  acc.json = true;
  EXPECT_EQ(metric_report(acc, read),
            "{\n \"name\": \"Accuracy\",\n \"score\": 50.0,\n \"correct\": 1,\n \"total\": 2,\n \"nrefs\": \"1\"\n}");
  // One sentence per segment: ROUGE-Lsum equals ROUGE-L.
  EXPECT_EQ(metric_report(options("rouge"), read), "ROUGE-1|nrefs:1|stem:no = 83.3 (P = 83.3 R = 83.3)\n"
                                                   "ROUGE-2|nrefs:1|stem:no = 75.0 (P = 75.0 R = 75.0)\n"
                                                   "ROUGE-L|nrefs:1|stem:no = 83.3 (P = 83.3 R = 83.3)\n"
                                                   "ROUGE-Lsum|nrefs:1|stem:no = 83.3 (P = 83.3 R = 83.3)");
}

// Options that do not apply to the chosen metric are errors naming the option (hardening
// issue: they used to be ignored).
TEST(MetricReport, OptionsForAnotherMetricAreErrors) {
  auto error_of = [](const MetricReportOptions& o) -> std::string {
    try {
      metric_report(o, read);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  MetricReportOptions o = options("chrf");
  o.tokenize = "none";
  EXPECT_EQ(error_of(o), "eval: --tokenize applies to bleu only, not to chrf");
  o = options("rouge");
  o.lowercase = true;
  EXPECT_EQ(error_of(o), "eval: --lowercase applies to bleu and chrf only, not to rouge");
  o = options("bleu");
  o.normalize = true;
  EXPECT_EQ(error_of(o), "eval: --normalize applies to acc only, not to bleu");
  o = options("acc");
  o.smooth_value = 0.5;
  EXPECT_EQ(error_of(o), "eval: --smooth-value applies to bleu only, not to acc");
  o = options("bleu");
  o.buckets = "5";
  EXPECT_EQ(error_of(o), "eval: --buckets applies to --by-length only, not to bleu");
  o = options("chrf");
  o.lowercase = true;
  EXPECT_EQ(error_of(o).find("eval:"), std::string::npos) << "chrf takes --lowercase";
}

// A smoothing value that is not finite, is negative, or goes to a method without one is refused:
// it printed "BLEU = -nan", or fell back to the default while the signature showed the default.
TEST(MetricReport, BadSmoothingValuesAreErrors) {
  auto error_of = [](const MetricReportOptions& o) -> std::string {
    try {
      metric_report(o, read);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  MetricReportOptions o = options("bleu");
  o.smooth = "floor";
  for (double v : {std::nan(""), -1.0, -0.5, HUGE_VAL, -HUGE_VAL}) {
    o.smooth_value = v;
    EXPECT_NE(error_of(o).find("eval: --smooth-value"), std::string::npos) << v;
    EXPECT_NE(error_of(o).find("must be a finite number >= 0"), std::string::npos) << v;
  }
  o.smooth = "add-k";
  o.smooth_value = -2;
  EXPECT_NE(error_of(o).find("must be a finite number >= 0"), std::string::npos);
  o.smooth = "exp";
  o.smooth_value = 0.5;
  EXPECT_EQ(error_of(o), "eval: --smooth-value applies to --smooth-method floor or add-k, not exp");
  o.smooth = "floor";
  o.smooth_value = 0.5;
  EXPECT_EQ(error_of(o), "<no error>");
  EXPECT_NE(metric_report(o, read).find("smooth:floor[0.50]"), std::string::npos) << metric_report(o, read);
  o.smooth_value = 0;  // zero is a value (no smoothing mass), not "the default"
  EXPECT_NE(metric_report(o, read).find("smooth:floor[0.00]"), std::string::npos) << metric_report(o, read);
}

// --buckets past any sentence length (or past long) is refused, never wrapped into a negative bound.
TEST(MetricReport, HugeBucketBoundsAreErrors) {
  MetricReportOptions o = options("bleu");
  o.by_length = "src";
  for (const char* b : {"10,99999999999", "99999999999999999999999", "10,1000001"}) {
    o.buckets = b;
    try {
      metric_report(o, read);
      ADD_FAILURE() << b << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("must be increasing integers in [1, 1000000]"), std::string::npos) << e.what();
    }
  }
  o.buckets = "10,1000000";
  EXPECT_NO_THROW(metric_report(o, read));
}

TEST(MetricReport, InputChecks) {
  MetricReportOptions o = options("bleu");
  o.refs = {"one"};
  EXPECT_THROW(metric_report(o, read), Error);  // 2 lines against 1
  o = options("rouge");
  o.by_length = "src";
  EXPECT_THROW(metric_report(o, read), Error);  // by-length is for bleu and chrf
  o = options("bleu");
  o.by_length = "src";
  o.buckets = "5,3";
  EXPECT_THROW(metric_report(o, read), Error);  // buckets must increase
  o = options("bleu");
  o.hyp = o.refs[0] = "-";
  EXPECT_THROW(metric_report(o, [](const std::string&) { return std::vector<std::string>{"a"}; }), Error);
}

}  // namespace
}  // namespace engram::eval
