// The pointer-generator's extended vocabulary of one example, over its one TextCodec shared by
// source and target (words: the most frequent train words, `vocab.txt`; or a SentencePiece model,
// `vocab.spm`; PointerGeneratorConfig::load): the source's tokens outside the vocabulary get temporary
// ids V, V+1, ... in order of first appearance (a token seen twice keeps its id), a target token
// takes its vocabulary id, else the temporary id of the same source token, else <unk>; an output
// id >= V is written as that source token, verbatim.
// Dims: V vocabulary, S source tokens, X = oovs.size() temporary ids of the example.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engram/models/pointer_generator/config.h"
#include "engram/models/text_codec.h"

namespace engram::models {

// One source in extended ids.
struct ExtendedSource {
  std::vector<std::string> tokens;  // [S] display tokens (the source, truncated to max_tokens)
  std::vector<int32_t> ids;         // [S] vocabulary ids, or V + k for oovs[k]
  std::vector<std::string> oovs;    // [X] the source's tokens outside the vocabulary, first seen first
};

// The first `max_tokens` tokens of `text` (0 = all) in extended ids.
ExtendedSource extend_source(const TextCodec& codec, std::string_view text, int max_tokens = 0);
// Target tokens in extended ids: vocabulary id, else V + k of the same source token, else <unk>.
std::vector<int32_t> extend_target(const TextCodec& codec, const std::vector<std::string>& tokens,
                                   const ExtendedSource& src);
// Display tokens of output ids (stopping at <eos>; <pad>/<go> skipped): id < V its token, V + k
// the source's oovs[k]; an id outside [0, V + X) is an error.
std::vector<std::string> output_tokens(const TextCodec& codec, const std::vector<int32_t>& ids,
                                       const ExtendedSource& src);

}  // namespace engram::models
