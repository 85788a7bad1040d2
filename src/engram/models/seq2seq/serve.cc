// The translate route of the server (Translator::serve_check / serve): requests that share their
// search options are decoded as one batch by translate_lines; each response gets its own rows.
#include <algorithm>
#include <map>
#include <tuple>

#include "engram/core/kernels/blas.h"
#include "engram/models/seq2seq/translate.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;

// The search a request asks for (checked: beam and n-best within the caps, n_best <= beam).
decode::SearchOptions request_search(const json& r, const ServeLimits& limits) {
  decode::SearchOptions o;
  o.beam = serve_json::int_field(r, "beam", 1, 1, limits.max_beam);
  o.n_best = serve_json::int_field(r, "n_best", 1, 1, limits.max_n_best);
  if (!serve_json::find(r, "beam")) o.beam = o.n_best;  // n_best K alone: beam K
  ENGRAM_CHECK(o.n_best <= o.beam, "'n_best' {} must not exceed 'beam' {}", o.n_best, o.beam);
  o.alpha = static_cast<float>(serve_json::number_field(r, "alpha", 0.0, 0.0, 10.0));
  o.alignments = serve_json::bool_field(r, "alignments", false);
  o.validate();
  return o;
}

json alignment_rows(const decode::Hypothesis& h) {
  json rows = json::array();
  const size_t s = static_cast<size_t>(h.src_len);
  for (size_t r = 0; s > 0 && (r + 1) * s <= h.alignment.size(); ++r)
    rows.push_back(std::vector<float>(h.alignment.begin() + r * s, h.alignment.begin() + (r + 1) * s));
  return rows;
}

}  // namespace

int Translator::serve_check(const json& r, const ServeLimits& limits) const {
  serve_json::check_object(r);
  request_search(r, limits);
  const std::vector<std::string> lines = serve_json::strings_field(r, "src", limits.max_items, kMaxLineBytes);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t n = src.encode(lines[i]).size();
    ENGRAM_CHECK(n <= static_cast<size_t>(limits.max_tokens), "'src'[{}] has {} tokens, more than the limit of {}", i,
                 n, limits.max_tokens);
  }
  return static_cast<int>(lines.size());
}

std::vector<json> Translator::serve(std::span<const json* const> requests) const {
  // Requests grouped by their search options; each group is one translate_lines call.
  using Key = std::tuple<int, int, float, bool>;
  std::map<Key, std::vector<size_t>> groups;
  std::vector<decode::SearchOptions> search(requests.size());
  std::vector<std::vector<std::string>> lines(requests.size());
  const ServeLimits unlimited{1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30};  // checked by serve_check
  for (size_t i = 0; i < requests.size(); ++i) {
    search[i] = request_search(*requests[i], unlimited);
    lines[i] = serve_json::strings_field(*requests[i], "src", 1 << 30, kMaxLineBytes);
    const decode::SearchOptions& o = search[i];
    groups[Key{o.beam, o.n_best, o.alpha, o.alignments}].push_back(i);
  }
  std::vector<json> out(requests.size());
  for (const auto& [key, members] : groups) {
    std::vector<std::string> batch;
    for (size_t i : members) batch.insert(batch.end(), lines[i].begin(), lines[i].end());
    TranslateOptions o;
    o.search = search[members.front()];
    // Decoded kSmallRows sentences at a time (sorted by length over the whole batch): those
    // products run on the packed few-row kernel, which beat one product of all the rows by about
    // 2x here (bench/results_serve.md); a beam multiplies the rows anyway.
    o.batch_size = std::min(static_cast<int>(batch.size()), core::kernels::kSmallRows);
    const std::vector<Translation> ts = translate(batch, o);
    size_t next = 0;
    for (size_t i : members) {
      json translations = json::array();
      for (size_t k = 0; k < lines[i].size(); ++k, ++next) {
        const Translation& t = ts[next];
        json hyps = json::array();
        for (size_t h = 0; h < t.nbest.size(); ++h) {
          json one = {{"tgt", t.texts[h]}, {"score", t.nbest[h].score}};
          if (o.search.alignments) {
            one["alignment"] = alignment_rows(t.nbest[h]);
            one["src_tokens"] = t.src_tokens;
            one["tgt_tokens"] = t.tgt_tokens[h];
          }
          hyps.push_back(std::move(one));
        }
        translations.push_back(std::move(hyps));
      }
      out[i] = {{"translations", std::move(translations)}};
    }
  }
  return out;
}

}  // namespace engram::models
