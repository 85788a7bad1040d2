// Whole-file reads with a size limit enforced while reading (header-only, so that data/ and io/,
// which do not link core/, share it). The size is never taken from stat(): /dev/zero reports 0
// bytes and a file may grow while it is read, so reading itself stops one byte past the limit.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "engram/core/error.h"

namespace engram::core {

// n as "64 MiB" / "4 GiB" when it is a whole number of them, else "n bytes".
inline std::string byte_size_text(uint64_t n) {
  if (n >= (uint64_t{1} << 30) && n % (uint64_t{1} << 30) == 0) return fmt::format("{} GiB", n >> 30);
  if (n >= (uint64_t{1} << 20) && n % (uint64_t{1} << 20) == 0) return fmt::format("{} MiB", n >> 20);
  if (n >= (uint64_t{1} << 10) && n % (uint64_t{1} << 10) == 0) return fmt::format("{} KiB", n >> 10);
  return fmt::format("{} bytes", n);
}

// The error of a file over its limit: "PATH: more than LIMIT (the limit of WHAT, docs/limits.md)".
inline Error file_too_large(std::string_view path, uint64_t max_bytes, std::string_view what) {
  return Error(fmt::format("{}: more than {} (the limit of {}, docs/limits.md)", path, byte_size_text(max_bytes), what));
}

// All bytes left in open file `fd` (not closed here), at most `max_bytes` of them, read in
// blocks; errors name `name` (a path, "<stdin>") and `what`, as read_file_limited's.
inline std::string read_fd_limited(int fd, std::string_view name, uint64_t max_bytes, std::string_view what) {
  std::string out;
  char block[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
    if (n == 0) return out;
    if (static_cast<uint64_t>(n) > max_bytes - out.size()) throw file_too_large(name, max_bytes, what);
    out.append(block, static_cast<size_t>(n));
  }
}

// All bytes of `path`, at most `max_bytes` of them; `what` names the kind of file in the error
// ("a vocabulary file"). Memory stays within max_bytes plus one read block whatever PATH is (a
// regular file, a link to /dev/zero, a pipe). A FIFO with no writer reads as empty rather than
// blocking. Throws engram::Error naming PATH when it cannot be opened or read (a directory
// included) or holds more than max_bytes.
inline std::string read_file_limited(const std::string& path, uint64_t max_bytes, std::string_view what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  ENGRAM_CHECK(fd >= 0, "{}: cannot open for reading: {}", path, std::strerror(errno));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // blocking reads from here on
  try {
    std::string out = read_fd_limited(fd, path, max_bytes, what);
    ::close(fd);
    return out;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace engram::core
