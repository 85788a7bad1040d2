// SentencePiece training and encoding (see spm.h). Training reads lines through data::read_lines
// and feeds them to the trainer with a SentenceIterator, so paths never go through SentencePiece's
// comma-separated --input flag and errors name our file:line.
#include "engram/data/spm.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "engram/core/error.h"
#include "engram/core/read_file.h"
#include "engram/data/text.h"
#include "engram/data/vocab.h"

namespace engram::data {
namespace {

class LinesIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LinesIterator(const std::vector<std::string>* lines) : lines_(lines) {}
  bool done() const override { return i_ >= lines_->size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return (*lines_)[i_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>* lines_;
  size_t i_ = 0;
};

const char* type_name(SpmModelType t) {
  switch (t) {
    case SpmModelType::kUnigram:
      return "unigram";
    case SpmModelType::kBpe:
      return "bpe";
    case SpmModelType::kChar:
      return "char";
    case SpmModelType::kWord:
      return "word";
  }
  return "unigram";
}

void write_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    ENGRAM_CHECK(out.good(), "{}: cannot open for writing", tmp);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    ENGRAM_CHECK(out.good(), "{}: write error", tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  ENGRAM_CHECK(!ec, "cannot rename {} to {}: {}", tmp, path, ec.message());
}

}  // namespace

void train_spm_from_lines(const std::vector<std::string>& all_lines, const std::string& model_path,
                          const SpmTrainOptions& o) {
  ENGRAM_CHECK(o.vocab_size > kNumSpecial, "spm: vocab_size {} must exceed the {} special ids",
               o.vocab_size, kNumSpecial);
  ENGRAM_CHECK(o.character_coverage > 0 && o.character_coverage <= 1,
               "spm: character_coverage {} must be in (0, 1]", o.character_coverage);
  std::vector<std::string> lines;
  for (const auto& l : all_lines) {
    if (!l.empty()) lines.push_back(l);
  }
  ENGRAM_CHECK(!lines.empty(), "spm: no non-empty training lines");
  if (o.max_sentences > 0 && static_cast<int64_t>(lines.size()) > o.max_sentences) {
    std::vector<std::string> subset;
    subset.reserve(o.max_sentences);
    const double stride = static_cast<double>(lines.size()) / o.max_sentences;
    for (int64_t k = 0; k < o.max_sentences; ++k) {
      subset.push_back(std::move(lines[static_cast<size_t>(k * stride)]));
    }
    lines = std::move(subset);
  }
  const std::unordered_map<std::string, std::string> kwargs = {
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", type_name(o.model_type)},
      {"character_coverage", std::to_string(o.character_coverage)},
      {"num_threads", std::to_string(o.num_threads)},
      {"pad_id", std::to_string(kPadId)},
      {"unk_id", std::to_string(kUnkId)},
      {"bos_id", std::to_string(kGoId)},
      {"eos_id", std::to_string(kEosId)},
      {"pad_piece", std::string(kPadToken)},
      {"unk_piece", std::string(kUnkToken)},
      {"bos_piece", std::string(kGoToken)},
      {"eos_piece", std::string(kEosToken)},
      {"minloglevel", "2"},  // training logs only errors
  };
  LinesIterator it(&lines);
  std::string proto;
  const auto status = sentencepiece::SentencePieceTrainer::Train(kwargs, &it, &proto);
  ENGRAM_CHECK(status.ok(), "spm: training {} failed: {}", model_path, status.ToString());
  write_atomically(model_path, proto);
}

void train_spm(const std::vector<std::string>& input_files, const std::string& model_path,
               const SpmTrainOptions& options) {
  ENGRAM_CHECK(!input_files.empty(), "spm: no input files");
  std::vector<std::string> lines;
  for (const auto& f : input_files) {
    auto file_lines = read_lines(f);
    lines.insert(lines.end(), std::make_move_iterator(file_lines.begin()),
                 std::make_move_iterator(file_lines.end()));
  }
  train_spm_from_lines(lines, model_path, options);
}

SpmModel::SpmModel() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SpmModel::SpmModel(SpmModel&&) noexcept = default;
SpmModel& SpmModel::operator=(SpmModel&&) noexcept = default;
SpmModel::~SpmModel() = default;

SpmModel SpmModel::load(const std::string& path) {
  SpmModel m;
  m.path_ = path;
  const std::string bytes = core::read_file_limited(path, kMaxSpmFileBytes, "a SentencePiece model file");
  const auto status = m.sp_->LoadFromSerializedProto(bytes);
  ENGRAM_CHECK(status.ok(), "{}: not a SentencePiece model: {}", path, status.ToString());
  const std::string_view expected[] = {kPadToken, kUnkToken, kGoToken, kEosToken};
  ENGRAM_CHECK(m.size() > kNumSpecial, "{}: only {} pieces", path, m.size());
  for (int32_t i = 0; i < kNumSpecial; ++i) {
    ENGRAM_CHECK(m.sp_->IdToPiece(i) == expected[i],
                 "{}: id {} is '{}', expected '{}' (train it with engram's train_spm so that "
                 "<pad>, <unk>, <go>, <eos> are ids 0..3)",
                 path, i, m.sp_->IdToPiece(i), expected[i]);
  }
  return m;
}

int32_t SpmModel::size() const { return sp_->GetPieceSize(); }

const std::string& SpmModel::piece(int32_t id) const {
  ENGRAM_CHECK(id >= 0 && id < size(), "{}: id {} out of range [0, {})", path_, id, size());
  return sp_->IdToPiece(id);
}

int32_t SpmModel::id(std::string_view piece) const { return sp_->PieceToId(piece); }

std::vector<int32_t> SpmModel::encode(std::string_view text, bool add_go, bool add_eos) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  ENGRAM_CHECK(status.ok(), "{}: encode failed: {}", path_, status.ToString());
  std::vector<int32_t> out;
  out.reserve(ids.size() + 2);
  if (add_go) out.push_back(kGoId);
  out.insert(out.end(), ids.begin(), ids.end());
  if (add_eos) out.push_back(kEosId);
  return out;
}

std::vector<std::string> SpmModel::encode_pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  const auto status = sp_->Encode(text, &pieces);
  ENGRAM_CHECK(status.ok(), "{}: encode failed: {}", path_, status.ToString());
  return pieces;
}

std::string SpmModel::decode(const std::vector<int32_t>& ids) const {
  std::vector<int> kept;
  for (int32_t i : ids) {
    if (i == kEosId) break;
    if (i == kPadId || i == kGoId) continue;
    ENGRAM_CHECK(i >= 0 && i < size(), "{}: id {} out of range [0, {})", path_, i, size());
    kept.push_back(i);
  }
  std::string text;
  const auto status = sp_->Decode(kept, &text);
  ENGRAM_CHECK(status.ok(), "{}: decode failed: {}", path_, status.ToString());
  return text;
}

std::string SpmModel::decode_pieces(const std::vector<std::string>& pieces) const {
  std::string text;
  const auto status = sp_->Decode(pieces, &text);
  ENGRAM_CHECK(status.ok(), "{}: decode failed: {}", path_, status.ToString());
  return text;
}

}  // namespace engram::data
