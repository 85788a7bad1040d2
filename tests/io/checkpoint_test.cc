// Checkpoints: round trip of parameters, optimizer state, config and trainer state (resuming
// gives bit-identical training); every load error; atomic replacement and crash recovery.
#include "engram/io/checkpoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "engram/io/files.h"
#include "engram/optim/clip.h"
#include "engram/optim/optimizers.h"
#include "engram/optim/schedule.h"
#include "io/expect_error.h"
#include "io/temp_dir.h"

namespace engram::io {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::expect_message;
using testing::TempDir;

// A tiny "model": two parameters named like module paths.
void build(nn::ParamStore& s, float scale) {
  auto w = s.add("enc/w", {3, 4});
  auto b = s.add("enc/b", {4});
  for (int64_t i = 0; i < 12; ++i) s.value(w)[i] = scale * (0.1f * i - 0.5f);
  for (int64_t i = 0; i < 4; ++i) s.value(b)[i] = scale * 0.2f * i;
}

// A deterministic, non-linear gradient of the current values.
void compute_grad(nn::ParamStore& s, int64_t step) {
  for (int64_t i = 0; i < s.numel(); ++i) {
    const float x = s.values()[i];
    s.grads()[i] = x * x * x - 0.3f * x + 0.05f * static_cast<float>((i + step) % 5);
  }
}

void train(nn::ParamStore& s, optim::Optimizer& opt, int64_t from, int64_t to) {
  const optim::WarmupInvSqrtLr schedule(0.05f, 3);
  for (int64_t t = from; t < to; ++t) {
    compute_grad(s, t);
    optim::clip_grad_norm(s, 1.0f);
    opt.set_lr(schedule.lr(t));
    opt.step();
  }
}

CheckpointData data_for(const nn::ParamStore& s, const optim::Optimizer* opt, nlohmann::json trainer = nullptr) {
  YAML::Node cfg;
  cfg["hidden"] = 4;
  cfg["cell"] = "gru";
  return {"toy", cfg, &s, opt, std::move(trainer)};
}

TEST(Checkpoint, ResumeIsBitIdenticalToAnUninterruptedRun) {
  TempDir tmp;
  // Uninterrupted: 10 steps.
  nn::ParamStore full;
  build(full, 1.0f);
  optim::Adam full_opt(full, {.weight_decay = 0.01f});
  train(full, full_opt, 0, 10);

  // Interrupted after 4 steps, saved, loaded into fresh objects, continued for 6.
  nn::ParamStore first;
  build(first, 1.0f);
  optim::Adam first_opt(first, {.weight_decay = 0.01f});
  train(first, first_opt, 0, 4);
  save_checkpoint(tmp / "ckpt", data_for(first, &first_opt, {{"step", 4}, {"epoch", 1}, {"best", 0.5}}));

  nn::ParamStore resumed;
  build(resumed, -3.0f);  // different values: all must come from the checkpoint
  optim::Adam resumed_opt(resumed, {.lr = 0.7f, .weight_decay = 0.01f});
  const CheckpointInfo info = load_checkpoint(tmp / "ckpt", resumed, &resumed_opt);
  EXPECT_EQ(info.format_version, kCheckpointFormatVersion);
  EXPECT_EQ(info.model_name, "toy");
  EXPECT_EQ(info.config["hidden"].as<int>(), 4);
  EXPECT_EQ(info.config["cell"].as<std::string>(), "gru");
  EXPECT_TRUE(info.has_optimizer);
  EXPECT_EQ(info.trainer["step"], 4);
  EXPECT_EQ(info.trainer["best"], 0.5);
  EXPECT_EQ(resumed_opt.steps(), 4);
  EXPECT_EQ(resumed_opt.lr(), first_opt.lr());
  train(resumed, resumed_opt, info.trainer["step"].get<int64_t>(), 10);

  ASSERT_EQ(resumed.numel(), full.numel());
  EXPECT_EQ(std::memcmp(resumed.values(), full.values(), sizeof(float) * full.numel()), 0);
  // And the interrupted-then-resumed run did move: it is not the freshly built store.
  nn::ParamStore fresh;
  build(fresh, 1.0f);
  EXPECT_NE(std::memcmp(resumed.values(), fresh.values(), sizeof(float) * fresh.numel()), 0);
}

TEST(Checkpoint, RoundTripWithoutOptimizerOrTrainer) {
  TempDir tmp;
  nn::ParamStore s;
  build(s, 2.0f);
  save_checkpoint(tmp / "m", {"toy", YAML::Node(), &s, nullptr, nullptr});
  EXPECT_TRUE(fs::exists(tmp / "m" / "config.yaml"));
  EXPECT_TRUE(fs::exists(tmp / "m" / "model.safetensors"));
  EXPECT_FALSE(fs::exists(tmp / "m" / "optimizer.safetensors"));
  EXPECT_FALSE(fs::exists(tmp / "m" / "trainer.json"));
  nn::ParamStore t;
  build(t, 0.0f);
  const CheckpointInfo info = load_checkpoint(tmp / "m/", t);
  EXPECT_FALSE(info.has_optimizer);
  EXPECT_TRUE(info.trainer.is_null());
  EXPECT_TRUE(info.config.IsMap());
  EXPECT_EQ(std::memcmp(s.values(), t.values(), sizeof(float) * s.numel()), 0);
  optim::Sgd sgd(t);
  expect_message(error_of([&] { load_checkpoint(tmp / "m", t, &sgd); }), {"no optimizer.safetensors"});
}

TEST(Checkpoint, ParamsFileRoundTripsAndRefusesANonFiniteValueBeforeWriting) {
  TempDir tmp;
  nn::ParamStore s;
  build(s, 2.0f);
  save_params_file(tmp / "p.safetensors", s, {{"k", "v"}});
  EXPECT_FALSE(fs::exists(tmp / ("p.safetensors.tmp-" + std::to_string(::getpid()))));
  nn::ParamStore t;
  build(t, 0.0f);
  load_params_file(tmp / "p.safetensors", t);
  EXPECT_EQ(std::memcmp(s.values(), t.values(), sizeof(float) * s.numel()), 0);
  // A NaN in the last tensor: refused, naming it, and t keeps every value it had.
  s.values()[s.numel() - 1] = std::nanf("");
  save_params_file(tmp / "p.safetensors", s);
  nn::ParamStore u;
  build(u, 3.0f);
  std::vector<float> before(u.values(), u.values() + u.numel());
  expect_message(error_of([&] { load_params_file(tmp / "p.safetensors", u); }), {"non-finite"});
  EXPECT_EQ(std::memcmp(before.data(), u.values(), sizeof(float) * u.numel()), 0);
  nn::ParamStore other;
  other.add("w", {2});
  expect_message(error_of([&] { load_params_file(tmp / "p.safetensors", other); }), {"missing tensor 'w'"});
}

TEST(Checkpoint, CopiesExtraFilesAndRefusesOnesThatWouldReplaceItsOwn) {
  TempDir tmp;
  nn::ParamStore s;
  build(s, 2.0f);
  testing::write_bytes(tmp / "vocab.txt", "<pad>\nhello\n");
  CheckpointData d{"toy", YAML::Node(), &s, nullptr, nullptr};
  d.files = {tmp / "vocab.txt"};
  save_checkpoint(tmp / "m", d);
  std::ifstream in(tmp / "m" / "vocab.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "<pad>\nhello\n");
  d.files = {tmp / "m" / "model.safetensors"};
  expect_message(error_of([&] { save_checkpoint(tmp / "n", d); }), {"would replace the checkpoint's own model.safetensors"});
  EXPECT_FALSE(fs::exists(tmp / "n"));
  d.files = {tmp / "missing.txt"};
  expect_message(error_of([&] { save_checkpoint(tmp / "m", d); }), {"cannot copy", "missing.txt"});
  EXPECT_TRUE(fs::exists(tmp / "m" / "vocab.txt"));  // the previous checkpoint survives
}

class CheckpointErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    build(store_, 1.0f);
    optim::Adam opt(store_);
    save_checkpoint(dir(), data_for(store_, &opt));
  }
  fs::path dir() const { return tmp_ / "ckpt"; }
  std::string model_file() const { return (dir() / "model.safetensors").string(); }
  TempDir tmp_;
  nn::ParamStore store_;
};

