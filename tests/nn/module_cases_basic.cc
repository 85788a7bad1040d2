// Module gradient-check rows: basic modules.
#include "nn/module_cases.h"

namespace engram::nn {

std::vector<ModuleCase> basic_module_cases() { return {}; }

}  // namespace engram::nn
