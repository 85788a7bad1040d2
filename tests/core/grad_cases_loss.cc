// Gradient-check rows: loss family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> loss_cases() { return {}; }

}  // namespace engram::core