TEST_F(CheckpointErrors, MissingTensor) {
  nn::ParamStore s;
  build(s, 1.0f);
  s.add("dec/out", {4, 2});
  expect_message(error_of([&] { load_checkpoint(dir(), s); }),
                 {model_file(), "missing tensor 'dec/out'", "the model expects shape [4, 2]"});
}

TEST_F(CheckpointErrors, UnexpectedExtraTensor) {
  nn::ParamStore s;
  s.add("enc/w", {3, 4});
  expect_message(error_of([&] { load_checkpoint(dir(), s); }),
                 {model_file(), "unexpected tensor 'enc/b' (shape [4])"});
}

TEST_F(CheckpointErrors, ShapeMismatchOverwritesNothing) {
  nn::ParamStore s;
  s.add("enc/b", {4});
  s.add("enc/w", {4, 3});
  s.value(0).fill(7.0f);
  expect_message(error_of([&] { load_checkpoint(dir(), s); }),
                 {model_file(), "tensor 'enc/w' has shape [3, 4] but the model expects [4, 3]"});
  EXPECT_EQ(s.value(0)[0], 7.0f);  // checks come before any copy
}

TEST_F(CheckpointErrors, UnknownFormatVersion) {
  const fs::path cfg = dir() / "config.yaml";
  std::string text = testing::read_bytes(cfg);
  const auto at = text.find("format_version: 1");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 17, "format_version: 99");
  testing::write_bytes(cfg, text);
  nn::ParamStore s;
  build(s, 1.0f);
  expect_message(error_of([&] { load_checkpoint(dir(), s); }),
                 {cfg.string(), "unknown checkpoint format version 99 (this build reads version 1)"});
}

