// RunDirLock: a second owner of a run directory is refused (naming the first one's pid), in
// another process too, and a lock whose process died is free again.
#include "engram/train/run_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "engram/core/error.h"

namespace engram::train {
namespace {

namespace fs = std::filesystem;

TEST(RunDirLock, OneOwnerAtATimeAndADeadOwnerHoldsNothing) {
  const fs::path dir = fs::temp_directory_path() / ("engram-lock-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    RunDirLock lock(dir);
    // Another process cannot take it while we hold it.
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        RunDirLock second(dir);
        ::_exit(1);
      } catch (const Error& e) {
        ::_exit(std::string(e.what()).find("in use by another engram process (pid " + std::to_string(::getppid())) !=
                        std::string::npos
                    ? 0
                    : 2);
      }
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  // A process that dies holding the lock (no destructor runs) does not keep it.
  const pid_t child = ::fork();
  if (child == 0) {
    new RunDirLock(dir);  // never released: the process ends with it held
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NO_THROW(RunDirLock again(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace engram::train
