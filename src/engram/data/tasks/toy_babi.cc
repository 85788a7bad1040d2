// Toy single-supporting-fact stories (see toy_babi.h).
#include "engram/data/tasks/toy_babi.h"

#include <fmt/format.h>

#include "engram/core/error.h"

namespace engram::data::tasks {

BabiSample make_toy_babi_sample(const ToyBabiOptions& o, core::Rng& rng) {
  ENGRAM_CHECK(o.min_statements >= 1 && o.min_statements <= o.max_statements,
               "toy bAbI: need 1 <= min_statements <= max_statements, got {} and {}",
               o.min_statements, o.max_statements);
  ENGRAM_CHECK(!o.people.empty() && !o.places.empty() && !o.verbs.empty(),
               "toy bAbI: people, places and verbs must be non-empty");
  const int n =
      o.min_statements +
      static_cast<int>(rng.below(static_cast<uint64_t>(o.max_statements - o.min_statements + 1)));
  auto story = std::make_shared<std::vector<Sentence>>();
  std::vector<int> last_statement(o.people.size(), -1);  // person -> latest statement index
  std::vector<int> last_place(o.people.size(), -1);
  for (int i = 0; i < n; ++i) {
    const auto person = rng.below(o.people.size());
    const auto verb = rng.below(o.verbs.size());
    const auto place = rng.below(o.places.size());
    Sentence s = {o.people[person]};
    s.insert(s.end(), o.verbs[verb].begin(), o.verbs[verb].end());
    s.push_back("the");
    s.push_back(o.places[place]);
    story->push_back(std::move(s));
    last_statement[person] = i;
    last_place[person] = static_cast<int>(place);
  }
  std::vector<size_t> mentioned;
  for (size_t p = 0; p < o.people.size(); ++p) {
    if (last_statement[p] >= 0) mentioned.push_back(p);
  }
  const size_t who = mentioned[rng.below(mentioned.size())];
  BabiSample sample;
  sample.story = story;
  sample.memory_begin = 0;
  sample.memory_end = n;
  sample.question = {"where", "is", o.people[who]};
  sample.answer = o.places[last_place[who]];
  sample.supporting = {last_statement[who]};
  sample.line = n + 1;
  return sample;
}

std::vector<BabiSample> make_toy_babi(int64_t n, const ToyBabiOptions& o, core::Rng& rng) {
  ENGRAM_CHECK(n >= 0, "toy bAbI: n must be >= 0, got {}", n);
  std::vector<BabiSample> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(make_toy_babi_sample(o, rng));
  return out;
}

std::string to_babi_text(const BabiSample& sample) {
  std::string out;
  const auto memory = sample.memory();
  auto join = [](const Sentence& s) {
    std::string t;
    for (const auto& w : s) t += (t.empty() ? "" : " ") + w;
    return t;
  };
  for (size_t i = 0; i < memory.size(); ++i) out += fmt::format("{} {}.\n", i + 1, join(memory[i]));
  std::string support;
  for (int32_t p : sample.supporting) {
    ENGRAM_CHECK(p >= 0, "to_babi_text: a supporting fact lies outside the memory window");
    support += fmt::format("{}{}", support.empty() ? "" : " ", p + 1);
  }
  out += fmt::format("{} {}? \t{}\t{}\n", memory.size() + 1, join(sample.question), sample.answer,
                     support);
  return out;
}

}  // namespace engram::data::tasks
