// Small whole-file writes done safely: every write checked, the data flushed to disk, and the
// file put in place by a rename, so a reader never sees half a file and a full disk is an error,
// not a silently short file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace engram::io {

// Writes `text` to PATH.tmp-<pid>, fsyncs it and renames it to `path` (replacing it). Any failure
// (open, short write, flush, close, rename) removes the temporary file and throws engram::Error
// naming the path and the system's reason.
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

// Writes `text` to a file the user named as an output (`-o PATH`, `--errors PATH`), going through
// what is at PATH the way a shell's `> PATH` would, but never leaving half a file:
//   - nothing there, or a regular file: write_file_atomic (the new file keeps the old one's mode);
//   - a symbolic link (a chain of them, 40 at most): followed; its final target, a regular file or
//     not there yet, is written as above and the links stay links;
//   - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe): opened and written
//     through; the node itself is never replaced;
//   - anything else (a directory, a socket, a block device): refused.
// Every write is checked: a short write, ENOSPC (/dev/full), a failed fsync, close or rename
// throws engram::Error naming `path` and the system's reason.
void write_output_file(const std::filesystem::path& path, std::string_view text);

// Copies `from` to `to` the same way (read whole, so meant for small files such as a
// vocabulary): a missing or unreadable `from`, or one of more than `max_bytes` (core::
// read_file_limited; `what` names the kind of file), throws naming it; `to` is never half written.
void copy_file_atomic(const std::filesystem::path& from, const std::filesystem::path& to, uint64_t max_bytes,
                      std::string_view what);

}  // namespace engram::io
