// Names put into sentence pairs (see name_swap.h).
#include "engram/data/name_swap.h"

#include <unordered_map>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Byte offset of the only whole-word occurrence of w in s, or npos (none, or more than one).
size_t only_whole_word(const std::string& s, const std::string& w) {
  size_t found = std::string::npos;
  for (size_t at = s.find(w); at != std::string::npos; at = s.find(w, at + 1)) {
    const bool before = at == 0 || !word_char(s[at - 1]);
    const bool after = at + w.size() == s.size() || !word_char(s[at + w.size()]);
    if (!before || !after) continue;
    if (found != std::string::npos) return std::string::npos;
    found = at;
  }
  return found;
}

// Byte offset of the only occurrence of w in s, or npos.
size_t only_once(const std::string& s, const std::string& w) {
  const size_t at = s.find(w);
  if (at == std::string::npos || s.find(w, at + 1) != std::string::npos) return std::string::npos;
  return at;
}

}  // namespace

std::vector<NameSlot> find_name_slots(const std::vector<std::string>& zh, const std::vector<std::string>& en,
                                      const std::vector<std::string>& name_zh, const std::vector<std::string>& name_en,
                                      int min_chars) {
  ENGRAM_CHECK(zh.size() == en.size() && name_zh.size() == name_en.size(),
               "name slots: {} Chinese and {} English sentences, {} and {} names", zh.size(), en.size(), name_zh.size(),
               name_en.size());
  std::unordered_map<std::string, size_t> index;  // headword -> its first name
  int longest = 0;
  for (size_t k = 0; k < name_zh.size(); ++k) {
    const int n = static_cast<int>(utf8_length(name_zh[k]));
    if (n < min_chars || name_en[k].empty()) continue;
    index.emplace(name_zh[k], k);
    longest = std::max(longest, n);
  }
  std::vector<NameSlot> slots;
  for (size_t p = 0; p < zh.size(); ++p) {
    // Every substring of min_chars..longest code points, longest first; the first that is a
    // name found once on each side is the slot.
    const std::vector<std::string> chars = utf8_chars(zh[p]);
    bool done = false;
    for (int len = std::min<int>(longest, static_cast<int>(chars.size())); len >= min_chars && !done; --len) {
      size_t best = std::string::npos;
      for (size_t i = 0; i + static_cast<size_t>(len) <= chars.size(); ++i) {
        std::string sub;
        for (size_t k = i; k < i + static_cast<size_t>(len); ++k) sub += chars[k];
        const auto it = index.find(sub);
        if (it == index.end() || (best != std::string::npos && it->second >= best)) continue;
        if (only_once(zh[p], sub) == std::string::npos) continue;
        if (only_whole_word(en[p], name_en[it->second]) == std::string::npos) continue;
        best = it->second;
      }
      if (best != std::string::npos) {
        slots.push_back({p, best});
        done = true;
      }
    }
  }
  return slots;
}

std::pair<std::string, std::string> swap_name(const std::string& zh, const std::string& en, const std::string& old_zh,
                                              const std::string& old_en, const std::string& new_zh,
                                              const std::string& new_en) {
  const size_t a = only_once(zh, old_zh), b = only_whole_word(en, old_en);
  ENGRAM_CHECK(a != std::string::npos && b != std::string::npos, "swap_name: '{}' / '{}' is not a slot of the pair",
               old_zh, old_en);
  std::string z = zh, e = en;
  z.replace(a, old_zh.size(), new_zh);
  e.replace(b, old_en.size(), new_en);
  return {z, e};
}

}  // namespace engram::data
