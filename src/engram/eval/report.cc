// `engram eval`'s scoring and formatting (report.h): sacreBLEU's Score.format, ROUGE, accuracy
// and the per-bucket table.
#include "engram/eval/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "engram/core/error.h"
#include "engram/eval/accuracy.h"
#include "engram/eval/bleu.h"
#include "engram/eval/chrf.h"
#include "engram/eval/rouge.h"
#include "engram/eval/unicode.h"

namespace engram::eval {

namespace {

// sacreBLEU's Score.format: "NAME|SIG = SCORE VERBOSE" (text), "SCORE" (score only), or the JSON
// object {"name", "score", "signature", "verbose_score"?, one key per signature field}.
std::string format_score(const std::string& name, double score, const std::string& signature,
                         const std::string& verbose, const MetricReportOptions& a) {
  const std::string sc = fmt::format("{:.{}f}", score, a.width);
  if (a.score_only) return sc;
  if (a.json) {
    nlohmann::ordered_json j;
    j["name"] = name;
    j["score"] = std::stod(sc);
    j["signature"] = signature;
    if (!verbose.empty()) j["verbose_score"] = verbose;
    for (size_t pos = 0; pos <= signature.size();) {
      size_t end = signature.find('|', pos);
      if (end == std::string::npos) end = signature.size();
      const std::string field = signature.substr(pos, end - pos);
      const size_t colon = field.find(':');
      if (colon != std::string::npos) j[field.substr(0, colon)] = field.substr(colon + 1);
      pos = end + 1;
    }
    return j.dump(1);
  }
  std::string line = fmt::format("{}|{} = {}", name, signature, sc);
  if (!verbose.empty()) line += " " + verbose;
  return line;
}

std::string eval_bleu(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, const MetricReportOptions& a) {
  BleuOptions o;
  o.lowercase = a.lowercase;
  o.tokenize = a.tokenize == "none" ? BleuTokenizer::kNone : BleuTokenizer::k13a;
  o.smooth = a.smooth == "floor"   ? BleuSmooth::kFloor
             : a.smooth == "add-k" ? BleuSmooth::kAddK
             : a.smooth == "none"  ? BleuSmooth::kNone
                                   : BleuSmooth::kExp;
  o.smooth_value = a.smooth_value;
  const BleuScore s = corpus_bleu(hyps, refs, o);
  std::string prec;
  for (size_t i = 0; i < s.precisions.size(); ++i) {
    prec += fmt::format("{}{:.1f}", i ? "/" : "", s.precisions[i]);
  }
  const std::string verbose = fmt::format("{} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                                          prec, s.bp, s.ratio, s.sys_len, s.ref_len);
  std::string signature = s.signature;
  if (a.short_signature) {
    // corpus_bleu's nrefs (fixed or "var") is the first field of its signature.
    const std::string nrefs = signature.substr(6, signature.find('|') - 6);
    signature = bleu_signature(o, nrefs == "var" ? -1 : std::stoi(nrefs), true);
  }
  return format_score("BLEU", s.score, signature, verbose, a);
}

std::string eval_chrf(const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs, const MetricReportOptions& a) {
  ChrfOptions o = a.metric == "chrf++" ? chrf_plus_plus_options() : ChrfOptions{};
  o.lowercase = a.lowercase;
  const ChrfScore s = corpus_chrf(hyps, refs, o);
  std::string signature = s.signature;
  if (a.short_signature) {
    const std::string nrefs = signature.substr(6, signature.find('|') - 6);
    signature = chrf_signature(o, nrefs == "var" ? -1 : std::stoi(nrefs), true);
  }
  return format_score(s.name, s.score, signature, "", a);
}

// The two characters `\n` -> a newline (ROUGE-Lsum's sentence boundary).
std::string unescape_newlines(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += line[i];
    }
  }
  return out;
}

// ROUGE-1/2/L/Lsum, 0-100. With several references each segment keeps, per type, the reference
// with the best F1 (rouge_score's multi-reference convention); the corpus value is the segment mean.
std::string eval_rouge(const std::vector<std::string>& hyp_lines,
                       const std::vector<std::vector<std::string>>& ref_lines, const MetricReportOptions& a) {
  const RougeOptions options{a.stem};
  std::vector<std::string> hyps;
  for (const auto& h : hyp_lines) hyps.push_back(unescape_newlines(h));
  std::vector<std::vector<std::string>> refs(ref_lines.size());
  for (size_t k = 0; k < ref_lines.size(); ++k)
    for (const auto& r : ref_lines[k]) refs[k].push_back(unescape_newlines(r));
  RougeResult r;
  auto add = [](RougeScore& sum, const RougeScore& s) {
    sum.precision += s.precision, sum.recall += s.recall, sum.f1 += s.f1;
  };
  for (size_t i = 0; i < hyps.size(); ++i) {
    RougeResult best;
    bool first = true;
    for (const auto& stream : refs) {
      const RougeResult s = sentence_rouge(hyps[i], stream[i], options);
      if (first || s.rouge1.f1 > best.rouge1.f1) best.rouge1 = s.rouge1;
      if (first || s.rouge2.f1 > best.rouge2.f1) best.rouge2 = s.rouge2;
      if (first || s.rouge_l.f1 > best.rouge_l.f1) best.rouge_l = s.rouge_l;
      if (first || s.rouge_lsum.f1 > best.rouge_lsum.f1) best.rouge_lsum = s.rouge_lsum;
      first = false;
    }
    add(r.rouge1, best.rouge1), add(r.rouge2, best.rouge2), add(r.rouge_l, best.rouge_l);
    add(r.rouge_lsum, best.rouge_lsum);
  }
  for (auto* s : {&r.rouge1, &r.rouge2, &r.rouge_l, &r.rouge_lsum}) {
    s->precision /= hyps.size(), s->recall /= hyps.size(), s->f1 /= hyps.size();
  }
  const std::pair<const char*, const RougeScore*> types[] = {
      {"ROUGE-1", &r.rouge1}, {"ROUGE-2", &r.rouge2}, {"ROUGE-L", &r.rouge_l}, {"ROUGE-Lsum", &r.rouge_lsum}};
  auto num = [&](double v) { return fmt::format("{:.{}f}", 100 * v, a.width); };
  if (a.score_only) {
    return fmt::format("{} {} {} {}", num(r.rouge1.f1), num(r.rouge2.f1), num(r.rouge_l.f1), num(r.rouge_lsum.f1));
  }
  const std::string stem = a.stem ? "yes" : "no";
  if (a.json) {
    nlohmann::ordered_json j;
    j["name"] = "ROUGE";
    for (const auto& [name, s] : types) {
      j[name] = {{"precision", std::stod(num(s->precision))},
                 {"recall", std::stod(num(s->recall))},
                 {"f1", std::stod(num(s->f1))}};
    }
    j["nrefs"] = std::to_string(refs.size());
    j["stem"] = stem;
    return j.dump(1);
  }
  std::string out;
  for (const auto& [name, s] : types) {
    out += fmt::format("{}{}|nrefs:{}|stem:{} = {} (P = {} R = {})", out.empty() ? "" : "\n", name,
                       refs.size(), stem, num(s->f1), num(s->precision), num(s->recall));
  }
  return out;
}

// Exact string match against any reference ("--normalize": whitespace-collapsed, lowercased).
std::string eval_acc(const std::vector<std::string>& hyps,
                     const std::vector<std::vector<std::string>>& refs, const MetricReportOptions& a) {
  size_t correct = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    const bool hit = std::any_of(refs.begin(), refs.end(), [&](const std::vector<std::string>& stream) {
      return a.normalize ? exact_match({hyps[i]}, {stream[i]}) == 1.0
                         : accuracy({hyps[i]}, {stream[i]}) == 1.0;
    });
    correct += hit;
  }
  const double score = 100.0 * correct / hyps.size();
  const std::string name = a.normalize ? "ExactMatch" : "Accuracy";
  const std::string sc = fmt::format("{:.{}f}", score, a.width);
  if (a.score_only) return sc;
  if (a.json) {
    nlohmann::ordered_json j;
    j["name"] = name;
    j["score"] = std::stod(sc);
    j["correct"] = correct;
    j["total"] = hyps.size();
    j["nrefs"] = std::to_string(refs.size());
    return j.dump(1);
  }
  return fmt::format("{}|nrefs:{} = {} ({}/{})", name, refs.size(), sc, correct, hyps.size());
}

