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
  SearchOptions o = options;
  core::Rng seeds(options.seed);  // chunk c > 0 samples from the c-th draw, chunk 0 from the seed
  for (size_t first = 0; first < order.size(); first += static_cast<size_t>(batch)) {
    const size_t n = std::min(order.size() - first, static_cast<size_t>(batch));
    const std::span<const size_t> chunk(order.data() + first, n);
    if (first > 0) o.seed = seeds.next();
    std::vector<std::vector<Hypothesis>> hyps = search(g, model, make(chunk), o);
    ENGRAM_CHECK(hyps.size() == n, "decoding: {} results for {} inputs", hyps.size(), n);
    for (size_t i = 0; i < n; ++i) out[chunk[i]] = std::move(hyps[i]);
  }
  return out;
}

}  // namespace engram::decode
