// TextCodec: word, character and SentencePiece vocabularies behind one encode/decode interface.
#include "engram/models/text_codec.h"

#include <filesystem>

#include "engram/core/error.h"
#include "engram/data/chinese_script.h"
#include "engram/data/text.h"
#include "engram/eval/unicode.h"

namespace engram::models {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // "▁" U+2581: a space (char tokens, spm pieces)

}  // namespace

std::string TextCodec::normalise(std::string_view text) const {
  std::string t = simplified_ ? data::to_simplified_chinese(text) : std::string(text);
  return lowercase_ ? eval::simple_lower(t) : t;
}

std::vector<std::string> TextCodec::split(std::string_view text) const {
  const std::string t = normalise(text);
  if (unit_ == TokenUnit::kWord) return data::split_whitespace(t);
  std::vector<std::string> chars;
  bool space = false;
  for (std::string& c : data::utf8_chars(t)) {
    const bool is_space = c == " " || c == "\t";
    if (is_space) {
      space = !chars.empty();  // leading and repeated spaces collapse; one mark between words
      continue;
    }
    if (space) chars.emplace_back(kSpaceMark);
    space = false;
    chars.push_back(std::move(c));
  }
  return chars;
}

TextCodec TextCodec::build(const Options& o, const std::vector<std::string>& lines, const std::string& path) {
  TextCodec c;
  c.unit_ = o.unit;
  c.lowercase_ = o.lowercase;
  c.simplified_ = o.simplified;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  if (o.unit == TokenUnit::kSpm) {
    std::vector<std::string> norm;
    norm.reserve(lines.size());
    for (const std::string& l : lines) norm.push_back(c.normalise(l));
    data::train_spm_from_lines(norm, path, {.vocab_size = o.vocab_size, .character_coverage = o.character_coverage});
    c.spm_ = std::make_shared<const data::SpmModel>(data::SpmModel::load(path));
    return c;
  }
  data::TokenCounts counts;
  for (const std::string& l : lines)
    for (std::string& t : c.split(l)) ++counts[t];
  c.vocab_ = data::Vocab::build(counts, {.min_count = o.min_count, .max_size = o.vocab_size});
  c.vocab_.save(path);
  return c;
}

TextCodec TextCodec::load(const Options& o, const std::string& path, std::string_view what) {
  TextCodec c;
  c.unit_ = o.unit;
  c.lowercase_ = o.lowercase;
  c.simplified_ = o.simplified;
  ENGRAM_CHECK(std::filesystem::exists(path), "{}: missing ({})", path, what);
  if (o.unit == TokenUnit::kSpm) c.spm_ = std::make_shared<const data::SpmModel>(data::SpmModel::load(path));
  else c.vocab_ = data::Vocab::load(path);
  return c;
}

int32_t TextCodec::size() const { return spm_ ? spm_->size() : vocab_.size(); }

std::vector<int32_t> TextCodec::encode(std::string_view text) const {
  if (spm_) return spm_->encode(normalise(text));
  return vocab_.encode(split(text));
}

std::vector<std::string> TextCodec::tokens(std::string_view text) const {
  if (spm_) return spm_->encode_pieces(normalise(text));
  return split(text);
}

int32_t TextCodec::id(std::string_view token) const { return spm_ ? spm_->id(token) : vocab_.id(token); }

const std::string& TextCodec::token(int32_t id) const { return spm_ ? spm_->piece(id) : vocab_.token(id); }

std::string TextCodec::decode(const std::vector<int32_t>& ids) const {
  return spm_ ? spm_->decode(ids) : join(vocab_.decode(ids));
}

std::string TextCodec::join(const std::vector<std::string>& tokens) const {
  std::string out;
  if (unit_ == TokenUnit::kWord) {
    for (const std::string& t : tokens) out += (out.empty() ? "" : " ") + t;
    return out;
  }
  if (unit_ == TokenUnit::kChar) {
    for (const std::string& t : tokens) out += t == kSpaceMark ? " " : t;
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

bool same_vocabulary(const TextCodec& a, const TextCodec& b) {
  if (a.unit_ != b.unit_ || a.lowercase_ != b.lowercase_ || a.simplified_ != b.simplified_ || a.size() != b.size()) return false;
  for (int32_t id = 0; id < a.size(); ++id)
    if (a.token(id) != b.token(id)) return false;
  return true;
}

}  // namespace engram::models
