// write_file_atomic: temp file + fsync + rename; copy_file_atomic through it.
#include "engram/io/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "engram/core/error.h"

namespace engram::io {

namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, std::string_view text) {
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ENGRAM_CHECK(fd >= 0, "cannot write {}: {}", path.string(), std::strerror(errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: {} ({})", path.string(), std::strerror(err), what));
  };
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: {} (close)", path.string(), std::strerror(err)));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: rename failed", path.string()));
  }
}

void copy_file_atomic(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  ENGRAM_CHECK(in.is_open(), "cannot read {}: {}", from.string(), std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ENGRAM_CHECK(!in.bad(), "cannot read {}", from.string());
  write_file_atomic(to, bytes);
}

}  // namespace engram::io
