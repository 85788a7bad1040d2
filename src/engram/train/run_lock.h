// Ownership of a run directory: `engram train` holds RUN/.lock (an flock) for as long as it runs,
// so a second training on the same directory fails at once instead of interleaving checkpoints
// and metrics. The kernel drops the lock when its process dies, so a killed run never blocks the
// next one. The file holds the owner's pid for the error message.
#pragma once

#include <filesystem>

namespace engram::train {

class RunDirLock {
 public:
  // Creates `dir` if needed and locks DIR/.lock; an error names the process holding it.
  explicit RunDirLock(const std::filesystem::path& dir);
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace engram::train
