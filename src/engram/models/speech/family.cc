// The speech family's registry entry: an attention-based recognizer of spoken digits (FSDD) on
// the shared Trainer, and a model directory whose run_line transcribes a WAV file.
#include <fmt/format.h>

#include <filesystem>

#include "engram/io/files.h"
#include "engram/models/registry.h"
#include "engram/models/training.h"
#include "engram/models/speech/eval.h"
#include "engram/models/speech/task.h"

namespace engram::models {

namespace {

std::string train_speech(const YAML::Node& node, const std::string& source, const std::vector<std::string>& sets) {
  const SpeechTrainConfig cfg = read_speech_config(node, source, sets);
  cfg.speech.validate();
  cfg.data.validate();
  return train_config_task(cfg, [&] { return std::make_unique<SpeechTrainTask>(cfg); }, 4,
                           fmt::format("transcribe with: engram speech transcribe -m {} FILE.wav", cfg.train.run_dir));
}

std::unique_ptr<LoadedModel> load_speech(const std::filesystem::path& dir) { return load_speech_model(dir); }

}  // namespace

const Family& speech_family() {
  static const Family f{SpeechModel::kName, "attention-based speech recognition of spoken digits (FSDD)",
                        &dump_read_config<SpeechTrainConfig, &read_speech_config>, &train_speech,
                        &load_speech, "transcribe"};
  return f;
}

}  // namespace engram::models
