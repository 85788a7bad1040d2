// Chinese script: traditional characters written as simplified ones, through OpenCC's "t2s"
// conversion (Debian libopencc: its character and phrase tables, e.g. 歡迎來到 -> 欢迎来到,
// 頭髮 -> 头发). Text that holds no traditional character comes back unchanged, so English and
// simplified Chinese pass through as they are.
#pragma once

#include <string>
#include <string_view>

namespace engram::data {

// `text` (valid UTF-8) with traditional Chinese written as simplified. Thread-safe. Throws
// engram::Error when OpenCC's t2s tables cannot be read (an install without libopencc-data).
std::string to_simplified_chinese(std::string_view text);

}  // namespace engram::data
