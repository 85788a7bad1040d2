// The encoder's attention memory kept in a decoder state (decode/state_buffers.h): the memory of
// the state's N rows (at first the encoded batch, row b = source b), re-gathered only when the
// rows' source mapping changes (beam expansion and compaction), not when the beams of one source
// are reordered. The seq2seq, pointer-generator and speech StepModels keep theirs in one.
// Dims: B sources, N rows, S source steps, C value width, K key width.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engram/decode/state_buffers.h"
#include "engram/nn/attention.h"

namespace engram::models {

struct EncodedMemory {
  EncodedMemory() = default;
  EncodedMemory(const EncodedMemory&) = delete;
  EncodedMemory& operator=(const EncodedMemory&) = delete;
  // The large buffers go to this thread's spares (decode::give_buffer) for the next batch.
  ~EncodedMemory() {
    for (std::vector<float>* v : {&values, &keys}) decode::give_buffer(*v);
  }

  int src_len = 0, width = 0, key_dim = 0;  // S, C, K (0: the keys are the values)
  std::vector<int32_t> rows;                // [N] the source each row reads
  // [N, S, C], [N, S, K], [N, S]: the memory of the current rows (at first the encoded batch).
  std::vector<float> values, keys, mask;

  // Row b reads source b of `batch`; `m` (null: no memory, only the rows) is copied out of its graph.
  void init(int batch, const nn::AttentionMemory* m) {
    for (int b = 0; b < batch; ++b) rows.push_back(b);
    if (!m) return;
    src_len = m->values.shape()[1];
    width = m->values.shape()[2];
    decode::store(values, m->values, true);
    if (m->keys.id != m->values.id) decode::store(keys, m->keys, true), key_dim = m->keys.shape()[2];
    mask.assign(m->mask, m->mask + int64_t{batch} * src_len);
  }
  // The current rows' mask [N, S] (valid while the buffers are unchanged).
  const float* mask_rows() const { return mask.data(); }
  // The current rows' memory as graph inputs (valid while the buffers are unchanged).
  nn::AttentionMemory view(core::Graph& g) {
    const int n = static_cast<int>(rows.size());
    nn::AttentionMemory m{decode::view(g, values, {n, src_len, width}), {}, mask_rows(), n, src_len};
    m.keys = key_dim ? decode::view(g, keys, {n, src_len, key_dim}) : m.values;
    return m;
  }
  // New row i = old row next[i]. True when the rows' sources changed and the memory was
  // re-gathered (a state re-gathers its own per-source buffers by `rows` then). Every old row of
  // a source holds the same memory, so new row i copies nothing when old row i holds its source,
  // else the last old row of its source when that is at or after i (rows of later sources moved
  // down into gaps, or whole sentences' blocks moved from the end into them: decode::gather then
  // moves those rows within the buffers), else old row next[i] (beam expansion: through a second
  // buffer).
  bool reorder(std::span<const int32_t> next) {
    const size_t n = next.size();
    std::vector<int32_t> sources(n);
    for (size_t i = 0; i < n; ++i) sources[i] = rows[next[i]];
    if (sources == rows) return false;  // beams reordered within their sources: memory unchanged
    int32_t max_source = 0;
    for (int32_t r : rows) max_source = std::max(max_source, r);
    std::vector<int32_t> last(static_cast<size_t>(max_source) + 1, -1);  // by source: its last old row
    for (size_t j = 0; j < rows.size(); ++j) last[rows[j]] = static_cast<int32_t>(j);
    std::vector<int32_t> from(n);  // [N] the old row new row i copies
    for (size_t i = 0; i < n; ++i) {
      const int32_t s = sources[i];
      const auto at = static_cast<int32_t>(i);
      from[i] = i < rows.size() && rows[i] == s ? at : last[s] >= at ? last[s] : next[i];
    }
    rows.swap(sources);
    decode::gather(values, values, from, int64_t{src_len} * width, true);
    decode::gather(keys, keys, from, int64_t{src_len} * key_dim, true);
    decode::gather(mask, mask, from, src_len);
    return true;
  }
};

}  // namespace engram::models
