// write_file_atomic: temp file + fsync + rename; write_output_file: the node at a user's output
// path decides between that and writing through it; copy_file_atomic through write_file_atomic.
#include "engram/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "engram/core/error.h"
#include "engram/core/read_file.h"

namespace engram::io {

namespace fs = std::filesystem;

namespace {

// Writes all of `text` to `fd`; false (errno set) on a short or failed write.
bool write_all(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Temp file + fsync + rename onto `target`; errors name `shown` (the path the user gave).
// `keep_mode`: the permission bits of the file it replaces (none: 0644 less the umask).
void replace_atomically(const fs::path& target, std::string_view text, const std::string& shown,
                        std::optional<mode_t> keep_mode) {
  const fs::path tmp = target.string() + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ENGRAM_CHECK(fd >= 0, "cannot write {}: {}", shown, std::strerror(errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: {} ({})", shown, std::strerror(err), what));
  };
  if (!write_all(fd, text)) fail("write");
  if (keep_mode && ::fchmod(fd, *keep_mode) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: {} (close)", shown, std::strerror(err)));
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(fmt::format("cannot write {}: {} (rename)", shown, ec.message()));
  }
}

// The file a chain of symbolic links starting at `path` ends at (which need not exist), or
// `path` itself when it is not a link. Throws after 40 links (the kernel's own limit).
fs::path follow_links(const fs::path& path, const std::string& shown) {
  fs::path p = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    ENGRAM_CHECK(!ec, "cannot write {}: {} (reading the link {})", shown, ec.message(), p.string());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw Error(fmt::format("cannot write {}: more than 40 symbolic links", shown));
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view text) {
  replace_atomically(path, text, path.string(), std::nullopt);
}

void write_output_file(const fs::path& path, std::string_view text) {
  const std::string shown = path.string();
  ENGRAM_CHECK(!shown.empty(), "cannot write an output file with an empty name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {  // what PATH names after every link (magic /proc links too)
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      ENGRAM_CHECK(fd >= 0, "cannot write {}: {}", shown, std::strerror(errno));
      const bool ok = write_all(fd, text);
      const int err = errno;
      const bool closed = ::close(fd) == 0;
      ENGRAM_CHECK(ok, "cannot write {}: {} (write)", shown, std::strerror(err));
      ENGRAM_CHECK(closed, "cannot write {}: {} (close)", shown, std::strerror(errno));
      return;
    }
    const char* kind = S_ISDIR(st.st_mode) ? "a directory" : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode)                     ? "a socket"
                                                                  : "not a regular file";
    ENGRAM_CHECK(S_ISREG(st.st_mode), "cannot write {}: it is {} (an output must be a regular file, a character "
                 "device or a FIFO)", shown, kind);
    char* real = ::realpath(path.c_str(), nullptr);
    ENGRAM_CHECK(real != nullptr, "cannot write {}: {}", shown, std::strerror(errno));
    const fs::path target(real);
    std::free(real);
    replace_atomically(target, text, shown, st.st_mode & 07777);
    return;
  }
  ENGRAM_CHECK(errno == ENOENT, "cannot write {}: {}", shown, std::strerror(errno));
  // Not there, or a link (chain) to a file not there yet: create the file the links lead to.
  replace_atomically(follow_links(path, shown), text, shown, std::nullopt);
}

void copy_file_atomic(const fs::path& from, const fs::path& to, uint64_t max_bytes, std::string_view what) {
  write_file_atomic(to, core::read_file_limited(from.string(), max_bytes, what));
}

}  // namespace engram::io
