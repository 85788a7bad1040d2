// Module gradient-check rows: rnn modules.
#include "nn/module_cases.h"

namespace engram::nn {

std::vector<ModuleCase> rnn_module_cases() { return {}; }

}  // namespace engram::nn
