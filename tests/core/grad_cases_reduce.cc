// Gradient-check rows: reduce family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> reduce_cases() { return {}; }

}  // namespace engram::core
