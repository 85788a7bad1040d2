// Text quoted into a one-line error message (the CLI's, an HTTP error body): printable ASCII and
// valid UTF-8 (RFC 3629: shortest form, no surrogates, <= U+10FFFF, no C1 controls) kept as they
// are; control bytes, DEL and every other byte written as \xNN. So a file name, token or JSON key
// quoted from the input can neither break the line nor send escape sequences to a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace engram::core {

// At most `max_bytes` of `text` (a longer one is cut there and ends with "...").
std::string printable(std::string_view text, size_t max_bytes = std::string_view::npos);

}  // namespace engram::core
