// Gradient-check rows: rnn family.
#include "core/grad_cases.h"

namespace engram::core {

std::vector<GradCase> rnn_cases() { return {}; }

}  // namespace engram::core
