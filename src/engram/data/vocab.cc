// Word vocabulary (see vocab.h).
#include "engram/data/vocab.h"

#include <algorithm>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

bool is_special(std::string_view t) {
  return t == kPadToken || t == kUnkToken || t == kGoToken || t == kEosToken;
}

bool has_ascii_space(std::string_view t) {
  return std::any_of(t.begin(), t.end(),
                     [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
}

}  // namespace

void count_tokens(const std::vector<std::string>& lines, TokenCounts* counts) {
  for (const auto& line : lines) {
    for (auto& tok : split_whitespace(line)) ++(*counts)[std::move(tok)];
  }
}

Vocab::Vocab() {
  for (auto t : {kPadToken, kUnkToken, kGoToken, kEosToken}) add(std::string(t));
}

void Vocab::add(std::string token) {
  const auto id = static_cast<int32_t>(tokens_.size());
  const bool inserted = index_.emplace(token, id).second;
  ENGRAM_CHECK(inserted, "vocab: duplicate token '{}'", token);
  tokens_.push_back(std::move(token));
}

Vocab Vocab::build(const TokenCounts& counts, const VocabOptions& options) {
  ENGRAM_CHECK(options.max_size == 0 || options.max_size >= kNumSpecial,
               "vocab: max_size {} is smaller than the {} special tokens", options.max_size,
               kNumSpecial);
  std::vector<std::pair<std::string_view, int64_t>> items;
  for (const auto& [tok, count] : counts) {
    if (count >= options.min_count && !is_special(tok)) items.emplace_back(tok, count);
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (options.max_size > 0 && static_cast<int64_t>(items.size()) > options.max_size - kNumSpecial) {
    items.resize(options.max_size - kNumSpecial);
  }
  Vocab v;
  for (const auto& [tok, count] : items) {
    ENGRAM_CHECK(!tok.empty() && !has_ascii_space(tok),
                 "vocab: token '{}' is empty or contains whitespace", tok);
    v.add(std::string(tok));
  }
  return v;
}

Vocab Vocab::from_tokens(const std::vector<std::string>& tokens) {
  Vocab v;
  for (const auto& t : tokens) {
    ENGRAM_CHECK(!t.empty() && !has_ascii_space(t),
                 "vocab: token '{}' is empty or contains whitespace", t);
    v.add(t);
  }
  return v;
}

Vocab Vocab::load(const std::string& path) {
  const auto lines = read_lines(path, kMaxVocabFileBytes, "a vocabulary file");
  ENGRAM_CHECK(lines.size() >= static_cast<size_t>(kNumSpecial),
               "{}: {} lines, a vocab.txt starts with the {} special tokens", path, lines.size(),
               kNumSpecial);
  Vocab v;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& t = lines[i];
    if (i < static_cast<size_t>(kNumSpecial)) {
      ENGRAM_CHECK(t == v.tokens_[i], "{}:{}: expected special token '{}', found '{}'", path, i + 1,
                   v.tokens_[i], t);
      continue;
    }
    ENGRAM_CHECK(!t.empty() && !has_ascii_space(t), "{}:{}: empty token or token with whitespace",
                 path, i + 1);
    ENGRAM_CHECK(!v.contains(t), "{}:{}: duplicate token '{}' (first at line {})", path, i + 1, t,
                 v.id(t) + 1);
    v.add(t);
  }
  return v;
}

void Vocab::save(const std::string& path) const { write_lines(path, tokens_); }

bool Vocab::contains(std::string_view token) const { return index_.find(token) != index_.end(); }

int32_t Vocab::id(std::string_view token) const {
  auto it = index_.find(token);
  return it == index_.end() ? kUnkId : it->second;
}

const std::string& Vocab::token(int32_t id) const {
  ENGRAM_CHECK(id >= 0 && id < size(), "vocab: id {} out of range [0, {})", id, size());
  return tokens_[id];
}

std::vector<int32_t> Vocab::encode(const std::vector<std::string>& tokens, bool add_go,
                                   bool add_eos) const {
  std::vector<int32_t> ids;
  ids.reserve(tokens.size() + 2);
  if (add_go) ids.push_back(kGoId);
  for (const auto& t : tokens) ids.push_back(id(t));
  if (add_eos) ids.push_back(kEosId);
  return ids;
}

std::vector<int32_t> Vocab::encode_text(std::string_view text, bool add_go, bool add_eos) const {
  return encode(split_whitespace(text), add_go, add_eos);
}

std::vector<std::string> Vocab::decode(const std::vector<int32_t>& ids) const {
  std::vector<std::string> out;
  for (int32_t i : ids) {
    if (i == kEosId) break;
    if (i == kPadId || i == kGoId) continue;
    out.push_back(token(i));
  }
  return out;
}

std::string Vocab::decode_text(const std::vector<int32_t>& ids) const {
  std::string out;
  for (const auto& t : decode(ids)) {
    if (!out.empty()) out.push_back(' ');
    out += t;
  }
  return out;
}

}  // namespace engram::data
