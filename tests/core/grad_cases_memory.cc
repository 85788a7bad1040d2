// Gradient-check rows: memory family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> memory_cases() { return {}; }

}  // namespace engram::core
