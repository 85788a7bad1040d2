// Sizes that a config or an input sets (generated data sets, a dataset held whole) checked
// against core::memory_limit() (arena.h: 3/4 of the machine's physical memory) before or while
// the memory is taken, so that a count too large for the machine is an engram::Error naming it
// where the kernel's OOM killer would otherwise end the process.
#pragma once

#include <cstddef>
#include <string_view>

namespace engram::core {

// Errors where `bytes` pass memory_limit(): "<what> needs more than X GiB, over the limit of 3/4
// of this machine's memory (Y GiB)". `what` names the setting, e.g. "ntm: data.valid_sequences 5000000000".
void check_memory(double bytes, std::string_view what);

}  // namespace engram::core
