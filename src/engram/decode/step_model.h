// StepModel: the one interface every search (greedy, beam, sampling) is written against. A model
// encodes a batch of sources into a decoder state it owns, then advances that state one target
// token at a time, returning log-probabilities over the next token; reorder() selects (and
// repeats) state rows, which is how beams are expanded, reordered and compacted.
// Seq2Seq implements it; PointerNet and PointerGenerator can too. Header-only on purpose: models
// implement it without linking the search code.
// Dims: B sentences in the batch, S source steps, N state rows (B at the start, B*K with K
// beams, fewer as sentences finish), V next-token classes (target vocab, or S for pointers),
// F source feature width.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/graph.h"

namespace engram::decode {

// The source side of a decoding batch: token ids for text models, feature vectors for models
// over points; a model reads whichever it needs.
struct SourceBatch {
  int batch = 0;                 // B
  int steps = 0;                 // S = max source length
  std::vector<int32_t> ids;      // [S, B] time-major, padded with 0 (<pad>)
  std::vector<int32_t> lengths;  // [B] true source lengths
  std::vector<float> features{};   // [S, B, F] time-major, zero padded (feature models only)
  int feature_dim = 0;           // F
  // Target prefixes (CTranslate2's target_prefix): [B] output tokens forced first, then free
  // decoding; empty (no entry, or an empty one) = none. <eos> may not appear in one.
  std::vector<std::vector<int32_t>> prefixes{};
  // The target classes this batch may emit, sorted and unique (a lexical shortlist,
  // models/seq2seq/shortlist.h); every other class gets log-probability -inf. Empty = all. Only
  // models that restrict their output layer read it (Seq2Seq); callers set it for those only.
  std::vector<int32_t> output_ids{};

  // Pads id sequences into a time-major batch.
  static SourceBatch from_ids(const std::vector<std::vector<int32_t>>& seqs) {
    SourceBatch b;
    b.batch = static_cast<int>(seqs.size());
    for (const auto& s : seqs) b.steps = std::max(b.steps, static_cast<int>(s.size()));
    b.ids.assign(static_cast<size_t>(b.steps) * b.batch, 0);
    for (int i = 0; i < b.batch; ++i) {
      b.lengths.push_back(static_cast<int32_t>(seqs[i].size()));
      for (size_t t = 0; t < seqs[i].size(); ++t) b.ids[t * b.batch + i] = seqs[i][t];
    }
    return b;
  }
};

// A model's decoder state for N rows. It owns its data (plain buffers, not graph Vars), so the
// search may reset the graph between steps and the arena never grows with the output length.
class DecodeState {
 public:
  virtual ~DecodeState() = default;
  virtual int rows() const = 0;  // N
};

// `s` as the model's own state type T; another model's state is an error naming `model`.
template <class T>
T& state_as(DecodeState& s, const char* model) {
  auto* st = dynamic_cast<T*>(&s);
  ENGRAM_CHECK(st != nullptr, "{}: decode state of another model", model);
  return *st;
}

// What one step returns: views into the graph's arena or the state, valid until the graph is reset
// or the next step. The search may set entries of log_probs to -inf (its masks and forced prefix
// tokens, decode/search.h) and restore entries it masked, and writes nothing else there: a model
// may keep log_probs in its state and rely on its -inf entries staying (Seq2Seq's shortlist).
// V may differ from one batch to the next (a copy model's target vocabulary plus the batch's
// source words); the search reads it from every step.
struct StepOutput {
  core::Tensor log_probs;  // [N, V] log p(y_t | y_<t, x), each row normalised
  core::Tensor alignment;  // [N, S] attention weights of this step; data == nullptr if none
  core::Tensor gate{};     // [N] a value of this step recorded beside the alignment (the pointer-generator's
                           // p_gen); data == nullptr if none
};

class StepModel {
 public:
  virtual ~StepModel() = default;
  virtual int32_t go_id() const = 0;   // first input token (<go>)
  virtual int32_t eos_id() const = 0;  // the token that ends a hypothesis (<eos>)

  // Runs the encoder over `src` and returns the initial decoder state, one row per sentence
  // (row b = sentence b). Works on a graph without gradients; `g` may be reset afterwards.
  virtual std::unique_ptr<DecodeState> encode(core::Graph& g, const SourceBatch& src) const = 0;
  // Feeds prev_ids [N] (the tokens chosen at the previous step, <go> first) and advances the
  // state in place. The result lives in `g`; the caller resets `g` between steps.
  virtual StepOutput step(core::Graph& g, DecodeState& state, std::span<const int32_t> prev_ids) const = 0;
  // New row i = old row rows[i] (rows may repeat or drop rows): the state's row count becomes
  // rows.size().
  virtual void reorder(DecodeState& state, std::span<const int32_t> rows) const = 0;
};

}  // namespace engram::decode
