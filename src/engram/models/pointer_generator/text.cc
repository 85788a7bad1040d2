// The pointer-generator's vocabulary file and the extended vocabulary of one example.
#include "engram/models/pointer_generator/text.h"

#include <filesystem>

#include "engram/core/error.h"

namespace engram::models {

std::string PointerGeneratorConfig::file_name() const { return unit == TokenUnit::kSpm ? "vocab.spm" : "vocab.txt"; }

TextCodec PointerGeneratorConfig::load(const std::string& dir) const {
  return TextCodec::load({.unit = unit, .lowercase = lowercase}, (std::filesystem::path(dir) / file_name()).string(),
                         "the pointer-generator's vocabulary");
}

TextCodec PointerGeneratorConfig::build(const std::vector<std::string>& lines, const std::string& dir) const {
  return TextCodec::build({.unit = unit, .lowercase = lowercase, .vocab_size = vocab_size, .min_count = min_count},
                          lines, (std::filesystem::path(dir) / file_name()).string());
}

ExtendedSource extend_source(const TextCodec& codec, std::string_view text, int max_tokens) {
  ExtendedSource s;
  s.tokens = codec.tokens(text);
  if (max_tokens > 0 && static_cast<int>(s.tokens.size()) > max_tokens) s.tokens.resize(max_tokens);
  const int32_t v = codec.size();
  for (const std::string& t : s.tokens) {
    const int32_t id = codec.id(t);
    if (id != data::kUnkId || t == data::kUnkToken) {
      s.ids.push_back(id);
      continue;
    }
    int32_t k = 0;
    while (k < static_cast<int32_t>(s.oovs.size()) && s.oovs[k] != t) ++k;
    if (k == static_cast<int32_t>(s.oovs.size())) s.oovs.push_back(t);
    s.ids.push_back(v + k);
  }
  return s;
}

std::vector<int32_t> extend_target(const TextCodec& codec, const std::vector<std::string>& tokens,
                                   const ExtendedSource& src) {
  std::vector<int32_t> out;
  const int32_t v = codec.size();
  for (const std::string& t : tokens) {
    int32_t id = codec.id(t);
    if (id == data::kUnkId && t != data::kUnkToken)
      for (size_t k = 0; k < src.oovs.size(); ++k)
        if (src.oovs[k] == t) id = v + static_cast<int32_t>(k);
    out.push_back(id);
  }
  return out;
}

std::vector<std::string> output_tokens(const TextCodec& codec, const std::vector<int32_t>& ids,
                                       const ExtendedSource& src) {
  std::vector<std::string> out;
  const int32_t v = codec.size(), x = static_cast<int32_t>(src.oovs.size());
  for (int32_t id : ids) {
    if (id == data::kEosId) break;
    if (id == data::kPadId || id == data::kGoId) continue;
    ENGRAM_CHECK(id >= 0 && id < v + x, "pointer_generator: output id {} outside the extended vocabulary [0, {})", id,
                 v + x);
    out.push_back(id < v ? codec.token(id) : src.oovs[id - v]);
  }
  return out;
}

}  // namespace engram::models
