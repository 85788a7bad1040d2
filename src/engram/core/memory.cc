#include "engram/core/memory.h"

#include "engram/core/arena.h"
#include "engram/core/error.h"

namespace engram::core {

void check_memory(double bytes, std::string_view what) {
  const double limit = static_cast<double>(memory_limit());
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  ENGRAM_CHECK(bytes <= limit,
               "{} needs more than {:.2f} GiB, over the limit of 3/4 of this machine's memory ({:.2f} GiB)", what,
               bytes / kGiB, limit / kGiB);
}

}  // namespace engram::core
