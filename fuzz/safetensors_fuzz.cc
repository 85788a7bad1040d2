// Fuzz harness: io::SafetensorsReader (safetensors.h) on arbitrary file bytes. Accepted files must
// satisfy the format's invariants (tensors sorted by name, 4 * numel bytes each, tiling the data
// buffer), every tensor must read, and write_safetensors must reproduce the same tensors and
// metadata (the reader and the writer agree on the format).
#include <cstring>
#include <map>

#include "engram/io/safetensors.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "safetensors";

void run(std::string_view bytes) {
  using engram::io::SafetensorsReader;
  const auto path = engram::fuzz::temp_file("in.safetensors", bytes);
  SafetensorsReader reader(path);
  const uint64_t data_bytes = bytes.size() - 8;  // the reader accepted it, so size >= 8
  std::vector<std::vector<float>> values;
  uint64_t total = 0;
  for (size_t i = 0; i < reader.tensors().size(); ++i) {
    const auto& e = reader.tensors()[i];
    FUZZ_CHECK(kHarness, i == 0 || reader.tensors()[i - 1].name < e.name, "tensors not sorted by unique name at '{}'",
               e.name);
    FUZZ_CHECK(kHarness, e.shape.rank() <= 4, "tensor '{}' of rank {}", e.name, e.shape.rank());
    FUZZ_CHECK(kHarness, e.begin <= e.end && e.end - e.begin == 4 * static_cast<uint64_t>(e.shape.numel()),
               "tensor '{}': [{}, {}) for shape {}", e.name, e.begin, e.end, e.shape.str());
    FUZZ_CHECK(kHarness, reader.find(e.name) == &e, "find('{}') does not return its entry", e.name);
    values.push_back(reader.read(e));
    total += e.end - e.begin;
  }
  FUZZ_CHECK(kHarness, total <= data_bytes, "tensors hold {} bytes, file has {}", total, bytes.size());

  // Round trip through the writer. Names the reader accepts but the writer refuses (engram::Error)
  // end the run like any rejected input.
  std::vector<engram::io::TensorView> views;
  for (size_t i = 0; i < values.size(); ++i)
    views.push_back({reader.tensors()[i].name, reader.tensors()[i].shape, values[i].data()});
  const auto copy = engram::fuzz::temp_dir() / "copy.safetensors";
  engram::io::write_safetensors(copy, views, reader.metadata());
  SafetensorsReader again(copy);
  FUZZ_CHECK(kHarness, again.metadata() == reader.metadata(), "metadata changed in a write/read round trip");
  FUZZ_CHECK(kHarness, again.tensors().size() == reader.tensors().size(), "tensor count changed in a round trip");
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& e = again.tensors()[i];
    FUZZ_CHECK(kHarness, e.name == reader.tensors()[i].name && e.shape == reader.tensors()[i].shape,
               "tensor '{}' changed name or shape in a round trip", e.name);
    const std::vector<float> v = again.read(e);
    FUZZ_CHECK(kHarness, v.size() == values[i].size() && (v.empty() || std::memcmp(v.data(), values[i].data(), 4 * v.size()) == 0),
               "tensor '{}' changed bytes in a round trip", e.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
