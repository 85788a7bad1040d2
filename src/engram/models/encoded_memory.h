// The encoder's attention memory kept in a decoder state (decode/state_buffers.h): the encoded
// batch's memory, one copy per source that never moves, and the source each of the state's N rows
// reads (at first row b = source b). The attention reads it through that map
// (nn::AttentionMemory::rows), so beam expansion, reorders and dropped rows change the map and the
// rows' mask, never the memory. The seq2seq, pointer-generator and speech StepModels keep theirs
// in one.
// Dims: B sources, N rows, S source steps, C value width, K key width.
#pragma once

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
  int sources = 0;                          // B
  std::vector<int32_t> rows;                // [N] the source each row reads
  std::vector<float> values, keys;          // [B, S, C], [B, S, K]: the encoded batch's memory
  std::vector<float> mask;                  // [N, S]: the current rows' mask

  // Row b reads source b of `batch`; `m` (null: no memory, only the rows) is copied out of its graph.
  void init(int batch, const nn::AttentionMemory* m) {
    for (int b = 0; b < batch; ++b) rows.push_back(b);
    sources = batch;
    if (!m) return;
    src_len = m->values.shape()[1];
    width = m->values.shape()[2];
    decode::store(values, m->values, true);
    if (m->keys.id != m->values.id) decode::store(keys, m->keys, true), key_dim = m->keys.shape()[2];
    mask.assign(m->mask, m->mask + int64_t{batch} * src_len);
  }
  // The current rows' mask [N, S] (valid while the buffers are unchanged).
  const float* mask_rows() const { return mask.data(); }
  // The memory as graph inputs, read by the current rows through `rows` (valid while the buffers
  // and the rows are unchanged).
  nn::AttentionMemory view(core::Graph& g) {
    const int n = static_cast<int>(rows.size());
    nn::AttentionMemory m{decode::view(g, values, {sources, src_len, width}), {}, mask_rows(), n, src_len,
                          rows.data()};
    m.keys = key_dim ? decode::view(g, keys, {sources, src_len, key_dim}) : m.values;
    return m;
  }
  // New row i = old row next[i]. True when the rows' sources changed (a state re-gathers its own
  // per-source buffers by `rows` then); the memory stays where it is, only the rows' mask moves.
  bool reorder(std::span<const int32_t> next) {
    std::vector<int32_t> now(next.size());
    for (size_t i = 0; i < next.size(); ++i) now[i] = rows[next[i]];
    if (now == rows) return false;  // beams reordered within their sources: the mask is the same
    rows.swap(now);
    decode::gather(mask, mask, next, src_len);
    return true;
  }
};

}  // namespace engram::models
