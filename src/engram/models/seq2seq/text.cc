// TextCodec: word, character and SentencePiece vocabularies behind one encode/decode interface.
#include "engram/models/seq2seq/text.h"

#include <filesystem>

#include "engram/core/error.h"
#include "engram/data/text.h"
#include "engram/eval/unicode.h"

namespace engram::models {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // "▁" U+2581: a space in char mode

std::string path_in(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace

std::string TextCodec::file_name(const TokenizerConfig& cfg, Side side) {
  const char* s = side == Side::kSource ? "src" : "tgt";
  if (cfg.unit == TokenUnit::kSpm) return cfg.joint ? "joint.spm" : fmt::format("{}.spm", s);
  return fmt::format("{}.vocab.txt", s);
}

std::string TextCodec::normalise(std::string_view text) const {
  return lowercase_ ? eval::simple_lower(text) : std::string(text);
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

TextCodec TextCodec::build(const TokenizerConfig& cfg, Side side, const std::vector<std::string>& lines,
                           const std::string& dir) {
  TextCodec c;
  c.unit_ = cfg.unit;
  c.lowercase_ = cfg.lowercase;
  std::filesystem::create_directories(dir);
  const std::string path = path_in(dir, file_name(cfg, side));
  ENGRAM_CHECK(cfg.src_vocab_size >= 0 && !(cfg.joint && cfg.src_vocab_size > 0),
               "tokenizer: src_vocab_size {} must be >= 0, and 0 with a joint model", cfg.src_vocab_size);
  const int size = side == Side::kSource && cfg.src_vocab_size > 0 ? cfg.src_vocab_size : cfg.vocab_size;
  if (cfg.unit == TokenUnit::kSpm) {
    std::vector<std::string> norm;
    norm.reserve(lines.size());
    for (const std::string& l : lines) norm.push_back(c.normalise(l));
    data::train_spm_from_lines(norm, path,
                               {.vocab_size = size, .character_coverage = cfg.character_coverage});
    c.spm_ = std::make_shared<const data::SpmModel>(data::SpmModel::load(path));
    return c;
  }
  data::TokenCounts counts;
  for (const std::string& l : lines)
    for (std::string& t : c.split(l)) ++counts[t];
  c.vocab_ = data::Vocab::build(counts, {.min_count = cfg.min_count, .max_size = size});
  c.vocab_.save(path);
  return c;
}

TextCodec TextCodec::load(const TokenizerConfig& cfg, Side side, const std::string& dir) {
  TextCodec c;
  c.unit_ = cfg.unit;
  c.lowercase_ = cfg.lowercase;
  const std::string path = path_in(dir, file_name(cfg, side));
  ENGRAM_CHECK(std::filesystem::exists(path), "{}: missing (the {} vocabulary of a '{}' tokenizer)", path,
               side == Side::kSource ? "source" : "target", io::to_yaml(cfg)["unit"].as<std::string>());
  if (cfg.unit == TokenUnit::kSpm) c.spm_ = std::make_shared<const data::SpmModel>(data::SpmModel::load(path));
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

std::string TextCodec::decode(const std::vector<int32_t>& ids) const {
  if (spm_) return spm_->decode(ids);
  std::vector<std::string> toks = vocab_.decode(ids);
  if (unit_ == TokenUnit::kWord) return vocab_.decode_text(ids);
  std::string out;
  for (const std::string& t : toks) out += t == kSpaceMark ? " " : t;
  return out;
}

std::string TextCodec::token(int32_t id) const {
  if (spm_) return spm_->piece(id);
  return vocab_.token(id);
}

}  // namespace engram::models
