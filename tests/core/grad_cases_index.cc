// Gradient-check rows: index family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> index_cases() { return {}; }

}  // namespace engram::core
