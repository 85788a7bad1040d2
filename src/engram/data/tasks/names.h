// The synthetic copy task of the pointer-generator: short news-like sentences about a person and
// a place whose names are made up from syllables ("Kovaletu", "Bramido"), so that almost every
// name is unseen in training and out of any vocabulary of the frequent words; the target is a
// one-line summary that must reproduce both names verbatim ("Kovaletu visited Bramido"). A model
// with a fixed vocabulary can only write <unk> for them; a copying model can copy them.
// Everything is a pure function of the Rng passed in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/core/rng.h"

namespace engram::data::tasks {

struct NamePair {
  std::string source;  // e.g. "officials said on monday that Kovaletu visited Bramido for talks"
  std::string target;  // e.g. "Kovaletu visited Bramido"
  std::string person, place;
};

struct NamesOptions {
  int min_filler = 1;  // common words added before and after the core sentence, each side
  int max_filler = 4;
};

// A made-up capitalised name of 2 or 3 consonant-vowel syllables (and an optional final
// consonant): over 10^6 distinct names.
std::string make_name(core::Rng& rng);

// n pairs; each source is [filler] template-with-names [filler], the target the template's summary.
std::vector<NamePair> make_name_pairs(int64_t n, const NamesOptions& options, core::Rng& rng);

}  // namespace engram::data::tasks
