// Progress reporting for long loops: one line rewritten in place on a terminal, plain log lines
// (every call) when the output is a file or a pipe.
#pragma once

#include <cstdio>
#include <string>

namespace engram::train {

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out = stdout);
  // Shows `text`: in place on a terminal, as its own line otherwise.
  void update(const std::string& text);
  // Ends the in-place line (if any) and prints `text` as a permanent line.
  void print(const std::string& text);
  bool interactive() const { return tty_; }

 private:
  std::FILE* out_;
  bool tty_;
  size_t last_width_ = 0;
};

// "1h02m", "3m07s", "12s".
std::string format_duration(double seconds);

}  // namespace engram::train
