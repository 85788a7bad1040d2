// run_batched: length-sorted chunks, one search each, results in the callers' order (runner.h).
#include "engram/decode/runner.h"

#include <algorithm>
#include <numeric>

#include "engram/core/error.h"
#include "engram/core/rng.h"

namespace engram::decode {

std::vector<std::vector<Hypothesis>> run_batched(core::Graph& g, const StepModel& model,
                                                 std::span<const int> lengths, int batch,
                                                 const SearchOptions& options, const MakeSource& make) {
  ENGRAM_CHECK(batch >= 1, "decoding: batch {} must be >= 1", batch);
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (batch > 1)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<Hypothesis>> out(lengths.size());
  const size_t chunks = (order.size() + static_cast<size_t>(batch) - 1) / static_cast<size_t>(batch);
  std::vector<uint64_t> seed(chunks, options.seed);  // chunk c > 0 samples from the c-th draw
  core::Rng seeds(options.seed);
  for (size_t c = 1; c < chunks; ++c) seed[c] = seeds.next();
  // Sorted chunks run longest first: the first batch's state buffers are the largest, and every
  // later batch reuses their storage (decode/state_buffers.h) instead of growing into fresh memory.
  // Unsorted (batch 1, e.g. streaming) they run in input order.
  SearchOptions o = options;
  for (size_t k = 0; k < chunks; ++k) {
    const size_t c = batch > 1 ? chunks - 1 - k : k;
    const size_t first = c * static_cast<size_t>(batch);
    const size_t n = std::min(order.size() - first, static_cast<size_t>(batch));
    const std::span<const size_t> chunk(order.data() + first, n);
    o.seed = seed[c];
    std::vector<std::vector<Hypothesis>> hyps = search(g, model, make(chunk), o);
    ENGRAM_CHECK(hyps.size() == n, "decoding: {} results for {} inputs", hyps.size(), n);
    for (size_t i = 0; i < n; ++i) out[chunk[i]] = std::move(hyps[i]);
  }
  return out;
}

}  // namespace engram::decode
