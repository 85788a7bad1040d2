// A toy "single supporting fact" story generator (bAbI task 1 style) for fast learnability tests:
// a few "<person> <verb> the <place>" statements, then "where is <person>" whose answer is that
// person's latest place and whose supporting fact is that statement. Samples have the same shape
// as read_babi_file's (tokens already lowercased), so MemN2N code runs on both unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/data/babi.h"

namespace engram::data::tasks {

struct ToyBabiOptions {
  int min_statements = 2;
  int max_statements = 6;
  std::vector<std::string> people = {"mary", "john", "sandra", "daniel"};
  std::vector<std::string> places = {"bathroom", "hallway", "garden",
                                     "office",   "kitchen", "bedroom"};
  std::vector<std::vector<std::string>> verbs = {{"moved", "to"},
                                                 {"went", "to"},
                                                 {"journeyed", "to"},
                                                 {"travelled", "to"},
                                                 {"went", "back", "to"}};
};

// One story with one question (its own story; memory = all its statements).
BabiSample make_toy_babi_sample(const ToyBabiOptions& options, core::Rng& rng);
std::vector<BabiSample> make_toy_babi(int64_t n, const ToyBabiOptions& options, core::Rng& rng);

// The sample's memory and question as bAbI file text ("1 mary moved to the garden.\n ...
// "K where is mary? \tgarden\tJ\n"), which read_babi_file parses back to the same sample.
std::string to_babi_text(const BabiSample& sample);

}  // namespace engram::data::tasks
