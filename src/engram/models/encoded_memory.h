// The encoder's attention memory kept in a decoder state (decode/state_buffers.h): the encoded
// batch (row b = source b) and the memory of the state's N rows, re-gathered only when the rows'
// source mapping changes (beam expansion and compaction), not when the beams of one source are
// reordered. The seq2seq, pointer-generator and speech StepModels keep theirs in one.
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
    for (std::vector<float>* v : {&values, &keys, &values0, &keys0}) decode::give_buffer(*v);
  }

  int src_len = 0, width = 0, key_dim = 0;   // S, C, K (0: the keys are the values)
  std::vector<int32_t> rows;                 // [N] the source each row reads
  // [N, S, C], [N, S, K], [N, S] of the current rows; empty until the first re-gather, while
  // row b is source b and the encoded batch below serves as the rows' memory.
  std::vector<float> values, keys, mask;
  std::vector<float> values0, keys0, mask0;  // the encoded batch

  // Row b reads source b of `batch`; `m` (null: no memory, only the rows) is copied out of its graph.
  void init(int batch, const nn::AttentionMemory* m) {
    for (int b = 0; b < batch; ++b) rows.push_back(b);
    if (!m) return;
    src_len = m->values.shape()[1];
    width = m->values.shape()[2];
    decode::store(values0, m->values, true);
    if (m->keys.id != m->values.id) decode::store(keys0, m->keys, true), key_dim = m->keys.shape()[2];
    mask0.assign(m->mask, m->mask + int64_t{batch} * src_len);
  }
  // The current rows' mask [N, S] (valid while the buffers are unchanged).
  const float* mask_rows() const { return (values.empty() ? mask0 : mask).data(); }
  // The current rows' memory as graph inputs (valid while the buffers are unchanged).
  nn::AttentionMemory view(core::Graph& g) {
    const int n = static_cast<int>(rows.size());
    const bool batch = values.empty();  // no re-gather yet: the encoded batch
    nn::AttentionMemory m{decode::view(g, batch ? values0 : values, {n, src_len, width}), {},
                          mask_rows(), n, src_len};
    m.keys = key_dim ? decode::view(g, batch ? keys0 : keys, {n, src_len, key_dim}) : m.values;
    return m;
  }
  // New row i = old row next[i]. True when the rows' sources changed and the memory was
  // re-gathered (a state re-gathers its own per-source buffers by `rows` then).
  bool reorder(std::span<const int32_t> next) {
    std::vector<int32_t> sources(next.size());
    for (size_t i = 0; i < next.size(); ++i) sources[i] = rows[next[i]];
    if (sources == rows) return false;  // beams reordered within their sources: memory unchanged
    rows.swap(sources);
    // Rows dropped, the others in order: the current rows are compacted in place; the first
    // re-gather, and any other order, copies each row's source from the encoded batch.
    bool rising = !values.empty();
    for (size_t i = 1; i < next.size() && rising; ++i) rising = next[i] > next[i - 1];
    if (rising) {
      decode::gather(values, values, next, int64_t{src_len} * width, true);
      decode::gather(keys, keys, next, int64_t{src_len} * key_dim, true);
      decode::gather(mask, mask, next, src_len);
    } else {
      decode::gather(values0, values, rows, int64_t{src_len} * width, true);
      decode::gather(keys0, keys, rows, int64_t{src_len} * key_dim, true);
      decode::gather(mask0, mask, rows, src_len);
    }
    return true;
  }
};

}  // namespace engram::models
