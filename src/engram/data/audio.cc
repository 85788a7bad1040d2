// WAV reading (RIFF chunk check here, decoding by libsndfile from memory) and the FSDD file
// listing (see audio.h). The features live in audio_features.cc.
#include "engram/data/audio.h"

#include <sndfile.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "engram/core/error.h"
#include "engram/core/rng.h"

namespace engram::data::audio {
namespace {

uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// The first bytes of a file as printable text for messages: "fLaC", "\x00\x01..".
std::string show_bytes(std::string_view b) {
  std::string s;
  for (const unsigned char c : b.substr(0, 4)) {
    s += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c))
                                 : fmt::format("\\x{:02x}", c);
  }
  return s;
}

// Checks the RIFF/WAVE container before libsndfile sees it: the magic, and that every chunk up
// to and including "data" lies inside the file, so a truncated file or a header that claims
// more data than there is gets a precise error instead of a silently short read.
void check_riff(std::string_view bytes, const std::string& name) {
  ENGRAM_CHECK(!bytes.empty(), "{}: empty file (0 bytes)", name);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t size = bytes.size();
  ENGRAM_CHECK(size >= 12 && std::memcmp(p, "RIFF", 4) == 0 && std::memcmp(p + 8, "WAVE", 4) == 0,
               "{}: not a RIFF WAVE file (starts with \"{}\"{}), engram reads RIFF WAV", name,
               show_bytes(bytes), size < 12 ? fmt::format(", only {} bytes", size) : "");
  size_t off = 12;
  while (off + 8 <= size) {
    const std::string id(bytes.substr(off, 4));
    const uint64_t len = le32(p + off + 4);
    const uint64_t avail = size - off - 8;
    ENGRAM_CHECK(
        len <= avail,
        "{}: truncated or corrupt: chunk \"{}\" at byte {} declares {} bytes, the file has "
        "{} after its header",
        name, show_bytes(id), off, len, avail);
    if (id == "data") return;
    off += 8 + len + (len & 1);
  }
  ENGRAM_CHECK(off >= size, "{}: truncated: the file ends inside a chunk header at byte {}", name,
               off);
  throw Error(fmt::format("{}: no \"data\" chunk (truncated, or a WAVE file without audio)", name));
}

// libsndfile virtual I/O over a byte buffer.
struct MemoryFile {
  const char* data;
  sf_count_t size;
  sf_count_t pos = 0;
};
sf_count_t mem_length(void* user) { return static_cast<MemoryFile*>(user)->size; }
sf_count_t mem_seek(sf_count_t offset, int whence, void* user) {
  auto* f = static_cast<MemoryFile*>(user);
  const sf_count_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
  f->pos = std::clamp<sf_count_t>(base + offset, 0, f->size);
  return f->pos;
}
sf_count_t mem_read(void* ptr, sf_count_t count, void* user) {
  auto* f = static_cast<MemoryFile*>(user);
  const sf_count_t n = std::clamp<sf_count_t>(f->size - f->pos, 0, count);
  std::memcpy(ptr, f->data + f->pos, static_cast<size_t>(n));
  f->pos += n;
  return n;
}
sf_count_t mem_write(const void*, sf_count_t, void*) { return 0; }
sf_count_t mem_tell(void* user) { return static_cast<MemoryFile*>(user)->pos; }

std::string subtype_name(int format) {
  SF_FORMAT_INFO info{};
  info.format = format & SF_FORMAT_SUBMASK;
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &info, sizeof(info)) == 0 && info.name) {
    return info.name;  // "Signed 24 bit PCM", "32 bit float", "U-Law", "IMA ADPCM", ...
  }
  return fmt::format("sample format 0x{:04x}", info.format);
}

class SndFile {
 public:
  SndFile(MemoryFile* mem, SF_INFO* info) {
    SF_VIRTUAL_IO io{mem_length, mem_seek, mem_read, mem_write, mem_tell};
    file_ = sf_open_virtual(&io, SFM_READ, info, mem);
  }
  ~SndFile() {
    if (file_) sf_close(file_);
  }
  SndFile(const SndFile&) = delete;
  SndFile& operator=(const SndFile&) = delete;
  SNDFILE* get() const { return file_; }

 private:
  SNDFILE* file_ = nullptr;
};

}  // namespace

Waveform decode_wav(std::string_view bytes, const std::string& name, const WavLimits& limits) {
  check_riff(bytes, name);
  MemoryFile mem{bytes.data(), static_cast<sf_count_t>(bytes.size())};
  SF_INFO info{};
  SndFile file(&mem, &info);
  ENGRAM_CHECK(file.get() != nullptr, "{}: corrupt WAV: {}", name, sf_strerror(nullptr));

  const int major = info.format & SF_FORMAT_TYPEMASK;
  ENGRAM_CHECK(major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX,
               "{}: not a RIFF WAV file (libsndfile format 0x{:x}), engram reads RIFF WAV", name,
               major);
  ENGRAM_CHECK(info.channels == 1, "{}: {} channels, engram reads mono", name, info.channels);
  const int subtype = info.format & SF_FORMAT_SUBMASK;
  ENGRAM_CHECK(subtype == SF_FORMAT_PCM_16, "{}: {} samples, engram reads 16-bit PCM", name,
               subtype_name(subtype));
  ENGRAM_CHECK(info.samplerate >= 1 && info.samplerate <= limits.max_sample_rate,
               "{}: sample rate {} Hz, engram reads 1..{} Hz (WavLimits::max_sample_rate)", name,
               info.samplerate, limits.max_sample_rate);
  ENGRAM_CHECK(info.frames > 0, "{}: no audio samples (the data chunk is empty)", name);
  const double seconds = double(info.frames) / info.samplerate;
  ENGRAM_CHECK(seconds <= limits.max_seconds,
               "{}: {:.1f} s of audio, engram reads at most {:.1f} s (WavLimits::max_seconds)",
               name, seconds, limits.max_seconds);

  Waveform wave;
  wave.sample_rate = info.samplerate;
  wave.samples.resize(static_cast<size_t>(info.frames));
  constexpr sf_count_t kBlock = 4096;
  short buf[kBlock];
  sf_count_t done = 0;
  while (done < info.frames) {
    const sf_count_t got = sf_readf_short(file.get(), buf, std::min(kBlock, info.frames - done));
    ENGRAM_CHECK(got > 0, "{}: truncated: read {} of {} samples ({})", name, done, info.frames,
                 sf_strerror(file.get()));
    for (sf_count_t i = 0; i < got; ++i) wave.samples[done + i] = float(buf[i]) * (1.0f / 32768.0f);
    done += got;
  }
  return wave;
}

