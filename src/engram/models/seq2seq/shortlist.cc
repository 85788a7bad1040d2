// Shortlist: co-occurrence counts, the file format and a batch's union (shortlist.h).
#include "engram/models/seq2seq/shortlist.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "engram/core/error.h"
#include "engram/data/text.h"
#include "engram/io/files.h"

namespace engram::models {

namespace {

constexpr std::string_view kMagic = "engram-shortlist 1";

std::vector<int32_t> unique_ids(const std::vector<int32_t>& ids, int vocab, const char* side, size_t pair) {
  std::vector<int32_t> u = ids;
  for (int32_t id : u)
    ENGRAM_CHECK(id >= 0 && id < vocab, "shortlist: {} id {} of pair {} outside the vocabulary [0, {})", side, id,
                 pair + 1, vocab);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  return u;
}

// token -> id over a codec's whole vocabulary (its display tokens are unique per id, except
// that several ids may display alike; the first wins, as encode() would pick it).
std::unordered_map<std::string, int32_t> token_ids(const TextCodec& codec) {
  std::unordered_map<std::string, int32_t> m;
  for (int32_t id = 0; id < codec.size(); ++id) m.emplace(codec.token(id), id);
  return m;
}

}  // namespace

Shortlist Shortlist::build(std::span<const std::vector<int32_t>> src, std::span<const std::vector<int32_t>> tgt,
                           int src_vocab, int tgt_vocab, const ShortlistConfig& cfg) {
  ENGRAM_CHECK(src.size() == tgt.size(), "shortlist: {} source sentences for {} targets", src.size(), tgt.size());
  ENGRAM_CHECK(cfg.best >= 1 && cfg.frequent >= 0, "shortlist: best {} must be >= 1 and frequent {} >= 0", cfg.best,
               cfg.frequent);
  ENGRAM_CHECK(src_vocab >= 1 && tgt_vocab > data::kNumSpecial, "shortlist: vocabularies of {} and {} tokens",
               src_vocab, tgt_vocab);
  std::vector<int64_t> c_s(src_vocab, 0), c_t(tgt_vocab, 0);
  std::unordered_map<int64_t, int64_t> c_st;  // key s * V + t
  for (size_t p = 0; p < src.size(); ++p) {
    const std::vector<int32_t> s_ids = unique_ids(src[p], src_vocab, "source", p);
    const std::vector<int32_t> t_ids = unique_ids(tgt[p], tgt_vocab, "target", p);
    for (int32_t t : t_ids) ++c_t[t];
    for (int32_t s : s_ids) {
      ++c_s[s];
      for (int32_t t : t_ids) ++c_st[int64_t{s} * tgt_vocab + t];
    }
  }
  Shortlist sl;
  sl.tgt_vocab_ = tgt_vocab;
  std::vector<int32_t> order;
  for (int32_t t = data::kNumSpecial; t < tgt_vocab; ++t)
    if (c_t[t] > 0) order.push_back(t);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return c_t[a] > c_t[b]; });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(cfg.frequent)));
  sl.frequent_ = order;
  std::vector<char> is_frequent(tgt_vocab, 0);
  for (int32_t t : sl.frequent_) is_frequent[t] = 1;
  std::vector<std::vector<std::pair<int64_t, int32_t>>> cands(src_vocab);  // (c(s, t), t)
  for (const auto& [key, n] : c_st) {
    const auto s = static_cast<int32_t>(key / tgt_vocab), t = static_cast<int32_t>(key % tgt_vocab);
    if (t >= data::kNumSpecial && !is_frequent[t]) cands[s].emplace_back(n, t);
  }
  sl.by_source_.resize(src_vocab);
  for (int32_t s = 0; s < src_vocab; ++s) {
    auto& c = cands[s];
    // P(t | s) = c(s, t) / c(s): c(s) is fixed per s, so rank by c(s, t).
    std::sort(c.begin(), c.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      if (c_t[a.second] != c_t[b.second]) return c_t[a.second] > c_t[b.second];
      return a.second < b.second;
    });
    for (size_t i = 0; i < c.size() && i < static_cast<size_t>(cfg.best); ++i) sl.by_source_[s].push_back(c[i].second);
  }
  return sl;
}

