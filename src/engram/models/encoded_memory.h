// The encoder's attention memory kept in a decoder state (decode/state_buffers.h): the memory of
// the state's N rows (at first the encoded batch, row b = source b), re-gathered only when the
// rows' source mapping changes (beam expansion and compaction), not when the beams of one source
// are reordered. The seq2seq, pointer-generator and speech StepModels keep theirs in one.
// Dims: B sources, N rows, S source steps, C value width, K key width.
#pragma once

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
  // re-gathered (a state re-gathers its own per-source buffers by `rows` then). Dropped rows
  // (next[i] >= i) move within the buffers, only the rows that change place; other orders
  // (beam expansion) go through a second buffer.
  bool reorder(std::span<const int32_t> next) {
    std::vector<int32_t> sources(next.size());
    for (size_t i = 0; i < next.size(); ++i) sources[i] = rows[next[i]];
    if (sources == rows) return false;  // beams reordered within their sources: memory unchanged
    rows.swap(sources);
    decode::gather(values, values, next, int64_t{src_len} * width, true);
    decode::gather(keys, keys, next, int64_t{src_len} * key_dim, true);
    decode::gather(mask, mask, next, src_len);
    return true;
  }
};

}  // namespace engram::models
