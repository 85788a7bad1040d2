// `engram speech transcribe|eval|show` take --precision as the schema gives it to every front end:
// the precision's weights reach the decoder (the attention picture's numbers move from fp32's),
// and a bad precision is an error.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_cli.h"
#include "engram/cli/commands.h"
#include "engram/core/rng.h"
#include "engram/io/checkpoint.h"
#include "engram/models/speech/model.h"
#include "io/temp_dir.h"

namespace engram::cli {
namespace {

using io::testing::TempDir;


TEST(SpeechCli, PrecisionReachesTheDecoder) {
  TempDir dir;
  core::Rng rng(11);
  models::SpeechConfig cfg;
  cfg.embed_dim = cfg.encoder_units = cfg.decoder_hidden = cfg.readout_dim = 8;
  models::SpeechModel model(cfg, rng);
  const std::string path = (dir / "model").string();
  io::save_checkpoint(path, {.model_name = model.name(), .config = model.config(), .params = &model.params(), .optimizer = nullptr, .trainer = {}, .files = {}});
  const std::string wav = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/audio/synth8k.wav";
  auto svg = [&](const std::string& precision) {
    const std::string out = (dir / ("show-" + precision + ".svg")).string();
    testing::run_engram({"speech", "show", "-m", path, wav, "--precision", precision, "-o", out});
    return io::testing::read_bytes(out);
  };
  const std::string fp32 = svg("fp32"), bf16 = svg("bf16"), int8 = svg("int8");
  EXPECT_NE(fp32.find("<svg"), std::string::npos);
  EXPECT_NE(bf16, fp32) << "bf16 weights did not reach the decoder";
  EXPECT_NE(int8, fp32) << "int8 weights did not reach the decoder";
  EXPECT_NE(int8, bf16);
  // transcribe prints "FILE<TAB>digits" in every precision.
  for (const char* p : {"fp32", "bf16", "int8"}) {
    const std::string out = testing::run_engram({"speech", "transcribe", "-m", path, wav, "--precision", p});
    EXPECT_EQ(out.rfind(wav + "\t", 0), 0u) << p;
  }
  EXPECT_ANY_THROW(testing::run_engram({"speech", "transcribe", "-m", path, wav, "--precision", "int4"}));
}

}  // namespace
}  // namespace engram::cli
