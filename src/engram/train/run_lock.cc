// RunDirLock: open + flock(LOCK_EX | LOCK_NB) + the owner's pid.
#include "engram/train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "engram/core/error.h"
#include "engram/train/distributed.h"

namespace engram::train {

RunDirLock::RunDirLock(const std::filesystem::path& dir) {
  if (!world().root()) return;  // in a data-parallel job, rank 0 holds the lock for all ranks
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  ENGRAM_CHECK(!ec, "cannot create run directory {}: {}", dir.string(), ec.message());
  const std::filesystem::path file = dir / ".lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ENGRAM_CHECK(fd_ >= 0, "cannot open {}: {}", file.string(), std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    ::close(fd_);
    fd_ = -1;
    std::string owner = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    owner.erase(owner.find_last_not_of(" \t\r\n") + 1);
    ENGRAM_CHECK(err != EWOULDBLOCK, "run directory {} is in use by another engram process (pid {}); wait for it "
                 "or pick another train.run_dir", dir.string(), owner.empty() ? "?" : owner);
    throw Error(fmt::format("cannot lock {}: {}", file.string(), std::strerror(err)));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(fmt::format("cannot write {}: {}", file.string(), std::strerror(err)));
  }
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace engram::train
