// The bAbI route of the server over the inference contract (inference.h): one story and question
// per request, read once as run_line reads its text; the stories of a batch run through the model
// as one batch; the reply carries the attention of every hop over the story's sentences.
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

const InferenceSpec& LoadedBabiModel::inference() const {
  static const InferenceSpec spec{{"story", "question"}, {{"batch", "precision"}, {}}};
  return spec;
}

std::unique_ptr<Request> LoadedBabiModel::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<Parsed>(body, inference(), family(), limits, [&](const json& r) {
    // As answer() reads it: no question, a sentence too long for J fail here.
    return std::vector<Parsed>{parse(request_line(r, limits))};
  });
}

std::vector<json> LoadedBabiModel::run_requests(std::span<const Request* const> requests) const {
  auto run = [&](std::span<const Parsed* const> inputs, const decode::DecodeOptions&) {
    std::vector<data::BabiSample> samples;
    for (const Parsed* p : inputs) samples.push_back(p->sample);
    Memn2nDataset set;
    encode_babi(samples, 0, vocab, &set);
    std::vector<int32_t> indices(samples.size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int32_t>(i);
    const std::vector<Memn2nExplanation> es = explain_memn2n(models(), set, indices);
    std::vector<json> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::vector<std::string>& story = inputs[i]->story;
      const Memn2nExplanation& e = es[i];
      // Slot j of the window is story sentence first + j; sentences before the window get 0.
      const int end = static_cast<int>(story.size());
      const int first = std::max(0, end - cfg.memn2n.memory_size) + e.offset;
      json hops = json::array();
      for (const std::vector<float>& att : e.attention) {
        std::vector<float> row(story.size(), 0.0f);
        for (int j = 0; first + j < end && j < static_cast<int>(att.size()); ++j) row[first + j] = att[j];
        hops.push_back(std::move(row));
      }
      out.push_back({{"answer", vocab.token(e.predicted)}, {"probability", e.probability}, {"story", story},
                     {"hops", std::move(hops)}});
    }
    return out;
  };
  return models::run_requests<Parsed>(requests, run, single_reply);
}

}  // namespace engram::models
