// PgCodec and the extended vocabulary of one example.
#include "engram/models/pointer_generator/text.h"

#include <filesystem>

#include "engram/core/error.h"
#include "engram/data/text.h"
#include "engram/eval/unicode.h"

namespace engram::models {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // "▁" U+2581, SentencePiece's space

}  // namespace

std::string PgCodec::file_name(const PointerGeneratorConfig& cfg) {
  return cfg.unit == PgUnit::kSpm ? "vocab.spm" : "vocab.txt";
}

std::string PgCodec::normalise(std::string_view text) const {
  return lowercase_ ? eval::simple_lower(text) : std::string(text);
}

PgCodec PgCodec::build(const PointerGeneratorConfig& cfg, const std::vector<std::string>& lines,
                       const std::string& dir) {
  PgCodec c;
  c.lowercase_ = cfg.lowercase;
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / file_name(cfg)).string();
  if (cfg.unit == PgUnit::kSpm) {
    std::vector<std::string> norm;
    norm.reserve(lines.size());
    for (const std::string& l : lines) norm.push_back(c.normalise(l));
    data::train_spm_from_lines(norm, path, {.vocab_size = cfg.vocab_size});
    c.spm_ = std::make_shared<const data::SpmModel>(data::SpmModel::load(path));
    return c;
  }
  data::TokenCounts counts;
  for (const std::string& l : lines)
    for (std::string& t : data::split_whitespace(c.normalise(l))) ++counts[t];
  c.vocab_ = data::Vocab::build(counts, {.min_count = cfg.min_count, .max_size = cfg.vocab_size});
  c.vocab_.save(path);
  return c;
}

PgCodec PgCodec::load(const PointerGeneratorConfig& cfg, const std::string& dir) {
  PgCodec c;
  c.lowercase_ = cfg.lowercase;
  const std::string path = (std::filesystem::path(dir) / file_name(cfg)).string();
  ENGRAM_CHECK(std::filesystem::exists(path), "{}: missing (the pointer-generator's vocabulary)", path);
  if (cfg.unit == PgUnit::kSpm) c.spm_ = std::make_shared<const data::SpmModel>(data::SpmModel::load(path));
  else c.vocab_ = data::Vocab::load(path);
  return c;
}

int32_t PgCodec::size() const { return spm_ ? spm_->size() : vocab_.size(); }

std::vector<std::string> PgCodec::tokens(std::string_view text) const {
  if (spm_) return spm_->encode_pieces(normalise(text));
  return data::split_whitespace(normalise(text));
}

int32_t PgCodec::id(std::string_view token) const { return spm_ ? spm_->id(token) : vocab_.id(token); }

const std::string& PgCodec::token(int32_t id) const { return spm_ ? spm_->piece(id) : vocab_.token(id); }

bool same_vocabulary(const PgCodec& a, const PgCodec& b) {
  if (a.spm() != b.spm() || a.lowercase_ != b.lowercase_ || a.size() != b.size()) return false;
  for (int32_t id = 0; id < a.size(); ++id)
    if (a.token(id) != b.token(id)) return false;
  return true;
}

std::string PgCodec::join(const std::vector<std::string>& tokens) const {
  std::string out;
  if (!spm_) {
    for (const std::string& t : tokens) out += (out.empty() ? "" : " ") + t;
    return out;
  }
  for (const std::string& t : tokens) {
    for (size_t k = 0; k < t.size();) {
      if (t.compare(k, kSpaceMark.size(), kSpaceMark) == 0) {
        if (!out.empty() && out.back() != ' ') out += ' ';
        k += kSpaceMark.size();
      } else {
        out += t[k++];
      }
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

ExtendedSource extend_source(const PgCodec& codec, std::string_view text, int max_tokens) {
  ExtendedSource s;
  s.tokens = codec.tokens(text);
  if (max_tokens > 0 && static_cast<int>(s.tokens.size()) > max_tokens) s.tokens.resize(max_tokens);
  const int32_t v = codec.size();
  for (const std::string& t : s.tokens) {
    const int32_t id = codec.id(t);
    if (id != data::kUnkId || t == data::kUnkToken) {
      s.ids.push_back(id);
      continue;
    }
    int32_t k = 0;
    while (k < static_cast<int32_t>(s.oovs.size()) && s.oovs[k] != t) ++k;
    if (k == static_cast<int32_t>(s.oovs.size())) s.oovs.push_back(t);
    s.ids.push_back(v + k);
  }
  return s;
}

std::vector<int32_t> extend_target(const PgCodec& codec, const std::vector<std::string>& tokens,
                                   const ExtendedSource& src) {
  std::vector<int32_t> out;
  const int32_t v = codec.size();
  for (const std::string& t : tokens) {
    int32_t id = codec.id(t);
    if (id == data::kUnkId && t != data::kUnkToken)
      for (size_t k = 0; k < src.oovs.size(); ++k)
        if (src.oovs[k] == t) id = v + static_cast<int32_t>(k);
    out.push_back(id);
  }
  return out;
}

std::vector<std::string> output_tokens(const PgCodec& codec, const std::vector<int32_t>& ids,
                                       const ExtendedSource& src) {
  std::vector<std::string> out;
  const int32_t v = codec.size(), x = static_cast<int32_t>(src.oovs.size());
  for (int32_t id : ids) {
    if (id == data::kEosId) break;
    if (id == data::kPadId || id == data::kGoId) continue;
    ENGRAM_CHECK(id >= 0 && id < v + x, "pointer_generator: output id {} outside the extended vocabulary [0, {})", id,
                 v + x);
    out.push_back(id < v ? codec.token(id) : src.oovs[id - v]);
  }
  return out;
}

}  // namespace engram::models