// A checkpoint whose weights hold a NaN or an inf is refused, naming the tensor, and nothing is
// overwritten (issue "Hardening": a NaN checkpoint used to load and translate to blank lines).
TEST_F(CheckpointErrors, NonFiniteWeightsAreRefusedAndOverwriteNothing) {
  for (float bad : {std::nanf(""), INFINITY}) {
    nn::ParamStore broken;
    build(broken, 1.0f);
    broken.value(1).data[2] = bad;
    save_checkpoint(tmp_ / "bad", {.model_name = "m", .config = YAML::Node(YAML::NodeType::Map), .params = &broken});
    nn::ParamStore s;
    build(s, 2.0f);
    const float before = s.value(1).data[2];
    expect_message(error_of([&] { load_checkpoint(tmp_ / "bad", s); }),
                   {"model.safetensors", "tensor '" + s.name(1) + "' holds a non-finite value", "at element 2"});
    EXPECT_EQ(s.value(1).data[2], before);
  }
}

// An optimizer state whose step is not a whole number >= 0 is refused before anything is copied
// (fuzzing found the parameters overwritten before the step was checked).
TEST_F(CheckpointErrors, BadOptimizerStepOverwritesNothing) {
  const fs::path f = dir() / "optimizer.safetensors";
  std::string bytes = testing::read_bytes(f);
  const auto at = bytes.find("\"step\":\"");
  ASSERT_NE(at, std::string::npos);
  const auto end = bytes.find('"', at + 8);
  bytes.replace(at + 8, end - (at + 8), "1.5");  // the header's JSON: same length or not, re-pad below
  // Keep the 8-byte header length consistent: rewrite it for the new header size.
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  n += 3 - (end - (at + 8));
  std::memcpy(bytes.data(), &n, 8);
  testing::write_bytes(f, bytes);
  nn::ParamStore s;
  build(s, 2.0f);
  const float before = s.value(0).data[0];
  optim::Adam opt(s);
  expect_message(error_of([&] { load_checkpoint(dir(), s, &opt); }), {"invalid step count 1.5"});
  EXPECT_EQ(s.value(0).data[0], before);
  EXPECT_EQ(opt.steps(), 0);
}