Waveform read_wav(const std::string& path, const WavLimits& limits) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  ENGRAM_CHECK(fs::exists(status), "{}: cannot open: no such file", path);
  ENGRAM_CHECK(fs::is_regular_file(status), "{}: cannot open: not a regular file", path);
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  ENGRAM_CHECK(!ec, "{}: cannot open: {}", path, ec.message());
  ENGRAM_CHECK(size <= limits.max_file_bytes(),
               "{}: {} bytes, more than the {} bytes WavLimits allows ({:.0f} s at {} Hz)", path,
               size, limits.max_file_bytes(), limits.max_seconds, limits.max_sample_rate);
  std::ifstream in(path, std::ios::binary);
  ENGRAM_CHECK(in.good(), "{}: cannot open: {}", path, std::strerror(errno));
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), size);
  ENGRAM_CHECK(in.gcount() == size, "{}: read {} of {} bytes", path, in.gcount(), size);
  return decode_wav(bytes, path, limits);
}

// ---------------------------------------------------------------------------------------------
// FSDD

FsddRecording parse_fsdd_name(const std::string& path) {
  const std::string file = std::filesystem::path(path).filename().string();
  const auto bad = [&] {
    return fmt::format(
        "{}: not an FSDD recording name (expected digit_speaker_index.wav, e.g. "
        "7_jackson_32.wav)",
        path);
  };
  ENGRAM_CHECK(file.size() > 4 && file.ends_with(".wav"), "{}", bad());
  const std::string stem = file.substr(0, file.size() - 4);
  const size_t a = stem.find('_');
  const size_t b = stem.rfind('_');
  ENGRAM_CHECK(a == 1 && b != a && stem[0] >= '0' && stem[0] <= '9', "{}", bad());
  const std::string speaker = stem.substr(a + 1, b - a - 1);
  const std::string index = stem.substr(b + 1);
  ENGRAM_CHECK(!speaker.empty() &&
                   std::all_of(speaker.begin(), speaker.end(),
                               [](char c) {
                                 return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
                               }),
               "{}", bad());
  ENGRAM_CHECK(
      !index.empty() && index.size() <= 6 &&
          std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }),
      "{}", bad());
  return FsddRecording{path, stem[0] - '0', speaker, std::stoi(index)};
}

Waveform change_speed(const Waveform& w, float speed) {
  ENGRAM_CHECK(speed >= 0.5f && speed <= 2.0f, "speed perturbation: speed {} is outside [0.5, 2]", speed);
  Waveform out;
  out.sample_rate = w.sample_rate;
  if (w.samples.empty()) return out;
  const size_t n = w.samples.size();
  const size_t m = static_cast<size_t>(static_cast<double>(n - 1) / speed) + 1;
  out.samples.resize(m);
  for (size_t t = 0; t < m; ++t) {
    const double pos = static_cast<double>(t) * speed;
    const size_t i = std::min(static_cast<size_t>(pos), n - 1);
    const double frac = pos - static_cast<double>(i);
    const float next = i + 1 < n ? w.samples[i + 1] : w.samples[i];
    out.samples[t] = static_cast<float>((1.0 - frac) * w.samples[i] + frac * next);
  }
  return out;
}

Waveform add_noise(const Waveform& w, float snr_db, core::Rng& rng) {
  ENGRAM_CHECK(std::isfinite(snr_db) && snr_db >= -10.0f && snr_db <= 100.0f,
               "noise: SNR {} dB is outside [-10, 100]", snr_db);
  Waveform out = w;
  double power = 0;
  for (float x : w.samples) power += static_cast<double>(x) * x;
  if (w.samples.empty() || power == 0) return out;
  power /= static_cast<double>(w.samples.size());
  const double sigma = std::sqrt(power / std::pow(10.0, snr_db / 10.0));
  for (float& x : out.samples) x = static_cast<float>(x + sigma * rng.normal());
  return out;
}

std::vector<FsddRecording> list_fsdd(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::path root(dir);
  if (fs::is_directory(root / "recordings")) root /= "recordings";
  ENGRAM_CHECK(fs::is_directory(root), "FSDD: {} is not a directory", dir);
  std::vector<FsddRecording> out;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".wav") continue;
    out.push_back(parse_fsdd_name(it->path().string()));
  }
  ENGRAM_CHECK(!ec, "FSDD: cannot list {}: {}", root.string(), ec.message());
  ENGRAM_CHECK(!out.empty(), "FSDD: no .wav files in {}", root.string());
  std::sort(out.begin(), out.end(), [](const FsddRecording& x, const FsddRecording& y) {
    return std::tie(x.speaker, x.digit, x.index) < std::tie(y.speaker, y.digit, y.index);
  });
  return out;
}

}  // namespace engram::data::audio