// Words of a line (runs of ASCII whitespace).
int word_count(const std::string& line) {
  int n = 0;
  bool in_word = false;
  for (unsigned char ch : line) {
    const bool space = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
    n += !space && !in_word;
    in_word = !space;
  }
  return n;
}

// Code points of a line other than Python whitespace (unsegmented text's length).
int char_count(const std::string& line) { return static_cast<int>(char_boundaries(remove_python_space(line)).size()) - 1; }

// The metric on each source-length bucket, as a Markdown table (bucket, segments, score): the
// seeds' claim that a fixed context loses information on long inputs, measured.
constexpr long kMaxBucketBound = 1'000'000;  // source words or characters; a bound beyond is never reached

std::string by_length_table(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
                            const MetricReportOptions& a, const SegmentReader& read) {
  const std::vector<std::string> src = read(a.by_length);
  ENGRAM_CHECK(src.size() == hyps.size(), "eval: --by-length {} has {} lines but the hypotheses have {}", a.by_length,
               src.size(), hyps.size());
  std::vector<int> bounds;
  for (size_t pos = 0; pos <= a.buckets.size();) {
    size_t end = a.buckets.find(',', pos);
    if (end == std::string::npos) end = a.buckets.size();
    const std::string field = a.buckets.substr(pos, end - pos);
    char* stop = nullptr;
    errno = 0;
    const long v = std::strtol(field.c_str(), &stop, 10);  // ERANGE past long: refused, never wrapped
    ENGRAM_CHECK(!field.empty() && *stop == '\0' && errno == 0 && v > 0 && v <= kMaxBucketBound &&
                     (bounds.empty() || v > bounds.back()),
                 "eval: --buckets '{}' must be increasing integers in [1, {}], e.g. 10,20,30", a.buckets,
                 kMaxBucketBound);
    bounds.push_back(static_cast<int>(v));
    pos = end + 1;
  }
  MetricReportOptions quiet = a;
  quiet.score_only = true;
  quiet.json = false;
  ENGRAM_CHECK(a.length_unit == "words" || a.length_unit == "chars", "eval: --length-unit '{}' must be words or chars",
               a.length_unit);
  const bool chars = a.length_unit == "chars";
  std::string out = markdown_head(
      {chars ? "source characters" : "source words", "segments", a.metric == "bleu" ? "BLEU" : a.metric});
  for (size_t b = 0; b <= bounds.size(); ++b) {
    const int lo = b == 0 ? 1 : bounds[b - 1] + 1, hi = b < bounds.size() ? bounds[b] : 0;
    std::vector<std::string> h;
    std::vector<std::vector<std::string>> r(refs.size());
    for (size_t i = 0; i < hyps.size(); ++i) {
      const int n = chars ? char_count(src[i]) : word_count(src[i]);
      if (n < lo || (hi > 0 && n > hi)) continue;
      h.push_back(hyps[i]);
      for (size_t k = 0; k < refs.size(); ++k) r[k].push_back(refs[k][i]);
    }
    const std::string range = hi > 0 ? fmt::format("{}-{}", lo, hi) : fmt::format("{}+", lo);
    if (h.empty()) {
      out += fmt::format("| {} | 0 | - |\n", range);
      continue;
    }
    const std::string score = a.metric == "bleu" ? eval_bleu(h, r, quiet) : eval_chrf(h, r, quiet);
    out += fmt::format("| {} | {} | {} |\n", range, h.size(), score);
  }
  return out;
}

}  // namespace

