// Word-level vocabulary: token <-> id with the four special tokens every model shares
// (<pad>=0, <unk>=1, <go>=2 (BOS), <eos>=3), built from token counts, saved as vocab.txt.
//
// vocab.txt format: UTF-8, one token per line, line k (0-based) holds the token with id k; the
// first four lines are "<pad>", "<unk>", "<go>", "<eos>". Tokens are never empty and contain no
// whitespace (they come from whitespace splitting).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace engram::data {

inline constexpr int32_t kPadId = 0;
inline constexpr int32_t kUnkId = 1;
inline constexpr int32_t kGoId = 2;  // a.k.a. BOS
inline constexpr int32_t kBosId = kGoId;
inline constexpr int32_t kEosId = 3;
inline constexpr int32_t kNumSpecial = 4;
inline constexpr std::string_view kPadToken = "<pad>";
inline constexpr std::string_view kUnkToken = "<unk>";
inline constexpr std::string_view kGoToken = "<go>";
inline constexpr std::string_view kEosToken = "<eos>";

// The largest vocab.txt Vocab::load reads (docs/limits.md): a million tokens of 60 bytes.
inline constexpr uint64_t kMaxVocabFileBytes = uint64_t{64} << 20;

using TokenCounts = std::unordered_map<std::string, int64_t>;

// Adds the whitespace tokens of each line to counts.
void count_tokens(const std::vector<std::string>& lines, TokenCounts* counts);

struct VocabOptions {
  int64_t min_count = 1;  // tokens seen fewer times are left out (they encode to <unk>)
  int64_t max_size = 0;   // total size including the 4 specials; 0 = no limit
};

class Vocab {
 public:
  Vocab();  // the four special tokens only

  // Most frequent first, ties broken by byte order of the token: deterministic. Special-token
  // strings in counts are ignored (they already have their ids).
  static Vocab build(const TokenCounts& counts, const VocabOptions& options = {});
  // Ids in the given order after the specials (duplicates are an error).
  static Vocab from_tokens(const std::vector<std::string>& tokens);
  static Vocab load(const std::string& path);  // errors name path:line; at most kMaxVocabFileBytes
  void save(const std::string& path) const;

  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  bool contains(std::string_view token) const;
  int32_t id(std::string_view token) const;    // kUnkId when absent
  const std::string& token(int32_t id) const;  // throws on an out-of-range id

  // Ids of the tokens; add_go / add_eos wrap them in <go> ... <eos>.
  std::vector<int32_t> encode(const std::vector<std::string>& tokens, bool add_go = false,
                              bool add_eos = false) const;
  // Splits text on whitespace first.
  std::vector<int32_t> encode_text(std::string_view text, bool add_go = false,
                                   bool add_eos = false) const;
  // Tokens of ids up to (not including) the first <eos>, skipping <pad> and <go>.
  std::vector<std::string> decode(const std::vector<int32_t>& ids) const;
  // decode() joined with single spaces.
  std::string decode_text(const std::vector<int32_t>& ids) const;

 private:
  void add(std::string token);
  struct Hash {  // lets find() take a string_view without building a std::string
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> tokens_;                                        // [V] id -> token
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> index_;  // token -> id
};

}  // namespace engram::data
