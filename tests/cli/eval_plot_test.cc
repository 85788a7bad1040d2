// `engram eval` and `engram plot`, run in-process through CLI11 exactly as the binary parses them:
// sacreBLEU-format output on sacreBLEU's own README example, JSON, score-only, the other metrics,
// and the one-line errors (mismatched line counts, malformed metrics JSONL).
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/core/error.h"
#include "cli/run_cli.h"
#include "io/temp_dir.h"
#include "viz/xml_check.h"

namespace engram::cli {
namespace {

using io::testing::TempDir;
using io::testing::write_bytes;

const std::string kGolden = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/sacrebleu/";

// `engram ARGS...` with the eval and plot commands; returns stdout. engram::Error escapes.
std::string run_scorers(std::vector<std::string> args) {
  return testing::run_cli(std::move(args), {register_eval, register_rouge, register_plot});
}

std::string error_of(const std::vector<std::string>& args) {
  try {
    run_scorers(args);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// sacreBLEU README "Using SacreBLEU from Python" (two references): BLEU 48.530827, chrF2 59.73;
// the verbose part is BLEU.format() there: "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944
// hyp_len = 17 ref_len = 18)". Text layout = sacrebleu/metrics/base.py Score.format.
TEST(EvalCommand, BleuPrintsSacrebleuTextLine) {
  EXPECT_EQ(run_scorers({"eval", "bleu", kGolden + "readme.hyp", kGolden + "readme.ref1", kGolden + "readme.ref2"}),
            "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0+engram = 48.5 "
            "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n");
  EXPECT_EQ(run_scorers({"eval", "bleu", "-b", "-w", "4", kGolden + "readme.hyp", kGolden + "readme.ref1",
                 kGolden + "readme.ref2"}),
            "48.5308\n");
}

TEST(EvalCommand, JsonMatchesSacrebleuFields) {
  const auto j = nlohmann::json::parse(run_scorers({"eval", "bleu", "--json", kGolden + "readme.hyp",
                                            kGolden + "readme.ref1", kGolden + "readme.ref2"}));
  EXPECT_EQ(j["name"], "BLEU");
  EXPECT_DOUBLE_EQ(j["score"].get<double>(), 48.5);
  EXPECT_EQ(j["signature"], "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0+engram");
  EXPECT_EQ(j["verbose_score"], "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  EXPECT_EQ(j["nrefs"], "2");
  EXPECT_EQ(j["tok"], "13a");
}

TEST(EvalCommand, ChrfAndChrfPlusPlus) {
  EXPECT_EQ(run_scorers({"eval", "chrf", kGolden + "readme.hyp", kGolden + "readme.ref1", kGolden + "readme.ref2"}),
            "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.0.0+engram = 59.7\n");
  const std::string pp = run_scorers({"eval", "chrf++", "--short", kGolden + "readme.hyp", kGolden + "readme.ref1"});
  EXPECT_EQ(pp.rfind("chrF2++|#:1|c:mixed|e:yes|nc:6|nw:2|s:no|v:2.0.0+engram = ", 0), 0u) << pp;
}

TEST(EvalCommand, AccuracyAndRouge) {
  TempDir dir;
  write_bytes(dir / "hyp", "a\nb\nc d\nd\n");
  write_bytes(dir / "ref", "a\nx\nc  D\ny\n");
  write_bytes(dir / "ref2", "z\nb\nz\nz\n");
  const std::string hyp = (dir / "hyp").string(), ref = (dir / "ref").string(), ref2 = (dir / "ref2").string();
  EXPECT_EQ(run_scorers({"eval", "acc", hyp, ref}), "Accuracy|nrefs:1 = 25.0 (1/4)\n");
  EXPECT_EQ(run_scorers({"eval", "acc", "--normalize", hyp, ref}), "ExactMatch|nrefs:1 = 50.0 (2/4)\n");
  EXPECT_EQ(run_scorers({"eval", "acc", hyp, ref, ref2}), "Accuracy|nrefs:2 = 50.0 (2/4)\n");  // any reference
  EXPECT_EQ(run_scorers({"eval", "rouge", hyp, hyp}),
            "ROUGE-1|nrefs:1|stem:no = 100.0 (P = 100.0 R = 100.0)\n"
            "ROUGE-2|nrefs:1|stem:no = 25.0 (P = 25.0 R = 25.0)\n"  // only "c d" has a bigram; others score 0
            "ROUGE-L|nrefs:1|stem:no = 100.0 (P = 100.0 R = 100.0)\n"
            "ROUGE-Lsum|nrefs:1|stem:no = 100.0 (P = 100.0 R = 100.0)\n");
  const auto j = nlohmann::json::parse(run_scorers({"eval", "rouge", "--json", hyp, ref, ref2}));
  // Best reference per segment: a|a, b|b, "c d"|"c D" (lowercased), d vs y|z -> 0.  R1 = 3/4.
  EXPECT_DOUBLE_EQ(j["ROUGE-1"]["f1"].get<double>(), 75.0);
}

// `engram rouge`: the rouge_score union-LCS example (rouge_scorer_test.py testRougeLsum) with
// its two candidate sentences on one line, separated by the two characters \n. By hand:
// ROUGE-1 4 of 10 candidate / 5 reference tokens -> P 40, R 80, F 53.3 (the \n is no token "n":
// P would be 4/11); ROUGE-Lsum union {w1 w2 w3 w5} -> P 40, R 80. Stemming: "cats running" vs
// "cat runs" shares no token as is, [cat run] on both sides with --stem.
TEST(RougeCommand, SentencesAndStemmer) {
  TempDir dir;
  write_bytes(dir / "hyp", "w1 w2 w6 w7 w8\\nw1 w3 w8 w9 w5\ncats running\n");
  write_bytes(dir / "ref", "w1 w2 w3 w4 w5\ncat runs\n");
  const std::string hyp = (dir / "hyp").string(), ref = (dir / "ref").string();
  auto j = nlohmann::json::parse(run_scorers({"rouge", "--json", "-w", "4", hyp, ref}));
  EXPECT_EQ(j["stem"], "no");
  // Mean of the two lines; the second scores 0 without the stemmer.
  EXPECT_NEAR(j["ROUGE-1"]["precision"].get<double>(), 20.0, 1e-9);
  EXPECT_NEAR(j["ROUGE-1"]["recall"].get<double>(), 40.0, 1e-9);
  EXPECT_NEAR(j["ROUGE-Lsum"]["precision"].get<double>(), 20.0, 1e-9);
  EXPECT_NEAR(j["ROUGE-Lsum"]["recall"].get<double>(), 40.0, 1e-9);
  j = nlohmann::json::parse(run_scorers({"rouge", "--stem", "--json", "-w", "4", hyp, ref}));
  EXPECT_EQ(j["stem"], "yes");
  EXPECT_NEAR(j["ROUGE-1"]["f1"].get<double>(), (53.3333 + 100.0) / 2, 1e-3);
  // ROUGE-2, line 1: bigram w1 w2 shared of 9 candidate / 4 reference -> F = 2 (1/9)(1/4) /
  // (1/9 + 1/4) = 2/13; line 2: "cat run" -> 1. Mean (2/13 + 1) / 2 = 57.69.
  EXPECT_NEAR(j["ROUGE-2"]["f1"].get<double>(), 57.6923, 1e-3);
  const std::string text = run_scorers({"rouge", hyp, ref});
  EXPECT_EQ(text.substr(0, text.find('\n')), "ROUGE-1|nrefs:1|stem:no = 26.7 (P = 20.0 R = 40.0)");
  EXPECT_EQ(run_scorers({"eval", "rouge", "--stem", "-b", hyp, ref}), "76.7 57.7 76.7 76.7\n");  // R1 R2 RL RLsum F1
  EXPECT_EQ(error_of({"eval", "bleu", "--stem", hyp, ref}), "eval: --stem applies to rouge only, not to bleu");
}

// --by-length: each bucket is scored as its own corpus (source words 1-2 and 3+ here): the
// bucket of exact copies scores 100, the bucket of wrong outputs 0.
TEST(EvalCommand, ByLengthScoresEachSourceBucket) {
  TempDir dir;
  write_bytes(dir / "src", "a b\nc d e f\nx\ng h i\n");
  write_bytes(dir / "hyp", "one two three four\nzz yy\nfive six seven eight\nqq\n");
  write_bytes(dir / "ref", "one two three four\nnine ten eleven twelve\nfive six seven eight\nthirteen fourteen\n");
  const std::string src = (dir / "src").string(), hyp = (dir / "hyp").string(), ref = (dir / "ref").string();
  const std::string out = run_scorers({"eval", "bleu", hyp, ref, "--by-length", src, "--buckets", "2"});
  EXPECT_NE(out.find("| source words | segments | BLEU |\n|---|---|---|\n| 1-2 | 2 | 100.0 |\n| 3+ | 2 | 0.0 |\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(error_of({"eval", "bleu", hyp, ref, "--by-length", src, "--buckets", "5,3"}),
            "eval: --buckets '5,3' must be increasing integers in [1, 1000000], e.g. 10,20,30");
  write_bytes(dir / "short", "a\n");
  EXPECT_EQ(error_of({"eval", "bleu", hyp, ref, "--by-length", (dir / "short").string()}),
            "eval: --by-length " + (dir / "short").string() + " has 1 lines but the hypotheses have 4");
}

TEST(EvalCommand, MismatchedLineCountsNameBothFilesAndCounts) {
  TempDir dir;
  write_bytes(dir / "hyp", "a b c\nd e\nf\n");
  write_bytes(dir / "ref", "a b c\nd e\n");
  const std::string hyp = (dir / "hyp").string(), ref = (dir / "ref").string();
  for (const char* metric : {"bleu", "chrf", "rouge", "acc"}) {
    EXPECT_EQ(error_of({"eval", metric, hyp, ref}),
              "eval: " + hyp + " has 3 lines but " + ref + " has 2 lines");
  }
  EXPECT_EQ(error_of({"eval", "bleu", hyp, hyp, ref}),
            "eval: " + hyp + " has 3 lines but " + ref + " has 2 lines");
  write_bytes(dir / "empty", "");
  EXPECT_EQ(error_of({"eval", "bleu", (dir / "empty").string(), ref}),
            "eval: " + (dir / "empty").string() + " has no lines to score");
  EXPECT_THROW(run_scorers({"eval", "meteor", hyp, ref}), CLI::ValidationError);
}

TEST(PlotCommand, WritesCurvesSvg) {
  TempDir dir;
  write_bytes(dir / "metrics.jsonl",
              "{\"event\":\"train\",\"step\":100,\"loss\":2.3,\"ppl\":9.9,\"lr\":0.001}\n"
              "{\"event\":\"valid\",\"step\":1000,\"bleu\":21.3,\"ppl\":8.1}\n"
              "{\"event\":\"train\",\"step\":1000,\"loss\":2.1,\"ppl\":8.2,\"lr\":0.001}\n");
  const std::string out = (dir / "curves.svg").string();
  EXPECT_EQ(run_scorers({"plot", (dir / "metrics.jsonl").string(), "-o", out}),
            "wrote " + out + ": 4 charts (loss, ppl, bleu, lr)\n");
  const auto root = viz::testing::parse_xml(io::testing::read_bytes(out));
  int charts = 0;
  for (const auto* g : root.find_all("g")) charts += g->attr("class") == "chart";
  EXPECT_EQ(charts, 4);
  EXPECT_EQ(run_scorers({"plot", (dir / "metrics.jsonl").string(), "-o", out, "--metrics", "bleu,loss"}),
            "wrote " + out + ": 2 charts (bleu, loss)\n");
  EXPECT_EQ(error_of({"plot", (dir / "metrics.jsonl").string(), "-o", out, "--metrics", "chrf"}),
            (dir / "metrics.jsonl").string() + ": no metric 'chrf' in the log (it has: loss, ppl, bleu, lr)");
}

TEST(PlotCommand, MalformedJsonlIsAFileLineError) {
  TempDir dir;
  write_bytes(dir / "m.jsonl", "{\"step\":1,\"loss\":2}\n{\"step\":2,\"loss\":\n");
  const std::string err = error_of({"plot", (dir / "m.jsonl").string(), "-o", (dir / "x.svg").string()});
  EXPECT_EQ(err.rfind((dir / "m.jsonl").string() + ":2: not valid JSON (", 0), 0u) << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.svg"));
}

}  // namespace
}  // namespace engram::cli
