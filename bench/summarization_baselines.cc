// Extractive baselines on BBC News Summary (data/bbc.h): lead-3 and lead-k (the first body
// sentences until the reference's word count is reached) for headline generation (body ->
// headline) and summarization (body -> extractive summary), on the valid and test splits, scored
// with ROUGE-1/2/L/Lsum (rouge_score-compatible, eval/rouge.h) with and without the stemmer.
// Prints Markdown tables (F1, then P/R) to stdout and writes nothing else.
//   build/bench/summarization_baselines [--data DIR]   (default $ENGRAM_DATA_DIR/summarization/
//   bbc-news-summary, ENGRAM_DATA_DIR defaulting to ../shared/data)
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "engram/core/error.h"
#include "engram/data/bbc.h"
#include "engram/eval/rouge.h"
#include "engram/eval/summarization.h"

namespace {

using engram::data::BbcSplit;
using engram::data::NewsArticle;
namespace ev = engram::eval;

std::string pct(double v) { return fmt::format("{:.2f}", 100 * v); }

int run(int argc, char** argv) {
  const char* env = std::getenv("ENGRAM_DATA_DIR");
  std::string dir = std::string(env && *env ? env : "../shared/data") + "/summarization/bbc-news-summary";
  CLI::App app{"lead-3 / lead-k ROUGE on BBC News Summary"};
  app.add_option("--data", dir, "the bbc-news-summary folder")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::string command = "build/bench/summarization_baselines";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<NewsArticle> all = engram::data::load_bbc(dir);
  std::set<std::string> train_headlines;
  for (const auto& a : all)
    if (engram::data::bbc_split_of(a) == BbcSplit::kTrain) train_headlines.insert(a.headline);

  fmt::print("command: {}\ndata: {} ({} articles)\n\n", command, dir, all.size());
  for (BbcSplit split : {BbcSplit::kValid, BbcSplit::kTest}) {
    const auto part = engram::data::bbc_subset(all, split);
    size_t dup = 0;
    for (const auto& a : part) dup += train_headlines.count(a.headline);
    fmt::print("## {} split: {} articles ({} with a headline also in train)\n\n", engram::data::bbc_split_name(split),
               part.size(), dup);
    fmt::print("| task | baseline | stem | R1 F | R2 F | RL F | RLsum F | R1 P/R | R2 P/R | RL P/R | RLsum P/R | hyp words |\n");
    fmt::print("|---|---|---|---:|---:|---:|---:|---|---|---|---|---:|\n");
    for (const char* task : {"headline", "summary"}) {
      const bool headline = std::string(task) == "headline";
      for (const char* baseline : {"lead-3", "lead-k"}) {
        std::vector<std::string> hyps, refs;
        size_t words = 0;
        for (const auto& a : part) {
          const std::vector<std::string> ref = headline ? std::vector<std::string>{a.headline} : a.summary;
          size_t ref_words = 0;
          for (const auto& s : ref) ref_words += ev::word_count(s);
          const auto hyp = std::string(baseline) == "lead-3" ? ev::lead_n(a.body, 3) : ev::lead_words(a.body, ref_words);
          for (const auto& s : hyp) words += ev::word_count(s);
          hyps.push_back(ev::lsum_text(hyp));
          refs.push_back(ev::lsum_text(ref));
        }
        for (bool stem : {false, true}) {
          const ev::RougeResult r = ev::corpus_rouge(hyps, refs, {stem});
          auto pr = [](const ev::RougeScore& s) { return pct(s.precision) + " / " + pct(s.recall); };
          fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} |\n", task, baseline,
                     stem ? "yes" : "no", pct(r.rouge1.f1), pct(r.rouge2.f1), pct(r.rouge_l.f1),
                     pct(r.rouge_lsum.f1), pr(r.rouge1), pr(r.rouge2), pr(r.rouge_l), pr(r.rouge_lsum),
                     static_cast<double>(words) / static_cast<double>(part.size()));
        }
      }
    }
    fmt::print("\n");
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("ROUGE F1/P/R in %, mean over articles; hyp words = mean words per baseline output. {:.1f} s.\n", secs);
  ENGRAM_CHECK(std::fflush(stdout) == 0 && !std::ferror(stdout), "cannot write to standard output");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const engram::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
