// make_name_pairs: templates, filler words and made-up names.
#include "engram/data/tasks/names.h"

#include <array>

#include "engram/core/error.h"

namespace engram::data::tasks {

namespace {

constexpr std::string_view kConsonants = "bdfgklmnprstvz";
constexpr std::string_view kVowels = "aeiou";

// {source with P (person) and L (place), its summary}
struct Template {
  const char* source;
  const char* target;
};
constexpr std::array<Template, 6> kTemplates = {{
    {"P visited L on a short trip", "P visited L"},
    {"the minister P arrived in L for talks", "P arrived in L"},
    {"in L the police arrested P after a long search", "police arrested P in L"},
    {"P won the race in L", "P won in L"},
    {"crowds in L cheered as P spoke", "P spoke in L"},
    {"P left L and flew home", "P left L"},
}};
constexpr std::array<const char*, 16> kBefore = {"officials", "said", "that",   "on",    "monday", "reports",
                                                 "say",       "today", "late", "news",  "from",   "sources",
                                                 "confirmed", "again", "it",   "seems"};
constexpr std::array<const char*, 12> kAfter = {"and",   "then", "more",    "is",   "expected", "soon",
                                                "local", "time", "reports", "said", "later",    "today"};

int pick(core::Rng& rng, int n) { return static_cast<int>(rng.below(static_cast<uint64_t>(n))); }

}  // namespace

std::string make_name(core::Rng& rng) {
  std::string s;
  const int syllables = 2 + pick(rng, 2);
  for (int k = 0; k < syllables; ++k) {
    s += kConsonants[pick(rng, static_cast<int>(kConsonants.size()))];
    s += kVowels[pick(rng, static_cast<int>(kVowels.size()))];
  }
  if (pick(rng, 2)) s += kConsonants[pick(rng, static_cast<int>(kConsonants.size()))];
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::vector<NamePair> make_name_pairs(int64_t n, const NamesOptions& o, core::Rng& rng) {
  ENGRAM_CHECK(n >= 0 && o.min_filler >= 0 && o.max_filler >= o.min_filler,
               "names task: n {} and filler {}..{} must be >= 0 and ordered", n, o.min_filler, o.max_filler);
  auto fill = [&](const auto& words) {
    const int k = o.min_filler + pick(rng, o.max_filler - o.min_filler + 1);
    std::string out;
    for (int i = 0; i < k; ++i) out += (out.empty() ? "" : " ") + std::string(words[pick(rng, static_cast<int>(words.size()))]);
    return out;
  };
  auto substitute = [](std::string_view t, const std::string& person, const std::string& place) {
    std::string out;
    for (char c : t) out += c == 'P' ? person : c == 'L' ? place : std::string(1, c);
    return out;
  };
  std::vector<NamePair> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    NamePair p;
    p.person = make_name(rng);
    do p.place = make_name(rng);
    while (p.place == p.person);
    const Template& t = kTemplates[pick(rng, static_cast<int>(kTemplates.size()))];
    const std::string before = fill(kBefore), after = fill(kAfter);
    const std::string core = substitute(t.source, p.person, p.place);
    p.source = before + (before.empty() ? "" : " ") + core + (after.empty() ? "" : " ") + after;
    p.target = substitute(t.target, p.person, p.place);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace engram::data::tasks
