// `engram translate -m MODEL_DIR [--beam K] [--alpha A] [--n-best K] [--alignments FILE]`:
// reads source lines from stdin and writes one translation per line to stdout, streaming: lines
// are decoded in batches of what is already available, so an interactive session gets each
// answer at once and a pipe gets batched throughput. With --n-best K, K lines per input in
// Moses format "i ||| text ||| score". --alignments writes one JSON line per input (its best
// hypothesis): {"src": [...], "tgt": [...], "score": s, "alignment": [[α per source token] per
// target token]}. A thin adapter over models/seq2seq_translate.h.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/core/kernels/blas.h"
#include "engram/data/text.h"
#include "engram/models/seq2seq/translate.h"

namespace engram::cli {

namespace {

struct TranslateArgs {
  std::string model;
  models::TranslateOptions options;
  std::shared_ptr<decode::SearchOptions> search = std::make_shared<decode::SearchOptions>();
  std::string alignments;  // path, "-" = stderr
  bool scores = false;
  int threads = 1;         // BLAS / OpenMP threads
  std::string precision = "fp32";
};

// Lines from a file descriptor, telling whether more input is ready without blocking.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Next complete line (without '\n' / '\r'), blocking; false at the end of input.
  bool next(std::string* line) {
    while (true) {
      const size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        line->assign(buf_, pos_, nl - pos_);
        pos_ = nl + 1;
        ++lines_;
        ENGRAM_CHECK(line->size() <= models::kMaxLineBytes, "<stdin>:{}: a line longer than {} bytes (the limit of "
                     "one input sentence)", lines_, models::kMaxLineBytes);
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return true;
      }
      if (eof_) {
        if (pos_ >= buf_.size()) return false;
        line->assign(buf_, pos_, std::string::npos);
        pos_ = buf_.size();
        return true;
      }
      fill();
    }
  }
  // A complete line (or the end) can be read without waiting.
  bool ready() {
    if (buf_.find('\n', pos_) != std::string::npos || eof_) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

 private:
  void fill() {
    buf_.erase(0, pos_);
    pos_ = 0;
    ENGRAM_CHECK(buf_.size() <= models::kMaxLineBytes, "<stdin>:{}: a line longer than {} bytes (the limit of "
                 "one input sentence)", lines_ + 1, models::kMaxLineBytes);
    char tmp[1 << 16];
    const ssize_t n = ::read(fd_, tmp, sizeof tmp);
    ENGRAM_CHECK(n >= 0, "<stdin>: read error");
    if (n == 0) eof_ = true;
    buf_.append(tmp, static_cast<size_t>(n));
  }
  int fd_;
  int64_t lines_ = 0;  // complete lines returned
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

void run_translate(const TranslateArgs& a) {
  use_threads(a.threads);
  models::TranslateOptions o = a.options;
  o.search = *a.search;
  if (o.search.beam == 1 && o.search.n_best > 1) o.search.beam = o.search.n_best;  // --n-best K alone: beam K
  o.search.alignments = !a.alignments.empty();
  o.search.validate();
  const auto loaded = models::load_model_as<models::Translator>(a.model, "seq2seq");
  models::Translator& tr = *loaded;
  if (a.precision == "bf16") tr.use_bf16();
  else tr.use_packed();  // fp32: few-row products on the packed copy (same values)
  std::ofstream align_file;
  std::FILE* align_out = nullptr;
  if (a.alignments == "-") {
    align_out = stderr;
  } else if (!a.alignments.empty()) {
    align_file.open(a.alignments, std::ios::trunc);
    ENGRAM_CHECK(align_file.good(), "{}: cannot write alignments", a.alignments);
  }
  LineReader in(STDIN_FILENO);
  std::vector<std::string> lines;
  std::string line;
  int64_t line_no = 0, index = 0;
  auto flush = [&] {
    if (lines.empty()) return;
    std::vector<models::Translation> out = tr.translate(lines, o);
    for (const models::Translation& t : out) {
      if (o.search.n_best > 1 || a.scores) {
        for (size_t k = 0; k < t.texts.size(); ++k)
          std::printf("%lld ||| %s ||| %.4f\n", static_cast<long long>(index), t.texts[k].c_str(), t.nbest[k].score);
        if (t.texts.empty()) std::printf("%lld |||  ||| 0\n", static_cast<long long>(index));
      } else {
        std::printf("%s\n", t.text().c_str());
      }
      if (align_out) std::fprintf(align_out, "%s\n", models::alignment_json(t).c_str());
      if (align_file.is_open()) align_file << models::alignment_json(t) << '\n';
      ++index;
    }
    ENGRAM_CHECK(std::fflush(stdout) == 0 && !std::ferror(stdout), "cannot write to standard output: {}",
                 std::strerror(errno));
    if (align_file.is_open()) {
      align_file.flush();
      ENGRAM_CHECK(align_file.good(), "{}: cannot write alignments", a.alignments);
    }
    lines.clear();
  };
  while (in.next(&line)) {
    ++line_no;
    const size_t bad = data::find_invalid_utf8(line);
    ENGRAM_CHECK(bad == std::string::npos, "<stdin>:{}: invalid UTF-8 (byte 0x{:02X} at column {})", line_no,
                 static_cast<unsigned char>(line[bad]), bad + 1);
    lines.push_back(line);
    if (static_cast<int>(lines.size()) >= o.batch_size || !in.ready()) flush();
  }
  flush();
}

}  // namespace

void register_translate(CLI::App& app) {
  auto a = std::make_shared<TranslateArgs>();
  auto* cmd = app.add_subcommand("translate", "translate stdin to stdout, one line each (greedy or beam search)");
  add_model_option(cmd, a->model);
  add_config_flags(cmd, a->search, {"beam", "n_best", "alpha", "max_length_ratio", "max_length_offset", "max_length"});
  cmd->add_option("--batch", a->options.batch_size, "sentences decoded together")->check(CLI::Range(1, 4096));
  cmd->add_flag("--scores", a->scores, "print 'i ||| text ||| score' lines");
  cmd->add_option("--alignments", a->alignments, "write attention alignments as JSON lines to FILE ('-' = stderr)");
  add_threads_option(cmd, a->threads);
  cmd->add_option("--precision", a->precision,
                  "decoding weights: fp32, or bf16 (one sentence or its beams at a time, i.e. --batch 1: "
                  "weights and inputs rounded to bf16, sums in fp32; about 2x faster, see docs/models.md)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->callback([a] { run_translate(*a); });
}

}  // namespace engram::cli