TEST_F(CheckpointErrors, UnknownTopLevelConfigKey) {
  const fs::path cfg = dir() / "config.yaml";
  testing::write_bytes(cfg, testing::read_bytes(cfg) + "extra: 1\n");
  nn::ParamStore s;
  build(s, 1.0f);
  expect_message(error_of([&] { load_checkpoint(dir(), s); }), {cfg.string(), "unknown top-level key 'extra'"});
}

TEST_F(CheckpointErrors, TruncatedModelFile) {
  const std::string bytes = testing::read_bytes(model_file());
  testing::write_bytes(model_file(), bytes.substr(0, bytes.size() - 8));
  nn::ParamStore s;
  build(s, 1.0f);
  expect_message(error_of([&] { load_checkpoint(dir(), s); }), {model_file(), "tensor 'enc/w'", "truncated"});
}

TEST_F(CheckpointErrors, OptimizerMismatch) {
  nn::ParamStore s;
  build(s, 1.0f);
  optim::Sgd sgd(s, {.momentum = 0.9f});
  expect_message(error_of([&] { load_checkpoint(dir(), s, &sgd); }),
                 {(dir() / "optimizer.safetensors").string(), "holds adam state but the optimizer is sgd"});
  optim::RmsProp rms(s, {.centered = true});
  std::string msg = error_of([&] { load_checkpoint(dir(), s, &rms); });
  expect_message(msg, {"holds adam state"});
}

TEST_F(CheckpointErrors, MissingDirectoryAndFiles) {
  nn::ParamStore s;
  build(s, 1.0f);
  expect_message(error_of([&] { load_checkpoint(tmp_ / "nothing", s); }),
                 {(tmp_ / "nothing").string(), "does not exist"});
  fs::remove(dir() / "model.safetensors");
  expect_message(error_of([&] { load_checkpoint(dir(), s); }), {model_file(), "cannot read"});
  fs::remove(dir() / "config.yaml");
  expect_message(error_of([&] { read_checkpoint_info(dir()); }), {"config.yaml", "missing"});
}

// The names of the entries of `dir` other than `keep`.
std::vector<std::string> siblings(const fs::path& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  return out;
}

TEST(CheckpointAtomic, FailedWriteKeepsThePreviousCheckpoint) {
  TempDir tmp;
  nn::ParamStore v1;
  build(v1, 1.0f);
  save_checkpoint(tmp / "ckpt", data_for(v1, nullptr, {{"step", 1}}));

  nn::ParamStore v2;
  build(v2, 5.0f);
  optim::Adam opt(v2);
  CheckpointSaveOptions crash;
  std::vector<std::string> written;
  crash.on_file_written = [&](const fs::path& p) {
    written.push_back(p.filename().string());
    if (p.filename() == "model.safetensors") throw Error("simulated crash");
  };
  EXPECT_THROW(save_checkpoint(tmp / "ckpt", data_for(v2, &opt, {{"step", 2}}), crash), Error);
  EXPECT_EQ(written, (std::vector<std::string>{"config.yaml", "model.safetensors"}));

  nn::ParamStore loaded;
  build(loaded, 0.0f);
  const CheckpointInfo info = load_checkpoint(tmp / "ckpt", loaded);
  EXPECT_EQ(info.trainer["step"], 1);
  EXPECT_FALSE(info.has_optimizer);
  EXPECT_EQ(std::memcmp(loaded.values(), v1.values(), sizeof(float) * v1.numel()), 0);
  EXPECT_TRUE(siblings(tmp.path(), "ckpt").empty());  // the temp dir was removed
}

