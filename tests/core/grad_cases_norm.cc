// Gradient-check rows: norm family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> norm_cases() { return {}; }

}  // namespace engram::core
