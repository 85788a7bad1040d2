// ProgressLine implementation.
#include "engram/train/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace engram::train {

ProgressLine::ProgressLine(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

void ProgressLine::update(const std::string& text) {
  if (!tty_) {
    std::fprintf(out_, "%s\n", text.c_str());
    std::fflush(out_);
    return;
  }
  std::string line = "\r" + text;
  if (text.size() < last_width_) line += std::string(last_width_ - text.size(), ' ');
  last_width_ = text.size();
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void ProgressLine::print(const std::string& text) {
  if (tty_ && last_width_ > 0) {
    std::fprintf(out_, "\r%s\r", std::string(last_width_, ' ').c_str());
    last_width_ = 0;
  }
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "?";
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, static_cast<int>((s % 3600) / 60));
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, static_cast<int>(s % 60));
  return fmt::format("{}s", s);
}

}  // namespace engram::train
