// Shared pieces of the fuzz harnesses (fuzz/*_fuzz.cc): the input size bound, a per-process
// temporary directory for readers that take a path, and the guard that decides what is a
// finding. A harness body runs inside guard(): engram::Error is the expected answer to bad input
// and is swallowed; any other exception (std::bad_alloc, std::length_error, YAML::Exception,
// nlohmann::json::exception, std::filesystem::filesystem_error, ...) and every failed harness
// invariant (FUZZ_CHECK) prints one line and aborts, so libFuzzer (and the replay driver) report
// it as a crash. Crashes, sanitizer reports, timeouts and leaks surface on their own.
//
// ENGRAM_FUZZ_VERBOSE=1 prints the message of every engram::Error (to see how far a seed gets).
// ENGRAM_FUZZ_ALLOW=id1,id2 turns off the named invariant checks (FUZZ_CHECK_ID), so a campaign can
// go on past a finding that is already recorded in fuzz/findings/ and not yet fixed.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include <cxxabi.h>

#include "engram/core/error.h"

namespace engram::fuzz {

// Inputs above this are ignored (the readers' own limits are far above; the point is speed).
inline constexpr size_t kMaxInputBytes = size_t{1} << 20;

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// One directory per process under $TMPDIR (default /tmp), removed at exit. libFuzzer's -jobs /
// -fork workers are separate processes, so they never share files.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/engram-fuzz-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror("engram fuzz: mkdtemp");
      std::abort();
    }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline const std::filesystem::path& temp_dir() {
  static TempDir dir;
  return dir.path();
}

// Writes bytes to `path` (replacing it).
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "engram fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

// `bytes` written to temp_dir()/name; returns the path.
inline std::filesystem::path temp_file(const std::string& name, std::string_view bytes) {
  const std::filesystem::path p = temp_dir() / name;
  write_file(p, bytes);
  return p;
}

[[noreturn]] inline void finding(const char* harness, const std::string& what) {
  std::fprintf(stderr, "==engram-fuzz== FINDING in %s: %s\n", harness, what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string current_exception_type() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  if (!t) return "unknown";
  int status = 0;
  char* name = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
  std::string s = status == 0 && name ? name : t->name();
  std::free(name);
  return s;
}

// True when `id` is listed in $ENGRAM_FUZZ_ALLOW (comma-separated).
inline bool allowed(std::string_view id) {
  static const std::string list = [] {
    const char* v = std::getenv("ENGRAM_FUZZ_ALLOW");
    return "," + std::string(v ? v : "") + ",";
  }();
  return list.find("," + std::string(id) + ",") != std::string::npos;
}

// Runs body; engram::Error -> fine (bad input rejected), anything else -> finding.
template <class F>
int guard(const char* harness, F&& body) {
  try {
    body();
  } catch (const engram::Error& e) {
    static const bool verbose = [] {
      const char* v = std::getenv("ENGRAM_FUZZ_VERBOSE");
      return v && *v && *v != '0';
    }();
    if (verbose) std::fprintf(stderr, "engram::Error: %s\n", e.what());
  } catch (const std::exception& e) {
    finding(harness, "uncaught " + current_exception_type() + ": " + e.what());
  } catch (...) {
    finding(harness, "uncaught non-std exception " + current_exception_type());
  }
  return 0;
}

}  // namespace engram::fuzz

// A harness invariant (round trip, bounds): failing it is a finding.
#define FUZZ_CHECK(harness, cond, ...)                                         \
  do {                                                                         \
    if (!(cond)) ::engram::fuzz::finding(harness, ::fmt::format(__VA_ARGS__)); \
  } while (0)
// The same, named `id` (reported as "[id] ..."), skipped when ENGRAM_FUZZ_ALLOW lists id.
#define FUZZ_CHECK_ID(harness, id, cond, ...)                                                    \
  do {                                                                                          \
    if (!(cond) && !::engram::fuzz::allowed(id))                                                \
      ::engram::fuzz::finding(harness, ::fmt::format("[{}] {}", id, ::fmt::format(__VA_ARGS__))); \
  } while (0)
