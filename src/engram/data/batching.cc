// Length-bucketed token-budget batching and time-major collation (see batching.h).
#include "engram/data/batching.h"

#include <algorithm>
#include <numeric>

#include "engram/core/error.h"
#include "engram/data/vocab.h"

namespace engram::data {

int64_t example_steps(const Example& e) {
  return std::max(static_cast<int64_t>(e.src.size()), static_cast<int64_t>(e.tgt.size()) + 1);
}

std::vector<std::vector<int64_t>> plan_batches(const std::vector<Example>& examples,
                                               const BatchOptions& o, core::Rng* rng) {
  ENGRAM_CHECK(o.max_tokens > 0, "batching: max_tokens must be > 0, got {}", o.max_tokens);
  ENGRAM_CHECK(o.max_sentences >= 0, "batching: max_sentences must be >= 0, got {}",
               o.max_sentences);
  ENGRAM_CHECK(!o.shuffle || rng != nullptr, "batching: shuffle needs an Rng");
  std::vector<int64_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  if (o.shuffle) rng->shuffle(order.begin(), order.end());
  if (o.sort_by_length) {
    // Stable: ties keep the shuffled order, so the result depends only on the rng state.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const auto& ea = examples[a];
      const auto& eb = examples[b];
      const int64_t sa = example_steps(ea), sb = example_steps(eb);
      if (sa != sb) return sa < sb;
      if (ea.tgt.size() != eb.tgt.size()) return ea.tgt.size() < eb.tgt.size();
      return ea.src.size() < eb.src.size();
    });
  }
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  int64_t current_steps = 0;
  for (int64_t i : order) {
    const int64_t steps = example_steps(examples[i]);
    ENGRAM_CHECK(
        steps <= o.max_tokens,
        "batching: example {} needs {} steps, more than max_tokens {} (filter by length first)", i,
        steps, o.max_tokens);
    const int64_t new_steps = std::max(current_steps, steps);
    const int64_t new_size = static_cast<int64_t>(current.size()) + 1;
    const bool over_budget = new_size * new_steps > o.max_tokens;
    const bool over_count = o.max_sentences > 0 && new_size > o.max_sentences;
    if (!current.empty() && (over_budget || over_count)) {
      batches.push_back(std::move(current));
      current.clear();
      current_steps = 0;
    }
    current.push_back(i);
    current_steps = std::max(current_steps, steps);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  if (o.shuffle) rng->shuffle(batches.begin(), batches.end());
  return batches;
}

Batch collate(const std::vector<Example>& examples, std::span<const int64_t> indices) {
  ENGRAM_CHECK(!indices.empty(), "batching: collate needs at least one example");
  Batch b;
  b.batch_size = static_cast<int64_t>(indices.size());
  for (int64_t i : indices) {
    ENGRAM_CHECK(i >= 0 && i < static_cast<int64_t>(examples.size()),
                 "batching: index {} out of range [0, {})", i, examples.size());
    b.src_steps = std::max(b.src_steps, static_cast<int64_t>(examples[i].src.size()));
    b.tgt_steps = std::max(b.tgt_steps, static_cast<int64_t>(examples[i].tgt.size()) + 1);
  }
  const int64_t B = b.batch_size;
  b.src.assign(b.src_steps * B, kPadId);
  b.tgt_in.assign(b.tgt_steps * B, kPadId);
  b.tgt_out.assign(b.tgt_steps * B, kPadId);
  for (int64_t col = 0; col < B; ++col) {
    const Example& e = examples[indices[col]];
    b.index.push_back(indices[col]);
    b.src_len.push_back(static_cast<int32_t>(e.src.size()));
    b.tgt_len.push_back(static_cast<int32_t>(e.tgt.size()) + 1);
    for (size_t t = 0; t < e.src.size(); ++t) b.src[t * B + col] = e.src[t];
    b.tgt_in[col] = kGoId;
    for (size_t t = 0; t < e.tgt.size(); ++t) {
      b.tgt_in[(t + 1) * B + col] = e.tgt[t];
      b.tgt_out[t * B + col] = e.tgt[t];
    }
    b.tgt_out[e.tgt.size() * B + col] = kEosId;
  }
  return b;
}

}  // namespace engram::data
