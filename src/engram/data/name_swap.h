// Names put into sentence pairs: where a name of a bilingual list (e.g. CC-CEDICT's proper
// nouns, data/cedict.h) stands on both sides of a Chinese-English pair, another name can take
// its place, which gives the name a sentence around it:
//   我明天要去上海。 / Tomorrow I'm going to Shanghai.   + 北京 / Beijing
//   -> 我明天要去北京。 / Tomorrow I'm going to Beijing.
// A slot is a pair whose Chinese side holds the name's headword exactly once and whose English
// side holds its gloss exactly once as whole words (no ASCII letter or digit on either side of
// it; case-sensitive). The new pair is grammatical only as far as the names are alike; it is
// always a consistent translation pair, which is what teaches the name in context.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace engram::data {

struct NameSlot {
  size_t pair = 0;  // index into the sentence pairs
  size_t name = 0;  // index into the names
};

// The slot of each pair that has one: of the names found in it, the one with the longest
// headword (then the earliest in the list). Headwords shorter than min_chars code points are
// not looked for. zh / en are the pairs' sides [P]; name_zh / name_en the names [N].
std::vector<NameSlot> find_name_slots(const std::vector<std::string>& zh, const std::vector<std::string>& en,
                                      const std::vector<std::string>& name_zh, const std::vector<std::string>& name_en,
                                      int min_chars = 2);

// The pair (zh, en) with old_zh replaced by new_zh and old_en by new_en (each side's one
// occurrence, as find_name_slots found them).
std::pair<std::string, std::string> swap_name(const std::string& zh, const std::string& en, const std::string& old_zh,
                                              const std::string& old_en, const std::string& new_zh,
                                              const std::string& new_en);

}  // namespace engram::data
