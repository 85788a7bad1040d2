// Gradient-check rows: shape family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> shape_cases() { return {}; }

}  // namespace engram::core
