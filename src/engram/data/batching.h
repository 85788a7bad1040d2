// Token-budget batching with length bucketing for sequence pairs, and collation into padded
// time-major id matrices. Fully deterministic: the only randomness is the core::Rng passed in.
//
// Dims: B batch, S source length (max in batch), T target steps (max in batch).
// Decoder layout: for a target y_1..y_n, tgt_in = <go> y_1..y_n and tgt_out = y_1..y_n <eos>, so
// T = n + 1 and a loss over tgt_out masked by tgt_len is teacher forcing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engram/core/rng.h"

namespace engram::data {

struct Example {
  std::vector<int32_t> src;  // [S_i] source ids, no <go>/<eos>
  std::vector<int32_t> tgt;  // [n_i] target ids, no <go>/<eos> (may be empty for inference)
};

struct Batch {
  int64_t batch_size = 0;        // B
  int64_t src_steps = 0;         // S = max source length in the batch
  int64_t tgt_steps = 0;         // T = max target length + 1
  std::vector<int32_t> src;      // [S, B] time-major, padded with kPadId
  std::vector<int32_t> src_len;  // [B] true source lengths
  std::vector<int32_t> tgt_in;   // [T, B] <go> y ..., padded with kPadId
  std::vector<int32_t> tgt_out;  // [T, B] y ... <eos>, padded with kPadId
  std::vector<int32_t> tgt_len;  // [B] n_i + 1 (steps that carry a loss)
  std::vector<int64_t> index;    // [B] position of each column in the example list
  int32_t src_at(int64_t t, int64_t b) const { return src[t * batch_size + b]; }
  int32_t tgt_in_at(int64_t t, int64_t b) const { return tgt_in[t * batch_size + b]; }
  int32_t tgt_out_at(int64_t t, int64_t b) const { return tgt_out[t * batch_size + b]; }
};

struct BatchOptions {
  // Budget of padded tokens per batch: B * max(S, T) <= max_tokens for every batch.
  int64_t max_tokens = 4096;
  int64_t max_sentences = 0;   // also cap B; 0 = only the token budget
  bool shuffle = true;         // shuffle ties within a length and the order of batches (needs rng)
  bool sort_by_length = true;  // false: keep example order (e.g. for translating a file in order)
};

// The cost of one example in the budget: max(src length, target length + 1).
int64_t example_steps(const Example& e);

// Groups example indices into batches. Examples are ordered by (example_steps, target length,
// source length) with ties in a shuffled order, packed greedily while the padded size fits the
// budget, and the list of batches is shuffled. An example that alone exceeds max_tokens is an
// error (filter lengths first). rng may be null only when shuffle is false.
std::vector<std::vector<int64_t>> plan_batches(const std::vector<Example>& examples,
                                               const BatchOptions& options, core::Rng* rng);

// Pads and transposes the chosen examples into a time-major Batch.
Batch collate(const std::vector<Example>& examples, std::span<const int64_t> indices);

}  // namespace engram::data
