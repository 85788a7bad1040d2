// safetensors writer (POSIX file + fsync) and validating reader; format in safetensors.h.
#include "engram/io/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engram/core/error.h"

namespace engram::io {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

constexpr uint64_t kMaxHeader = 100'000'000;  // the reference implementation's limit

std::string json_string(const std::string& s, const std::filesystem::path& path) {
  try {
    return nlohmann::json(s).dump();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: cannot write name or metadata '{}': {}", path.string(), s, e.what()));
  }
}

// The header JSON, padded with spaces to a multiple of 8 bytes. `tensors` is sorted by name.
std::string make_header(const std::vector<TensorView>& tensors, const std::map<std::string, std::string>& metadata,
                        const std::filesystem::path& path) {
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) h += ',';
      first = false;
      h += json_string(k, path) + ":" + json_string(v, path);
    }
    h += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorView& t = tensors[i];
    if (i > 0 || !metadata.empty()) h += ',';
    h += json_string(t.name, path) + ":{\"dtype\":\"F32\",\"shape\":[";
    for (int d = 0; d < t.shape.rank(); ++d) {
      if (d > 0) h += ',';
      h += std::to_string(t.shape[d]);
    }
    const uint64_t bytes = 4 * static_cast<uint64_t>(t.shape.numel());
    h += fmt::format("],\"data_offsets\":[{},{}]}}", offset, offset + bytes);
    offset += bytes;
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');
  return h;
}

// A POSIX file descriptor that closes itself.
class File {
 public:
  File(const std::filesystem::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ENGRAM_CHECK(fd_ >= 0, "{}: cannot open for writing: {}", path.string(), std::strerror(errno));
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      ENGRAM_CHECK(k > 0, "{}: write failed: {}", path_.string(), std::strerror(errno));
      p += k;
      n -= static_cast<size_t>(k);
    }
  }
  void sync_and_close() {
    ENGRAM_CHECK(::fsync(fd_) == 0, "{}: fsync failed: {}", path_.string(), std::strerror(errno));
    const int rc = ::close(fd_);
    fd_ = -1;
    ENGRAM_CHECK(rc == 0, "{}: close failed: {}", path_.string(), std::strerror(errno));
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace

void write_safetensors(const std::filesystem::path& path, std::vector<TensorView> tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorView& a, const TensorView& b) { return a.name < b.name; });
  for (size_t i = 0; i < tensors.size(); ++i) {
    ENGRAM_CHECK(!tensors[i].name.empty(), "{}: tensor with an empty name", path.string());
    ENGRAM_CHECK(tensors[i].name != "__metadata__", "{}: '__metadata__' is reserved as a tensor name", path.string());
    ENGRAM_CHECK(i == 0 || tensors[i].name != tensors[i - 1].name, "{}: duplicate tensor '{}'", path.string(),
                 tensors[i].name);
    ENGRAM_CHECK(tensors[i].data != nullptr || tensors[i].shape.numel() == 0, "{}: tensor '{}' has no data",
                 path.string(), tensors[i].name);
  }
  const std::string header = make_header(tensors, metadata, path);
  const uint64_t n = header.size();
  File file(path);
  file.write(&n, 8);
  file.write(header.data(), header.size());
  for (const TensorView& t : tensors)
    if (t.shape.numel() > 0) file.write(t.data, 4 * static_cast<size_t>(t.shape.numel()));
  file.sync_and_close();
}

// ---- reader

namespace {

// Parses one tensor entry of the header; errors name the file and the tensor.
SafetensorsReader::Entry parse_entry(const std::string& file, const std::string& name, const nlohmann::json& info) {
  ENGRAM_CHECK(info.is_object(), "{}: tensor '{}': header entry is not an object", file, name);
  auto dtype = info.find("dtype");
  ENGRAM_CHECK(dtype != info.end() && dtype->is_string(), "{}: tensor '{}': missing dtype", file, name);
  ENGRAM_CHECK(*dtype == "F32", "{}: tensor '{}': unsupported dtype {} (only F32)", file, name, dtype->dump());
  auto shape = info.find("shape");
  ENGRAM_CHECK(shape != info.end() && shape->is_array(), "{}: tensor '{}': missing shape", file, name);
  ENGRAM_CHECK(shape->size() <= core::kMaxRank, "{}: tensor '{}': rank {} > {} is not supported", file, name,
               shape->size(), core::kMaxRank);
  std::vector<int> dims;
  for (const auto& d : *shape) {
    ENGRAM_CHECK(d.is_number_unsigned() && d.get<uint64_t>() <= INT_MAX, "{}: tensor '{}': bad dimension {} in shape",
                 file, name, d.dump());
    dims.push_back(d.get<int>());
  }
  auto offsets = info.find("data_offsets");
  ENGRAM_CHECK(offsets != info.end() && offsets->is_array() && offsets->size() == 2 && (*offsets)[0].is_number_unsigned() &&
                   (*offsets)[1].is_number_unsigned(),
               "{}: tensor '{}': data_offsets must be [begin, end]", file, name);
  SafetensorsReader::Entry e{name, core::Shape::from(dims.begin(), dims.end()), (*offsets)[0].get<uint64_t>(),
                             (*offsets)[1].get<uint64_t>()};
  ENGRAM_CHECK(e.begin <= e.end, "{}: tensor '{}': data_offsets [{}, {}] end before they begin", file, name, e.begin,
               e.end);
  // 4 * numel may reach 2^126 (four dimensions of up to 2^31): count in 128 bits.
  unsigned __int128 bytes = 4;
  for (int d : dims) bytes *= static_cast<unsigned>(d);
  ENGRAM_CHECK(bytes == e.end - e.begin, "{}: tensor '{}': data_offsets [{}, {}] hold {} bytes but shape {} needs {}",
               file, name, e.begin, e.end, e.end - e.begin, e.shape, static_cast<uint64_t>(bytes));
  return e;
}

}  // namespace

