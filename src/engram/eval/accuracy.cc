// Accuracy and exact match (see accuracy.h).
#include "engram/eval/accuracy.h"

#include "engram/core/error.h"
#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

std::string normalise(std::string_view s, bool lowercase) {
  std::string lowered;
  if (lowercase) {
    lowered = simple_lower(s);
    s = lowered;
  }
  std::string out;
  for (auto w : split_python(s)) {
    if (!out.empty()) out.push_back(' ');
    out.append(w);
  }
  return out;
}

void check_sizes(size_t hyps, size_t refs, const char* what) {
  ENGRAM_CHECK(hyps == refs, "{}: {} hypotheses but {} references", what, hyps, refs);
}

}  // namespace

double accuracy(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  check_sizes(hyps.size(), refs.size(), "accuracy");
  if (hyps.empty()) return 0.0;
  size_t hits = 0;
  for (size_t i = 0; i < hyps.size(); ++i) hits += (hyps[i] == refs[i]);
  return static_cast<double>(hits) / static_cast<double>(hyps.size());
}

double exact_match(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                   bool lowercase) {
  check_sizes(hyps.size(), refs.size(), "exact match");
  if (hyps.empty()) return 0.0;
  size_t hits = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    hits += normalise(hyps[i], lowercase) == normalise(refs[i], lowercase);
  }
  return static_cast<double>(hits) / static_cast<double>(hyps.size());
}

}  // namespace engram::eval