std::string markdown_head(std::initializer_list<std::string_view> titles, std::string_view align, bool spaced) {
  std::string head = "|", rule = "|";
  for (size_t i = 0; i < titles.size(); ++i) {
    head += fmt::format(" {} |", titles.begin()[i]);
    const std::string_view cell = i < align.size() && align[i] == 'r' ? "---:" : "---";
    rule += spaced ? fmt::format(" {} |", cell) : fmt::format("{}|", cell);
  }
  return head + "\n" + rule + "\n";
}

std::string metric_report(const MetricReportOptions& a, const SegmentReader& read) {
  const std::vector<std::string> hyps = read(a.hyp);
  const std::string hyp_name = a.hyp == "-" ? "<stdin>" : a.hyp;
  ENGRAM_CHECK(!hyps.empty(), "eval: {} has no lines to score", hyp_name);
  std::vector<std::vector<std::string>> refs;
  for (const auto& path : a.refs) {
    ENGRAM_CHECK(path != "-" || a.hyp != "-", "eval: stdin can be the hypothesis or a reference, not both");
    refs.push_back(read(path));
    auto lines = [](size_t n) { return fmt::format("{} line{}", n, n == 1 ? "" : "s"); };
    ENGRAM_CHECK(refs.back().size() == hyps.size(), "eval: {} has {} but {} has {}", hyp_name,
                 lines(hyps.size()), path == "-" ? "<stdin>" : path, lines(refs.back().size()));
  }
  std::string out;
  // An option that does not apply to the metric is an error, not silently ignored.
  const MetricReportOptions defaults;
  const bool bleu = a.metric == "bleu", chrf = a.metric == "chrf" || a.metric == "chrf++";
  auto only = [&](bool given, const char* flag, bool applies, const char* to) {
    ENGRAM_CHECK(!given || applies, "eval: {} applies to {} only, not to {}", flag, to, a.metric);
  };
  only(a.tokenize != defaults.tokenize, "--tokenize", bleu, "bleu");
  only(a.smooth != defaults.smooth, "--smooth-method", bleu, "bleu");
  only(a.smooth_value.has_value(), "--smooth-value", bleu, "bleu");
  if (a.smooth_value) {
    ENGRAM_CHECK(a.smooth == "floor" || a.smooth == "add-k",
                 "eval: --smooth-value applies to --smooth-method floor or add-k, not {}", a.smooth);
    ENGRAM_CHECK(std::isfinite(*a.smooth_value) && *a.smooth_value >= 0,
                 "eval: --smooth-value {} must be a finite number >= 0", *a.smooth_value);
  }
  only(a.lowercase, "--lowercase", bleu || chrf, "bleu and chrf");
  only(a.normalize, "--normalize", a.metric == "acc", "acc");
  only(a.stem, "--stem", a.metric == "rouge", "rouge");
  only(a.buckets != defaults.buckets && a.by_length.empty(), "--buckets", false, "--by-length");
  only(a.length_unit != defaults.length_unit && a.by_length.empty(), "--length-unit", false, "--by-length");
  if (a.metric == "bleu") out = eval_bleu(hyps, refs, a);
  else if (a.metric == "chrf" || a.metric == "chrf++") out = eval_chrf(hyps, refs, a);
  else if (a.metric == "rouge") out = eval_rouge(hyps, refs, a);
  else out = eval_acc(hyps, refs, a);
  if (!a.by_length.empty()) {
    ENGRAM_CHECK(a.metric == "bleu" || a.metric == "chrf" || a.metric == "chrf++",
                 "eval: --by-length works with bleu and chrf, not {}", a.metric);
    out += "\n\n" + by_length_table(hyps, refs, a, read);
    out.pop_back();
  }
  return out;
}

}  // namespace engram::eval
