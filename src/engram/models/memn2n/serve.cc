// The bAbI route of the server (LoadedBabiModel::serve_check / serve): one story and question
// per request; the reply carries the attention of every hop over the story's sentences.
#include <algorithm>

#include "engram/models/memn2n/task.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;

// The request as run_line's text: the statements (each ended by '.'), then the question.
std::string request_line(const json& r, const ServeLimits& limits) {
  const size_t max_bytes = static_cast<size_t>(limits.max_tokens) * 32;
  std::string line;
  for (std::string s : serve_json::strings_field(r, "story", limits.max_items, max_bytes)) {
    ENGRAM_CHECK(s.find('?') == std::string::npos, "'story' holds statements; a '?' belongs in 'question'");
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    if (!s.empty() && s.back() != '.' && s.back() != '!') s += '.';
    line += s + ' ';
  }
  std::string q = serve_json::string_field(r, "question", max_bytes);
  ENGRAM_CHECK(q.find_first_of(".!\n") == std::string::npos, "'question' is one sentence (no '.', '!' or newline)");
  if (q.find('?') == std::string::npos) q += '?';
  ENGRAM_CHECK(q.find('?') + 1 == q.size() || q.find_first_not_of(" ", q.find('?') + 1) == std::string::npos,
               "'question' ends at its '?'");
  return line + q;
}

}  // namespace

int LoadedBabiModel::serve_check(const json& r, const ServeLimits& limits) const {
  serve_json::check_object(r);
  parse(request_line(r, limits));  // as answer() will read it: no question, a sentence too long for J fail here
  return 1;
}

std::vector<json> LoadedBabiModel::serve(std::span<const json* const> requests) const {
  const ServeLimits unlimited{1 << 30, 1 << 20, 1, 1, 1};  // checked by serve_check
  std::vector<json> out;
  for (const json* r : requests) {
    const Answer a = answer(request_line(*r, unlimited));
    const Memn2nExplanation& e = a.explanation;
    // Slot j of the window is story sentence first + j; sentences before the window get 0.
    const int end = static_cast<int>(a.story.size());
    const int first = std::max(0, end - cfg.memn2n.memory_size) + e.offset;
    json hops = json::array();
    for (const std::vector<float>& att : e.attention) {
      std::vector<float> row(a.story.size(), 0.0f);
      for (int j = 0; first + j < end && j < static_cast<int>(att.size()); ++j) row[first + j] = att[j];
      hops.push_back(std::move(row));
    }
    out.push_back({{"answer", a.answer}, {"probability", e.probability}, {"story", a.story}, {"hops", std::move(hops)}});
  }
  return out;
}

}  // namespace engram::models
