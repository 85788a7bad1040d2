// Gradient-check rows: softmax family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> softmax_cases() { return {}; }

}  // namespace engram::core
