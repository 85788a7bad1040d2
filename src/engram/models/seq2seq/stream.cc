// Streaming translation: a non-blocking-aware line reader and the batch-what-is-ready loop.
#include "engram/models/seq2seq/stream.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::models {

bool LineReader::next(std::string* line) {
  while (true) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      line->assign(buf_, pos_, nl - pos_);
      pos_ = nl + 1;
      ++lines_;
      ENGRAM_CHECK(line->size() <= kMaxLineBytes, "<stdin>:{}: a line longer than {} bytes (the limit of "
                   "one input sentence)", lines_, kMaxLineBytes);
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

bool LineReader::ready() {
  if (buf_.find('\n', pos_) != std::string::npos || eof_) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

void LineReader::fill() {
  buf_.erase(0, pos_);
  pos_ = 0;
  ENGRAM_CHECK(buf_.size() <= kMaxLineBytes, "<stdin>:{}: a line longer than {} bytes (the limit of "
               "one input sentence)", lines_ + 1, kMaxLineBytes);
  char tmp[1 << 16];
  const ssize_t n = ::read(fd_, tmp, sizeof tmp);
  ENGRAM_CHECK(n >= 0, "<stdin>: read error");
  if (n == 0) eof_ = true;
  buf_.append(tmp, static_cast<size_t>(n));
}

void translate_stream(const Translator& tr, const TranslateOptions& o, const StreamOptions& s, int fd) {
  std::ofstream align_file;
  std::FILE* align_out = nullptr;
  if (s.alignments == "-") {
    align_out = stderr;
  } else if (!s.alignments.empty()) {
    align_file.open(s.alignments, std::ios::trunc);
    ENGRAM_CHECK(align_file.good(), "{}: cannot write alignments", s.alignments);
  }
  LineReader in(fd);
  std::vector<std::string> lines, prefixes;
  std::string line;
  int64_t line_no = 0, index = 0;
  TranslateOptions options = o;
  std::vector<int32_t> ids;  // token streaming: the sentence's tokens so far
  std::string printed;       // ... and their text printed so far: each write extends it
  if (s.tokens) {
    ENGRAM_CHECK(o.search.beam == 1 && o.search.n_best == 1 && !s.scores,
                 "--stream prints greedy translations as they are decoded: not with a beam, --n-best or --scores");
    options.batch_size = 1;
    options.search.on_token = [&](int, int32_t token, std::span<const float>) {
      if (token == tr.seq2seq().eos_id()) return;
      ids.push_back(token);
      const std::string text = tr.tgt.decode(std::vector<int32_t>(ids.begin(), ids.end() - 1));
      if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
        std::fwrite(text.data() + printed.size(), 1, text.size() - printed.size(), stdout);
        std::fflush(stdout);
        printed = text;
      }
    };
  }
  auto flush = [&] {
    if (lines.empty()) return;
    ids.clear();
    printed.clear();
    std::vector<Translation> out = tr.translate(
        lines, options, s.prefix_column ? std::span<const std::string>(prefixes) : std::span<const std::string>());
    for (const Translation& t : out) {
      if (o.search.n_best > 1 || s.scores) {
        for (size_t k = 0; k < t.texts.size(); ++k)
          std::printf("%lld ||| %s ||| %.4f\n", static_cast<long long>(index), t.texts[k].c_str(), t.nbest[k].score);
        if (t.texts.empty()) std::printf("%lld |||  ||| 0\n", static_cast<long long>(index));
      } else if (s.tokens) {  // the rest of the text after what was streamed (a tokenizer whose
                              // decoding is not prefix-stable: the whole text on a line of its own)
        const std::string& text = t.text();
        std::printf("%s\n", text.compare(0, printed.size(), printed) == 0 ? text.c_str() + printed.size()
                                                                         : ("\n" + text).c_str());
      } else {
        std::printf("%s\n", t.text().c_str());
      }
      if (align_out) std::fprintf(align_out, "%s\n", alignment_json(t).c_str());
      if (align_file.is_open()) align_file << alignment_json(t) << '\n';
      ++index;
    }
    ENGRAM_CHECK(std::fflush(stdout) == 0 && !std::ferror(stdout), "cannot write to standard output: {}",
                 std::strerror(errno));
    if (align_file.is_open()) {
      align_file.flush();
      ENGRAM_CHECK(align_file.good(), "{}: cannot write alignments", s.alignments);
    }
    lines.clear();
    prefixes.clear();
  };
  while (in.next(&line)) {
    ++line_no;
    const size_t bad = data::find_invalid_utf8(line);
    ENGRAM_CHECK(bad == std::string::npos, "<stdin>:{}: invalid UTF-8 (byte 0x{:02X} at column {})", line_no,
                 static_cast<unsigned char>(line[bad]), bad + 1);
    if (s.prefix_column) {
      const size_t tab = line.find('\t');
      prefixes.push_back(tab == std::string::npos ? std::string() : line.substr(tab + 1));
      if (tab != std::string::npos) line.resize(tab);
    }
    lines.push_back(line);
    if (static_cast<int>(lines.size()) >= options.batch_size || !in.ready()) flush();
  }
  flush();
}

}  // namespace engram::models
