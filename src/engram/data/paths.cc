// Data paths under $ENGRAM_DATA_DIR (see paths.h).
#include "engram/data/paths.h"

#include <cstdlib>

namespace engram::data {

namespace fs = std::filesystem;

fs::path data_root() {
  const char* env = std::getenv("ENGRAM_DATA_DIR");
  return env && *env ? fs::path(env) : fs::path("../shared/data");
}

std::string resolve_data_path(const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path)) return path;
  const fs::path p = data_root() / path;
  return fs::exists(p) ? p.string() : path;
}

}  // namespace engram::data