TEST(CheckpointAtomic, OverwriteReplacesAndCleansUp) {
  TempDir tmp;
  nn::ParamStore v1, v2;
  build(v1, 1.0f);
  build(v2, 2.0f);
  save_checkpoint(tmp / "ckpt", data_for(v1, nullptr, {{"step", 1}}));
  save_checkpoint(tmp / "ckpt", data_for(v2, nullptr));  // no trainer.json this time
  nn::ParamStore loaded;
  build(loaded, 0.0f);
  const CheckpointInfo info = load_checkpoint(tmp / "ckpt", loaded);
  EXPECT_TRUE(info.trainer.is_null());  // nothing left over from the old directory
  EXPECT_EQ(std::memcmp(loaded.values(), v2.values(), sizeof(float) * v2.numel()), 0);
  EXPECT_TRUE(siblings(tmp.path(), "ckpt").empty());
}

TEST(CheckpointAtomic, RecoversFromACrashBetweenTheRenames) {
  TempDir tmp;
  nn::ParamStore v1;
  build(v1, 3.0f);
  save_checkpoint(tmp / "ckpt", data_for(v1, nullptr));
  // The state a crash leaves after "rename old away" and before "rename new into place".
  fs::rename(tmp / "ckpt", tmp / "ckpt.old-4242");
  fs::create_directory(tmp / "ckpt.tmp-4242");  // the half-moved new one, never used
  nn::ParamStore loaded;
  build(loaded, 0.0f);
  load_checkpoint(tmp / "ckpt", loaded);
  EXPECT_EQ(std::memcmp(loaded.values(), v1.values(), sizeof(float) * v1.numel()), 0);
  EXPECT_TRUE(fs::is_directory(tmp / "ckpt"));
  EXPECT_FALSE(fs::exists(tmp / "ckpt.old-4242"));
  EXPECT_FALSE(recover_checkpoint(tmp / "ckpt"));  // nothing to do now
}

// interrupted_checkpoints names each checkpoint an interrupted save left a .tmp-<pid> or .old-<pid>
// beside, once, whether it exists or not; other entries are not checkpoints.
TEST(CheckpointAtomic, InterruptedCheckpointsAreNamedOnce) {
  TempDir tmp;
  for (const char* d : {"a.tmp-12", "a.old-13", "a", "b.old-7", "c", "step-4.tmp-99", ".tmp-1"})
    fs::create_directories(tmp / d);
  EXPECT_EQ(interrupted_checkpoints(tmp.path()),
            (std::vector<fs::path>{tmp / "a", tmp / "b", tmp / "step-4"}));
}

TEST(CheckpointAtomic, UnwritableTargetFailsCleanly) {
  TempDir tmp;
  testing::write_bytes(tmp / "file", "not a directory");
  nn::ParamStore s;
  build(s, 1.0f);
  const std::string msg = error_of([&] { save_checkpoint(tmp / "file" / "ckpt", data_for(s, nullptr)); });
  expect_message(msg, {"ckpt"});
  EXPECT_EQ(testing::read_bytes(tmp / "file"), "not a directory");
}

// copy_file_atomic (a fine-tuning run's vocabulary): the bytes exactly, an existing target replaced,
// no temporary file left; a missing source is a one-line error naming it and writes nothing.
TEST(CopyFileAtomic, CopiesTheBytesAndNamesAMissingSource) {
  TempDir tmp;
  const std::string bytes("a\0b\nc\xff", 6);
  testing::write_bytes(tmp / "from", bytes);
  testing::write_bytes(tmp / "to", "old contents");
  copy_file_atomic(tmp / "from", tmp / "to", 1 << 20, "a test file");
  EXPECT_EQ(testing::read_bytes(tmp / "to"), bytes);
  EXPECT_EQ(siblings(tmp.path(), "to"), std::vector<std::string>{"from"});  // no temporary left
  expect_message(error_of([&] { copy_file_atomic(tmp / "missing", tmp / "new", 1 << 20, "a test file"); }), {"missing"});
  EXPECT_FALSE(fs::exists(tmp / "new"));
}

}  // namespace
}  // namespace engram::io
