// SentencePiece subword vocabulary (libsentencepiece): train a model from text files, load it,
// encode text to ids or pieces, decode back. Models are trained with the project's special ids
// (<pad>=0, <unk>=1, <go>=2 as BOS, <eos>=3, the same strings as data::Vocab), so a subword model
// and a word Vocab are interchangeable for the models. The model file (conventionally "*.spm") is
// SentencePiece's own serialized ModelProto, loadable by any SentencePiece binding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace engram::data {

enum class SpmModelType { kUnigram, kBpe, kChar, kWord };

struct SpmTrainOptions {
  int vocab_size = 8000;
  SpmModelType model_type = SpmModelType::kUnigram;
  double character_coverage = 1.0;  // 0.9995 is usual for Chinese/Japanese-rich text
  int64_t max_sentences = 0;        // >0: train on an evenly strided subset of this many lines
  int num_threads = 1;              // 1 keeps training bit-for-bit reproducible
};

// Trains on the non-empty lines of input_files (validated UTF-8, .gz as in read_lines) and writes
// the model to model_path (via a temporary file + rename: never half-written). Training is
// deterministic for the same files and options. Throws engram::Error with SentencePiece's message
// on failure (e.g. a vocab_size larger than the text supports).
void train_spm(const std::vector<std::string>& input_files, const std::string& model_path,
               const SpmTrainOptions& options = {});
// Same from lines already in memory.
void train_spm_from_lines(const std::vector<std::string>& lines, const std::string& model_path,
                          const SpmTrainOptions& options = {});

// The largest SentencePiece model file SpmModel::load reads (docs/limits.md).
inline constexpr uint64_t kMaxSpmFileBytes = uint64_t{64} << 20;

class SpmModel {
 public:
  // Reads at most kMaxSpmFileBytes; checks that ids 0..3 are <pad>, <unk>, <go>, <eos>.
  static SpmModel load(const std::string& path);
  SpmModel(SpmModel&&) noexcept;
  SpmModel& operator=(SpmModel&&) noexcept;
  ~SpmModel();

  int32_t size() const;
  const std::string& piece(int32_t id) const;  // throws on an out-of-range id
  int32_t id(std::string_view piece) const;    // kUnkId when absent

  std::vector<int32_t> encode(std::string_view text, bool add_go = false,
                              bool add_eos = false) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  // Text of ids up to (not including) the first <eos>; <pad> and <go> are skipped.
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string decode_pieces(const std::vector<std::string>& pieces) const;

 private:
  SpmModel();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string path_;
};

}  // namespace engram::data
