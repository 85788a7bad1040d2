// The transcribe route: a WAV sent as base64 gives the transcription the library gives for the
// file (show_speech: the same search), with each output token's attention; broken base64, a
// file that is not a WAV and a WAV the model cannot read are 400s. There is no golden speech
// model, so the model is a small untrained one written to a temporary directory (its output is
// whatever digits it gives: the route must give the same).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "data/test_util.h"
#include "engram/data/audio.h"
#include "engram/io/checkpoint.h"
#include "engram/models/speech/eval.h"
#include "engram/models/speech/model.h"
#include "serve/serve_util.h"

namespace engram::serve {
namespace {

using namespace testing;

// RFC 4648 base64 with '=' padding.
std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kAlphabet[(v >> k) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    out += kAlphabet[(v >> 18) & 63], out += kAlphabet[(v >> 12) & 63], out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63], out += kAlphabet[(v >> 12) & 63], out += kAlphabet[(v >> 6) & 63], out += '=';
  }
  return out;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ServeSpeech, TranscribeMatchesTheLibraryWithAttention) {
  // RFC 4648 section 10's test vectors for the encoder the test uses.
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  engram::data::testing::TempDir dir;
  core::Rng rng(11);
  models::SpeechConfig cfg;
  cfg.embed_dim = cfg.encoder_units = cfg.decoder_hidden = cfg.readout_dim = 8;
  models::SpeechModel model(cfg, rng);
  const std::string path = dir.file("speech");
  io::save_checkpoint(path, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  RunningServer s(ServeOptions{}, {"digits=" + path});
  httplib::Client c = s.client();
  const std::string golden = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/audio/";
  const std::string wav = golden + "synth8k.wav";
  auto loaded = models::load_model_as<models::LoadedSpeechModel>(path, "speech");
  const models::SpeechShow show = models::show_speech(*loaded, wav);
  auto [status, body] = post(c, "/v1/transcribe", json{{"wav_base64", base64(read_bytes(wav))}});
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body["text"], show.text);
  const size_t digits = body["digits"].size();
  ASSERT_GE(body["attention"].size(), digits);
  ASSERT_LE(body["attention"].size(), digits + 1);  // + <eos> when the model ended the output
  for (const json& row : body["attention"]) {
    double sum = 0;
    for (const json& x : row) sum += x.get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }
  // The spectrogram the explorer draws under the attention: the recording's log-mel frames
  // (the static block of each), which the encoder steps cover frames_per_step at a time.
  const data::audio::Features mel = loaded->fbank->compute(data::audio::read_wav(wav));
  ASSERT_EQ(body["spectrogram"].size(), static_cast<size_t>(mel.frames));
  for (int64_t t = 0; t < mel.frames; ++t) {
    ASSERT_EQ(body["spectrogram"][t].size(), static_cast<size_t>(mel.mel_bins));
    for (int m = 0; m < mel.mel_bins; ++m) EXPECT_EQ(body["spectrogram"][t][m].get<float>(), mel.at(t, m)) << t << " " << m;
  }
  const int64_t per_step = body["frames_per_step"].get<int64_t>();
  ASSERT_FALSE(body["attention"].empty());
  EXPECT_EQ(static_cast<int64_t>(body["attention"][0].size()), (mel.frames + per_step - 1) / per_step)
      << "the encoder steps cover the spectrogram's frames";
  // A target prefix is forced first; a stream sends each digit with its α row, then the reply
  // the route gives without streaming.
  std::tie(status, body) = post(c, "/v1/transcribe", json{{"wav_base64", base64(read_bytes(wav))}, {"target_prefix", "7 3"}});
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_GE(body["digits"].size(), 2u);
  EXPECT_EQ(body["digits"][0], 7);
  EXPECT_EQ(body["digits"][1], 3);
  const json plain = body;
  const httplib::Result r = c.Post(
      "/v1/transcribe", json{{"wav_base64", base64(read_bytes(wav))}, {"target_prefix", "7 3"}, {"stream", true}}.dump(),
      "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  std::vector<json> tokens;
  json result;
  for (size_t at = 0, end; (end = r->body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string block = r->body.substr(at, end - at);
    const size_t nl = block.find('\n');
    const json data = json::parse(block.substr(nl + 7), nullptr, false);
    if (block.rfind("event: token\n", 0) == 0) tokens.push_back(data);
    else if (block.rfind("event: result\n", 0) == 0) result = data;
  }
  EXPECT_EQ(result, plain);
  ASSERT_EQ(tokens.size(), plain["attention"].size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    EXPECT_EQ(tokens[t]["token"], t < plain["digits"].size() ? std::to_string(plain["digits"][t].get<int>()) : "<eos>");
    EXPECT_EQ(tokens[t]["step"], t);
    if (t < plain["digits"].size()) { EXPECT_EQ(tokens[t]["id"], plain["digits"][t]) << "a digit's id is the digit"; }
    ASSERT_EQ(tokens[t]["alpha"].size(), plain["attention"][t].size());
    for (size_t k = 0; k < tokens[t]["alpha"].size(); ++k)
      EXPECT_NEAR(tokens[t]["alpha"][k].get<double>(), plain["attention"][t][k].get<double>(), 1e-6);
  }
  std::tie(status, body) = post(c, "/v1/transcribe", json{{"wav_base64", base64(read_bytes(wav))}, {"target_prefix", "7a"}});
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.value("error", "").find("digits 0-9"), std::string::npos) << body.dump();
  struct Bad {
    std::string base64;
    std::string says;
  };
  for (const Bad& b : std::vector<Bad>{{"UklG*g==", "not base64"},
                                       {"Zm9vYmFy=", "bad padding"},
                                       {base64("hello, not a wav"), "wav"},
                                       {base64(read_bytes(golden + "stereo.wav")), "mono"},
                                       {base64(read_bytes(golden + "truncated.wav")), ""}}) {
    std::tie(status, body) = post(c, "/v1/transcribe", json{{"wav_base64", b.base64}});
    EXPECT_EQ(status, 400) << b.base64.substr(0, 40) << " -> " << body.dump();
    std::string e = body.value("error", "");
    for (char& ch : e) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_NE(e.find(b.says), std::string::npos) << body.dump();
  }
}

}  // namespace
}  // namespace engram::serve
