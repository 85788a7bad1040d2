// Where corpora live: $ENGRAM_DATA_DIR (default ../shared/data, relative to the working
// directory). Every family resolves its config's data paths through these.
#pragma once

#include <filesystem>
#include <string>

namespace engram::data {

// $ENGRAM_DATA_DIR, or ../shared/data when it is unset or empty.
std::filesystem::path data_root();

// A relative data path as given if it exists, else under data_root() if it exists there, else
// as given (so the reader's error names the path the user wrote). Empty and absolute paths are
// returned as they are.
std::string resolve_data_path(const std::string& path);

}  // namespace engram::data
