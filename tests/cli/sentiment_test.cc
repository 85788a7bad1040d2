// `engram sentiment eval|show` on a tree model trained in-process on a tiny SST-shaped
// directory: eval prints root and all-node accuracy (fine, and a fine model on the binary view),
// show writes a well-formed SVG with one circle per node for a tree and for a plain sentence,
// bad input is an error. (The training-speed loop is build/bench/tree_speed.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_cli.h"
#include "engram/cli/commands.h"
#include "engram/core/error.h"
#include "engram/models/registry.h"
#include "io/temp_dir.h"
#include "viz/xml_check.h"

namespace engram::cli {
namespace {

namespace fs = std::filesystem;
using io::testing::TempDir;
using io::testing::write_bytes;


TEST(SentimentCli, EvalShowAndSpeedOnATinyModel) {
  TempDir dir;
  fs::create_directories(dir / "sst");
  const std::string trees =
      "(3 (2 It) (4 (4 rocks)))\n(1 (2 the) (1 (2 film) (1 (2 is) (1 bad))))\n(4 (2 a) (4 (4 very) (3 good)))\n"
      "(0 (2 not) (0 (0 bad) (2 .)))\n(2 (2 the) (2 film))\n";
  for (const char* split : {"train", "dev", "test"}) write_bytes(dir / "sst" / (std::string(split) + ".txt"), trees);
  const std::string run_dir = (dir / "run").string();
  const std::vector<std::string> sets = {"data.dir=" + (dir / "sst").string(), "tree.embed=8", "tree.hidden=8",
                                         "train.max_epochs=2", "data.batch_size=2", "train.log_every=1000",
                                         "train.run_dir=" + run_dir, "tree.cell=childsum"};
  ::testing::internal::CaptureStdout();
  models::family("tree").train(YAML::Load("model: tree\n"), "<test>", sets);
  ::testing::internal::GetCapturedStdout();

  const std::string eval = testing::run_engram({"sentiment", "eval", "-m", run_dir, "--split", "dev"});
  EXPECT_NE(eval.find("childsum, 5 classes"), std::string::npos) << eval;
  EXPECT_NE(eval.find("root accuracy"), std::string::npos) << eval;
  EXPECT_NE(eval.find("/ 5)"), std::string::npos) << eval;
  EXPECT_NE(eval.find("/ 24 labelled nodes"), std::string::npos) << eval;
  const std::string binary =
      testing::run_engram({"sentiment", "eval", "-m", run_dir, "--view", "binary", "--threads", "1"});
  EXPECT_NE(binary.find("binary view: 4 trees"), std::string::npos) << binary;

  for (const std::string text : {"(3 (2 It) (4 (4 rocks)))", "It is a very good film"}) {
    const fs::path svg = dir / "tree.svg";
    const std::string out = testing::run_engram({"sentiment", "show", "-m", run_dir, text, "-o", svg.string()});
    EXPECT_NE(out.find("tree written to"), std::string::npos) << out;
    const viz::testing::XmlElement root = viz::testing::parse_xml(io::testing::read_bytes(svg));
    EXPECT_EQ(root.find_all("circle").size(), text[0] == '(' ? 4u : 11u) << text;
    fs::remove(svg);
  }
  EXPECT_THROW(testing::run_engram({"sentiment", "show", "-m", run_dir, "(3 (2 It)", "-o", (dir / "x.svg").string()}),
               Error);
  EXPECT_THROW(testing::run_engram({"sentiment", "eval", "-m", run_dir, "--split", "valid"}), Error);
  EXPECT_THROW(testing::run_engram({"sentiment", "eval", "-m", run_dir, "--view", "ternary"}), Error);
}

}  // namespace
}  // namespace engram::cli
