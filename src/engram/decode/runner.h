// The batched runner under every decoding family: inputs decoded in chunks of `batch` sorted by
// length (a chunk is padded to its longest source, so similar lengths waste little), run longest
// first (later, smaller chunks reuse the first one's state storage), each chunk one search
// (greedy, beam: search.h) over one StepModel (a model or an EnsembleStepModel), the results put
// back in the callers' order.
// Dims: I inputs, C inputs of a chunk.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "engram/core/graph.h"
#include "engram/decode/search.h"
#include "engram/decode/step_model.h"

namespace engram::decode {

// Builds the SourceBatch of the inputs `chunk` (indices into the caller's inputs, in batch order).
using MakeSource = std::function<SourceBatch(std::span<const size_t> chunk)>;

// `lengths` [I]: each input's source length (the sort key; equal lengths keep their order).
// Returns, per input in the callers' order, search()'s hypotheses (best first). `g` is reset
// between chunks (pass a grad-disabled graph; its packed / bf16 weights are used). Sampling: the
// first chunk is drawn with options.seed, each later chunk with its own seed derived from it, so
// the rows of different chunks do not share random draws.
std::vector<std::vector<Hypothesis>> run_batched(core::Graph& g, const StepModel& model,
                                                 std::span<const int> lengths, int batch,
                                                 const SearchOptions& options, const MakeSource& make);

}  // namespace engram::decode
