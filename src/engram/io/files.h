// Small whole-file writes done safely: every write checked, the data flushed to disk, and the
// file put in place by a rename, so a reader never sees half a file and a full disk is an error,
// not a silently short file.
#pragma once

#include <filesystem>
#include <string_view>

namespace engram::io {

// Writes `text` to PATH.tmp-<pid>, fsyncs it and renames it to `path` (replacing it). Any failure
// (open, short write, flush, close, rename) removes the temporary file and throws engram::Error
// naming the path and the system's reason.
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

// Copies `from` to `to` the same way (read whole, so meant for small files such as a
// vocabulary): a missing or unreadable `from` throws naming it, and `to` is never half written.
void copy_file_atomic(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace engram::io
