// to_simplified_chinese over OpenCC's C API: one converter for the process, opened on first use.
#include "engram/data/chinese_script.h"

#include <opencc.h>

#include <algorithm>
#include <mutex>

#include "engram/core/error.h"

namespace engram::data {

namespace {

class T2s {
 public:
  T2s() : od_(opencc_open("t2s.json")) {
    ENGRAM_CHECK(od_ != reinterpret_cast<opencc_t>(-1),
                 "OpenCC: cannot open its traditional-to-simplified conversion t2s.json ({}); install libopencc-data",
                 opencc_error());
  }
  T2s(const T2s&) = delete;
  T2s& operator=(const T2s&) = delete;
  ~T2s() { opencc_close(od_); }

  std::string convert(std::string_view text) {
    // OpenCC's converter is not documented as safe to share between threads: one call at a time.
    std::lock_guard<std::mutex> lock(mu_);
    char* out = opencc_convert_utf8(od_, text.data(), text.size());
    ENGRAM_CHECK(out != nullptr, "OpenCC: conversion to simplified Chinese failed ({})", opencc_error());
    std::string s(out);
    opencc_convert_utf8_free(out);
    return s;
  }

 private:
  opencc_t od_;
  std::mutex mu_;
};

}  // namespace

std::string to_simplified_chinese(std::string_view text) {
  // ASCII holds no Chinese character: such text (an English side) never reaches OpenCC
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return std::string(text);
  static T2s t2s;
  // OpenCC returns a C string: text with NUL bytes is converted a piece between NULs at a time.
  std::string out;
  for (size_t start = 0;;) {
    const size_t nul = text.find('\0', start);
    const std::string_view piece = text.substr(start, nul == std::string_view::npos ? nul : nul - start);
    if (!piece.empty()) out += t2s.convert(piece);
    if (nul == std::string_view::npos) return out;
    out += '\0';
    start = nul + 1;
  }
}

}  // namespace engram::data
