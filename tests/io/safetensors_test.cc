// safetensors: round trip (scalar to 4-d), the exact bytes of a tiny file, and every kind of
// malformed file rejected with a one-line error naming the file and the tensor.
#include "engram/io/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "io/expect_error.h"
#include "io/temp_dir.h"

namespace engram::io {
namespace {

using testing::error_of;
using testing::expect_message;
using testing::TempDir;

TEST(Safetensors, RoundTripScalarTo4dAndMetadata) {
  TempDir tmp;
  const float scalar = 3.25f;
  std::vector<float> t4(2 * 3 * 1 * 4);
  std::iota(t4.begin(), t4.end(), -5.0f);
  const float v[] = {1.5f, -2.0f};
  const auto path = tmp / "t.safetensors";
  write_safetensors(path,
                    {{"z/four", {2, 3, 1, 4}, t4.data()},
                     {"a/scalar", {}, &scalar},
                     {"m/vec", {2}, v},
                     {"m/empty", {0, 3}, nullptr}},
                    {{"step", "12"}, {"note", "héllo \"quoted\""}});
  SafetensorsReader r(path);
  ASSERT_EQ(r.tensors().size(), 4u);
  EXPECT_EQ(r.tensors()[0].name, "a/scalar");  // sorted by name
  EXPECT_EQ(r.tensors()[3].name, "z/four");
  EXPECT_EQ(r.metadata().at("step"), "12");
  EXPECT_EQ(r.metadata().at("note"), "héllo \"quoted\"");

  const auto* s = r.find("a/scalar");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->shape.rank(), 0);
  EXPECT_EQ(r.read(*s), std::vector<float>{3.25f});
  const auto* four = r.find("z/four");
  ASSERT_NE(four, nullptr);
  EXPECT_EQ(four->shape, (core::Shape{2, 3, 1, 4}));
  EXPECT_EQ(r.read(*four), t4);
  EXPECT_EQ(r.read(*r.find("m/vec")), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(r.find("m/empty")->shape, (core::Shape{0, 3}));
  EXPECT_TRUE(r.read(*r.find("m/empty")).empty());
  EXPECT_EQ(r.find("nope"), nullptr);
  // Data follows the sorted order: a/scalar, m/empty, m/vec, z/four.
  EXPECT_EQ(r.find("a/scalar")->begin, 0u);
  EXPECT_EQ(r.find("m/vec")->begin, 4u);
  EXPECT_EQ(r.find("z/four")->begin, 12u);
}

TEST(Safetensors, ExactBytesOfATinyFile) {
  TempDir tmp;
  const float a[] = {1.0f, 2.0f};
  write_safetensors(tmp / "a.safetensors", {{"a", {2}, a}});
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ASSERT_EQ(json.size(), 54u);
  std::string want("\x38\0\0\0\0\0\0\0", 8);  // header length 56 = 54 + 2 spaces of padding
  want += json + "  ";
  want += std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f little-endian
  EXPECT_EQ(testing::read_bytes(tmp / "a.safetensors"), want);

  // With metadata: "__metadata__" first, then tensors; 8 + N is always a multiple of 8.
  const float b = 0.5f;
  write_safetensors(tmp / "b.safetensors", {{"b", {}, &b}}, {{"k", "v"}});
  const std::string bytes = testing::read_bytes(tmp / "b.safetensors");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            R"({"__metadata__":{"k":"v"},"b":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})");
  EXPECT_EQ(bytes.size(), 8 + n + 4);
}

TEST(Safetensors, WriterRejectsDuplicateNames) {
  TempDir tmp;
  const float x = 1;
  expect_message(error_of([&] { write_safetensors(tmp / "d.safetensors", {{"x", {}, &x}, {"x", {}, &x}}); }),
                 {"d.safetensors", "duplicate tensor 'x'"});
}

// A file from a raw header and data bytes.
std::string file_bytes(const std::string& header, const std::string& data, int64_t length_field = -1) {
  const uint64_t n = length_field < 0 ? header.size() : static_cast<uint64_t>(length_field);
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

struct BadCase {
  const char* name;
  std::string bytes;
  std::vector<std::string> message;  // pieces besides the file name
};

TEST(Safetensors, RejectsEveryMalformedFile) {
  const std::string eight(8, '\x11');
  const std::vector<BadCase> cases = {
      {"too short", std::string("\x10\0\0", 3), {"file too short (3 bytes)"}},
      {"header length beyond file", file_bytes("{}", "", 4096), {"header length 4096 exceeds the file size"}},
      {"absurd header length", file_bytes("{}", "", int64_t{1} << 40), {"exceeds the 100000000-byte limit"}},
      {"bad JSON", file_bytes(R"({"a":{"dtype":"F32",)", ""), {"header is not valid JSON"}},
      {"not an object", file_bytes("[1,2]", ""), {"not a JSON object"}},
      {"unsupported dtype", file_bytes(R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", "abcd"),
       {"tensor 'h'", "unsupported dtype \"F16\""}},
      {"missing shape", file_bytes(R"({"h":{"dtype":"F32","data_offsets":[0,4]}})", "abcd"),
       {"tensor 'h'", "missing shape"}},
      {"negative dim", file_bytes(R"({"h":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"),
       {"tensor 'h'", "bad dimension -1"}},
      {"rank 5", file_bytes(R"({"h":{"dtype":"F32","shape":[1,1,1,1,1],"data_offsets":[0,4]}})", "abcd"),
       {"tensor 'h'", "rank 5 > 4"}},
      {"offsets not matching shape", file_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight),
       {"tensor 'w'", "hold 8 bytes but shape [3] needs 12"}},
      {"offsets reversed", file_bytes(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", eight),
       {"tensor 'w'", "end before they begin"}},
      {"offsets out of range (truncated data)",
       file_bytes(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight),
       {"tensor 'w'", "run past the 8 data bytes"}},
      {"overlapping",
       file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                  eight),
       {"tensor 'b'", "overlap"}},
      {"gap", file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight),
       {"tensor 'a'", "gap"}},
      {"trailing bytes", file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight),
       {"4 bytes after the last tensor"}},
      {"metadata not strings", file_bytes(R"({"__metadata__":{"step":3}})", ""), {"'step' is not a string"}},
  };
  TempDir tmp;
  for (const auto& c : cases) {
    const auto path = tmp / "bad.safetensors";
    testing::write_bytes(path, c.bytes);
    auto pieces = c.message;
    pieces.push_back(path.string());
    SCOPED_TRACE(c.name);
    expect_message(error_of([&] { SafetensorsReader r(path); }), pieces);
  }
}

TEST(Safetensors, TruncatedFileFromTheWriter) {
  TempDir tmp;
  std::vector<float> w(100, 1.0f);
  const auto path = tmp / "w.safetensors";
  write_safetensors(path, {{"enc/w", {10, 10}, w.data()}});
  const std::string bytes = testing::read_bytes(path);
  testing::write_bytes(path, bytes.substr(0, bytes.size() - 17));
  expect_message(error_of([&] { SafetensorsReader r(path); }), {path.string(), "tensor 'enc/w'", "truncated"});
  testing::write_bytes(path, bytes.substr(0, 20));  // cut inside the header
  expect_message(error_of([&] { SafetensorsReader r(path); }), {path.string(), "exceeds the file size"});
}

TEST(Safetensors, MissingFile) {
  TempDir tmp;
  expect_message(error_of([&] { SafetensorsReader r(tmp / "none.safetensors"); }), {"none.safetensors", "cannot read"});
}

}  // namespace
}  // namespace engram::io
