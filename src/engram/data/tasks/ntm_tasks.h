// Neural Turing Machine benchmark tasks (Graves et al. 2014, section 4): copy, repeat copy and
// associative recall, generated as time-major batches of binary vectors from a core::Rng.
//
// Dims: T steps, B batch, W input channels, K target channels. One sequence length (item count)
// is drawn per batch, every example gets its own random bits.
#pragma once

#include <cstdint>
#include <vector>

#include "engram/core/rng.h"

namespace engram::data::tasks {

struct SeqBatch {
  int64_t steps = 0;          // T
  int64_t batch = 0;          // B
  int64_t in_width = 0;       // W
  int64_t out_width = 0;      // K
  std::vector<float> input;   // [T, B, W]
  std::vector<float> target;  // [T, B, K]
  std::vector<float> mask;    // [T, B] 1 on steps whose output is scored, else 0
  float in(int64_t t, int64_t b, int64_t w) const { return input[(t * batch + b) * in_width + w]; }
  float tgt(int64_t t, int64_t b, int64_t k) const {
    return target[(t * batch + b) * out_width + k];
  }
  float msk(int64_t t, int64_t b) const { return mask[t * batch + b]; }
};

// Copy: L random `bits`-bit vectors, then one delimiter step (channel `bits` = 1, W = bits + 1),
// then L steps of zero input while the target is the L vectors again (K = bits).
// T = 2L + 1, mask = 1 on the last L steps.
struct CopyOptions {
  int bits = 8;
  int min_len = 1;
  int max_len = 20;
};
SeqBatch make_copy_batch(const CopyOptions& options, int64_t batch, core::Rng& rng);

// Repeat copy: L random vectors, then one step with the delimiter (channel bits) = 1 and the
// repeat count R on its own channel (bits + 1), normalised to mean 0 / variance 1 over the uniform
// count range (0 when min_repeat == max_repeat); W = bits + 2. Then L*R + 1 zero-input steps
// whose target is the sequence R times followed by an end marker on channel `bits` (K = bits + 1).
// T = L + 1 + L*R + 1, mask = 1 on the last L*R + 1 steps. One R is drawn per batch.
struct RepeatCopyOptions {
  int bits = 8;
  int min_len = 1;
  int max_len = 10;
  int min_repeat = 1;
  int max_repeat = 10;
};
SeqBatch make_repeat_copy_batch(const RepeatCopyOptions& options, int64_t batch, core::Rng& rng);
// The value put on the repeat channel for count r.
float normalised_repeat(int repeat, const RepeatCopyOptions& options);

// Associative recall: n items of item_len `bits`-bit vectors, each preceded by an item-delimiter
// step (channel bits); then a query-delimiter step (channel bits + 1), one of the first n-1 items
// as the query, a closing query-delimiter step, and item_len zero-input steps whose target is the
// item that followed the query item. W = bits + 2, K = bits, T = n (item_len + 1) + item_len + 2
// + item_len, mask = 1 on the last item_len steps.
struct RecallOptions {
  int bits = 6;
  int item_len = 3;
  int min_items = 2;
  int max_items = 6;
};
SeqBatch make_recall_batch(const RecallOptions& options, int64_t batch, core::Rng& rng);

}  // namespace engram::data::tasks
