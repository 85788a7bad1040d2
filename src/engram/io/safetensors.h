// safetensors: the tensor file format of Hugging Face's `safetensors` library, float32 only, so
// engram checkpoints load in Python with `safetensors.numpy.load_file` and vice versa.
//
// FILE FORMAT (all integers little-endian)
//
//   offset 0   u64 N              length in bytes of the JSON header that follows
//   offset 8   N bytes of JSON    UTF-8, one object:
//                {"__metadata__": {"key": "value", ...},                        (optional)
//                 "<name>": {"dtype": "F32", "shape": [d0, d1, ...],
//                            "data_offsets": [begin, end]}, ...}
//              padded at the end with spaces (0x20) so that 8 + N is a multiple of 8
//   offset 8+N the data buffer: each tensor's elements, row-major, little-endian IEEE floats;
//              [begin, end) is relative to the start of the buffer (not of the file).
//
// Shapes may be [] (a scalar, one element). end - begin == 4 * numel(shape); the tensors tile
// the buffer exactly: sorted by begin they start at 0, do not overlap, leave no gap, and the last
// one ends at the end of the file. Metadata values are strings.
//
// As the reference writer does, write_safetensors emits compact JSON with "__metadata__" first
// (only when non-empty) and then the tensors sorted by name, fields in the order dtype, shape,
// data_offsets, with the data laid out in the same order. Example, one tensor "a" = [1, 2]
// (72 bytes; tests/io checks them byte for byte):
//
//   38 00 00 00 00 00 00 00                                N = 56 = 54 bytes of JSON + 2 spaces
//   {"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}__       (_ = space)
//   00 00 80 3f 00 00 00 40
//
// The reader accepts only F32 and rank <= 4 (engram's limit) and rejects anything malformed with
// a one-line engram::Error naming the file (and the tensor).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engram/core/shape.h"

namespace engram::io {

// A named tensor to write; `data` holds shape.numel() floats owned by the caller.
struct TensorView {
  std::string name;
  core::Shape shape;
  const float* data = nullptr;
};

// Writes `tensors` (sorted by name; names unique and non-empty) and `metadata` to `path`,
// replacing it, and fsyncs the file before returning.
void write_safetensors(const std::filesystem::path& path, std::vector<TensorView> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Opens a file and validates its whole header (sizes, JSON, dtypes, shapes, offsets) up front;
// tensor data is then read on demand.
class SafetensorsReader {
 public:
  struct Entry {
    std::string name;
    core::Shape shape;
    uint64_t begin = 0, end = 0;  // byte range in the data buffer
  };

  explicit SafetensorsReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  // All tensors, sorted by name.
  const std::vector<Entry>& tensors() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr when there is no tensor of that name.
  const Entry* find(const std::string& name) const;

  // Reads the tensor's shape.numel() floats into dst.
  void read(const Entry& entry, float* dst);
  std::vector<float> read(const Entry& entry);

 private:
  std::filesystem::path path_;
  std::ifstream file_;
  uint64_t data_start_ = 0;  // 8 + N
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace engram::io