void Shortlist::save(const std::filesystem::path& path, const TextCodec& src, const TextCodec& tgt) const {
  ENGRAM_CHECK(src.size() == src_vocab() && tgt.size() == tgt_vocab_,
               "shortlist: built for vocabularies of {} / {} tokens, the model has {} / {}", src_vocab(), tgt_vocab_,
               src.size(), tgt.size());
  std::string text = fmt::format("{}\n*\t", kMagic);
  auto append = [&](const std::vector<int32_t>& ids) {
    for (size_t i = 0; i < ids.size(); ++i) text += (i ? " " : "") + tgt.token(ids[i]);
    text += '\n';
  };
  append(frequent_);
  for (int32_t s = 0; s < src_vocab(); ++s) {
    if (by_source_[s].empty()) continue;
    text += src.token(s) + "\t";
    append(by_source_[s]);
  }
  io::write_file_atomic(path, text);
}

Shortlist Shortlist::load(const std::filesystem::path& path, const TextCodec& src, const TextCodec& tgt) {
  const std::vector<std::string> lines = data::read_lines(path.string(), kMaxShortlistFileBytes, "a shortlist file");
  const std::string name = path.string();
  ENGRAM_CHECK(!lines.empty() && lines[0] == kMagic, "{}:1: not a shortlist (expected the line '{}')", name, kMagic);
  const auto src_ids = token_ids(src), tgt_ids = token_ids(tgt);
  Shortlist sl;
  sl.tgt_vocab_ = tgt.size();
  sl.by_source_.resize(src.size());
  std::vector<char> seen(src.size(), 0);
  bool have_frequent = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t tab = line.find('\t');
    ENGRAM_CHECK(tab != std::string::npos && tab > 0 && line.find('\t', tab + 1) == std::string::npos,
                 "{}:{}: expected 'source token<TAB>target tokens'", name, i + 1);
    std::vector<int32_t> ids;
    for (const std::string& tok : data::split_whitespace(std::string_view(line).substr(tab + 1))) {
      const auto it = tgt_ids.find(tok);
      ENGRAM_CHECK(it != tgt_ids.end(), "{}:{}: target token '{}' is not in the model's vocabulary", name, i + 1, tok);
      ids.push_back(it->second);
    }
    const std::string key = line.substr(0, tab);
    if (key == "*") {
      ENGRAM_CHECK(!have_frequent, "{}:{}: a second '*' line", name, i + 1);
      have_frequent = true;
      sl.frequent_ = std::move(ids);
      continue;
    }
    const auto it = src_ids.find(key);
    ENGRAM_CHECK(it != src_ids.end(), "{}:{}: source token '{}' is not in the model's vocabulary", name, i + 1, key);
    ENGRAM_CHECK(!seen[it->second], "{}:{}: source token '{}' listed twice", name, i + 1, key);
    seen[it->second] = 1;
    sl.by_source_[it->second] = std::move(ids);
  }
  ENGRAM_CHECK(have_frequent, "{}: no '*' line (the frequent target tokens)", name);
  return sl;
}

std::vector<int32_t> Shortlist::batch_ids(std::span<const int32_t> src_ids) const {
  std::vector<char> in(tgt_vocab_, 0);
  for (int32_t t = 0; t < data::kNumSpecial; ++t) in[t] = 1;
  for (int32_t t : frequent_) in[t] = 1;
  for (int32_t s : src_ids) {
    ENGRAM_CHECK(s >= 0 && s < src_vocab(), "shortlist: source id {} outside [0, {})", s, src_vocab());
    for (int32_t t : by_source_[s]) in[t] = 1;
  }
  std::vector<int32_t> out;
  for (int32_t t = 0; t < tgt_vocab_; ++t)
    if (in[t]) out.push_back(t);
  return out;
}

}  // namespace engram::models