SafetensorsReader::SafetensorsReader(const std::filesystem::path& path) : path_(path) {
  const std::string f = path.string();
  std::error_code ec;
  // Only a regular file: its size bounds every read below (a link to /dev/zero has no size).
  const auto st = std::filesystem::status(path, ec);
  ENGRAM_CHECK(!std::filesystem::exists(st) || std::filesystem::is_regular_file(st),
               "{}: not a regular file (a safetensors file must be one)", f);
  const uint64_t size = std::filesystem::file_size(path, ec);
  ENGRAM_CHECK(!ec, "{}: cannot read: {}", f, ec.message());
  file_.open(path, std::ios::binary);
  ENGRAM_CHECK(file_.good(), "{}: cannot open for reading", f);
  ENGRAM_CHECK(size >= 8, "{}: file too short ({} bytes) to hold the 8-byte header length", f, size);
  uint64_t n = 0;
  file_.read(reinterpret_cast<char*>(&n), 8);
  ENGRAM_CHECK(n <= kMaxHeader, "{}: header length {} exceeds the {}-byte limit (not a safetensors file?)", f, n,
               kMaxHeader);
  ENGRAM_CHECK(n <= size - 8, "{}: header length {} exceeds the file size {} (truncated?)", f, n, size);
  std::string text(n, '\0');
  file_.read(text.data(), static_cast<std::streamsize>(n));
  ENGRAM_CHECK(file_.good(), "{}: cannot read the {}-byte header", f, n);
  data_start_ = 8 + n;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: header is not valid JSON: {}", f, e.what()));
  }
  ENGRAM_CHECK(header.is_object(), "{}: header is not a JSON object", f);
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      ENGRAM_CHECK(info.is_object(), "{}: __metadata__ is not an object", f);
      for (const auto& [k, v] : info.items()) {
        ENGRAM_CHECK(v.is_string(), "{}: __metadata__ value of '{}' is not a string", f, k);
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    entries_.push_back(parse_entry(f, name, info));
  }

  // The tensors must tile the data buffer exactly (as the reference reader requires).
  const uint64_t data_size = size - data_start_;
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries_) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  uint64_t expected = 0;
  for (const Entry* e : by_offset) {
    ENGRAM_CHECK(e->end <= data_size, "{}: tensor '{}': data_offsets [{}, {}] run past the {} data bytes (truncated?)",
                 f, e->name, e->begin, e->end, data_size);
    ENGRAM_CHECK(e->begin >= expected, "{}: tensor '{}': data_offsets [{}, {}] overlap the previous tensor", f, e->name,
                 e->begin, e->end);
    ENGRAM_CHECK(e->begin == expected, "{}: tensor '{}': data_offsets [{}, {}] leave a gap after byte {}", f, e->name,
                 e->begin, e->end, expected);
    expected = e->end;
  }
  ENGRAM_CHECK(expected == data_size, "{}: {} bytes after the last tensor's data", f, data_size - expected);
  // nlohmann's object is a std::map, so entries_ is already sorted by name.
}

const SafetensorsReader::Entry* SafetensorsReader::find(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, const std::string& n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

void SafetensorsReader::read(const Entry& entry, float* dst) {
  if (entry.end == entry.begin) return;
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(data_start_ + entry.begin));
  file_.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(entry.end - entry.begin));
  ENGRAM_CHECK(file_.good(), "{}: tensor '{}': cannot read bytes [{}, {}) (file truncated?)", path_.string(),
               entry.name, entry.begin, entry.end);
}

std::vector<float> SafetensorsReader::read(const Entry& entry) {
  std::vector<float> out(static_cast<size_t>(entry.shape.numel()));
  read(entry, out.data());
  return out;
}

}  // namespace engram::io
