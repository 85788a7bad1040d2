// Fuzz harness: checkpoint directories (io/checkpoint.h). The input is split into the files of a
// model directory by header lines "=== NAME" (at the start of the input or of a line; the '\n'
// before a header belongs to it):
//
//   === config.yaml
//   format_version: 1 ...
//   === model.safetensors
//   <bytes>
//   === optimizer.safetensors      (optional)
//   === trainer.json               (optional)
//
// Other names are ignored. The harness calls read_checkpoint_info, then load_checkpoint into a
// fixed ParamStore {"decoder/w" [2, 3], "encoder/b" [3], "scale" []} and, when the directory has
// optimizer.safetensors, again with an Adam optimizer over it. A load that fails must leave the
// parameters untouched (all checks come before any write).
#include <cmath>
#include <cstring>

#include "engram/io/checkpoint.h"
#include "engram/optim/optimizers.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "checkpoint";
namespace fs = std::filesystem;

bool known_file(std::string_view name) {
  return name == "config.yaml" || name == "model.safetensors" || name == "optimizer.safetensors" ||
         name == "trainer.json";
}

// Writes the sections of `bytes` into dir.
void write_sections(std::string_view bytes, const fs::path& dir) {
  size_t pos = bytes.rfind("=== ", 0) == 0 ? 0 : bytes.find("\n=== ");
  while (pos != std::string_view::npos) {
    const size_t name_begin = pos + (bytes[pos] == '\n' ? 5 : 4);
    const size_t name_end = bytes.find('\n', name_begin);
    if (name_end == std::string_view::npos) return;
    const std::string_view name = bytes.substr(name_begin, name_end - name_begin);
    const size_t next = bytes.find("\n=== ", name_end);
    const std::string_view body =
        bytes.substr(name_end + 1, (next == std::string_view::npos ? bytes.size() : next) - name_end - 1);
    if (known_file(name)) engram::fuzz::write_file(dir / std::string(name), body);
    pos = next;
  }
}

void fill(engram::nn::ParamStore& store, float v) {
  for (int64_t i = 0; i < store.numel(); ++i) store.values()[i] = v;
}

bool all_equal(const engram::nn::ParamStore& store, float v) {
  for (int64_t i = 0; i < store.numel(); ++i)
    if (std::memcmp(&store.values()[i], &v, sizeof v) != 0) return false;
  return true;
}

void run(std::string_view bytes) {
  const fs::path dir = engram::fuzz::temp_dir() / "ckpt";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directory(dir);
  write_sections(bytes, dir);

  const engram::io::CheckpointInfo info = engram::io::read_checkpoint_info(dir);
  FUZZ_CHECK(kHarness, info.format_version == engram::io::kCheckpointFormatVersion, "accepted format version {}",
             info.format_version);
  FUZZ_CHECK(kHarness, info.config.IsMap() || info.config.IsNull(), "accepted a config that is not a map");

  engram::nn::ParamStore store;
  store.add("decoder/w", {2, 3});
  store.add("encoder/b", {3});
  store.add("scale", {});
  constexpr float kSentinel = -12345.0f;
  fill(store, kSentinel);
  try {
    engram::io::load_checkpoint(dir, store);
  } catch (const engram::Error&) {
    FUZZ_CHECK_ID(kHarness, "checkpoint-partial-load", all_equal(store, kSentinel),
                  "a failed load_checkpoint overwrote parameters");
    throw;
  }
  if (!info.has_optimizer) return;

  fill(store, kSentinel);
  engram::optim::Adam adam(store);
  try {
    engram::io::load_checkpoint(dir, store, &adam);
  } catch (const engram::Error&) {
    FUZZ_CHECK_ID(kHarness, "checkpoint-partial-load", all_equal(store, kSentinel),
                  "a failed load_checkpoint (with optimizer) overwrote parameters");
    throw;
  }
  const auto scalars = adam.state_scalars();
  FUZZ_CHECK(kHarness, scalars.count("step") && scalars.at("step") >= 0, "loaded a negative optimizer step");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
