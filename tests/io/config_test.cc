// Typed configs: one visit() declaration drives YAML load/save, --set overrides and the field
// list; errors name the key and the source.
#include "engram/io/config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "engram/optim/factory.h"
#include "io/expect_error.h"
#include "io/temp_dir.h"

namespace engram::io {
namespace sample {

enum class Cell { lstm, gru };

struct EncoderConfig {
  int hidden = 256;
  Cell cell = Cell::lstm;
  bool bidirectional = true;
  template <class V>
  void visit(V& v) {
    v("hidden", hidden, "hidden units");
    v("cell", cell, "recurrent cell");
    v("bidirectional", bidirectional, "read the source both ways");
  }
};

struct ModelConfig {
  std::string name = "seq2seq";
  EncoderConfig encoder;
  float dropout = 0.1f;
  double lr = 1e-3;
  int64_t steps = 100000;
  std::vector<int> buckets = {10, 20};
  std::string attention = "additive";
  template <class V>
  void visit(V& v) {
    v("name", name, "model name");
    v("encoder", encoder, "encoder settings");
    v("dropout", dropout, "dropout rate");
    v("lr", lr, "learning rate");
    v("steps", steps, "training steps");
    v("buckets", buckets, "length buckets");
    v("attention", attention, "additive|dot|general");
  }
};

}  // namespace sample

template <>
struct EnumNames<sample::Cell> {
  static constexpr std::pair<sample::Cell, const char*> items[] = {{sample::Cell::lstm, "lstm"},
                                                                   {sample::Cell::gru, "gru"}};
};

namespace {

using sample::Cell;
using sample::ModelConfig;
using testing::error_of;
using testing::expect_message;

ModelConfig from_text(const std::string& text, const std::string& source = "test.yaml") {
  ModelConfig c;
  from_yaml(parse_yaml(text, source), c, source);
  return c;
}

TEST(Config, LoadsEveryFieldTypeAndKeepsDefaults) {
  const ModelConfig c = from_text(
      "encoder:\n  hidden: 64\n  cell: gru\n  bidirectional: false\n"
      "dropout: 0.25\nlr: 5e-4\nsteps: 3000000000\nbuckets: [5, 15, 50]\n");
  EXPECT_EQ(c.encoder.hidden, 64);
  EXPECT_EQ(c.encoder.cell, Cell::gru);
  EXPECT_FALSE(c.encoder.bidirectional);
  EXPECT_FLOAT_EQ(c.dropout, 0.25f);
  EXPECT_DOUBLE_EQ(c.lr, 5e-4);
  EXPECT_EQ(c.steps, 3000000000LL);
  EXPECT_EQ(c.buckets, (std::vector<int>{5, 15, 50}));
  EXPECT_EQ(c.name, "seq2seq");  // absent: default kept
  EXPECT_EQ(c.attention, "additive");
}

TEST(Config, YamlRoundTrip) {
  ModelConfig c;
  c.name = "yes";  // a string that YAML would read as a bool must survive
  c.encoder.hidden = 7;
  c.encoder.cell = Cell::gru;
  c.dropout = 0.3f;
  c.lr = 1.0 / 3.0;
  c.steps = -5;
  c.buckets = {};
  c.attention = "";
  for (const std::string& text : {YAML::Dump(to_yaml(c)), dump_config(c)}) {
    SCOPED_TRACE(text);
    const ModelConfig d = from_text(text);
    EXPECT_EQ(d.name, "yes");
    EXPECT_EQ(d.encoder.hidden, 7);
    EXPECT_EQ(d.encoder.cell, Cell::gru);
    EXPECT_EQ(d.dropout, 0.3f);  // exact: shortest round-trip formatting
    EXPECT_EQ(d.lr, 1.0 / 3.0);
    EXPECT_EQ(d.steps, -5);
    EXPECT_TRUE(d.buckets.empty());
    EXPECT_EQ(d.attention, "");
  }
  // Declaration order, nested map, help comments.
  const YAML::Node n = to_yaml(c);
  EXPECT_EQ(n.begin()->first.as<std::string>(), "name");
  EXPECT_EQ(n["encoder"]["cell"].as<std::string>(), "gru");
  EXPECT_EQ(n["dropout"].as<std::string>(), "0.3");
  const std::string dumped = dump_config(ModelConfig{});
  EXPECT_NE(dumped.find("hidden: 256  # hidden units"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("dropout: 0.1  # dropout rate"), std::string::npos) << dumped;
}

TEST(Config, LoadConfigFromFile) {
  testing::TempDir tmp;
  const auto path = tmp / "model.yaml";
  std::ofstream(path) << "encoder: {hidden: 32}\nattention: dot\n";
  const ModelConfig c = load_config<ModelConfig>(path);
  EXPECT_EQ(c.encoder.hidden, 32);
  EXPECT_EQ(c.attention, "dot");
  expect_message(error_of([&] { load_config<ModelConfig>(tmp / "missing.yaml"); }), {"missing.yaml", "no such"});
  std::ofstream(path) << "encoder: [unclosed\n";
  expect_message(error_of([&] { load_config<ModelConfig>(path); }), {path.string(), "YAML error at line"});
}

TEST(Config, UnknownKeySuggestsTheClosest) {
  expect_message(error_of([] { from_text("encoder:\n  hiden: 3\n", "cfg.yaml"); }),
                 {"unknown config key 'encoder.hiden' in cfg.yaml (did you mean 'encoder.hidden'?)"});
  expect_message(error_of([] { from_text("dropuot: 0.5\n", "cfg.yaml"); }),
                 {"unknown config key 'dropuot' in cfg.yaml (did you mean 'dropout'?)"});
  const std::string far = error_of([] { from_text("zzzzzzzzzz: 1\n", "cfg.yaml"); });
  expect_message(far, {"unknown config key 'zzzzzzzzzz' in cfg.yaml"});
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
}

TEST(Config, TypeErrorsNameTheKey) {
  expect_message(error_of([] { from_text("encoder:\n  hidden: abc\n", "cfg.yaml"); }),
                 {"config key 'encoder.hidden' in cfg.yaml: expected an integer, got 'abc'"});
  expect_message(error_of([] { from_text("encoder:\n  hidden: 2.5\n"); }), {"'encoder.hidden'", "expected an integer"});
  expect_message(error_of([] { from_text("encoder:\n  hidden: 99999999999\n"); }), {"'encoder.hidden'", "out of range"});
  expect_message(error_of([] { from_text("dropout: [1]\n"); }), {"'dropout'", "expected a number, got a list"});
  expect_message(error_of([] { from_text("encoder:\n  bidirectional: maybe\n"); }),
                 {"'encoder.bidirectional'", "expected a boolean"});
  expect_message(error_of([] { from_text("encoder:\n  cell: rnn\n"); }), {"'encoder.cell'", "'rnn' is not one of lstm|gru"});
  expect_message(error_of([] { from_text("encoder: 5\n"); }), {"'encoder'", "expected a map"});
  expect_message(error_of([] { from_text("buckets: [1, x]\n"); }), {"'buckets[1]'", "expected an integer"});
  expect_message(error_of([] { from_text("- a\n- b\n", "cfg.yaml"); }), {"cfg.yaml", "expected a map"});
}

TEST(Config, SetOverrides) {
  ModelConfig c;
  apply_override(c, "encoder.hidden=512");
  apply_override(c, "encoder.cell=gru");
  apply_override(c, "dropout=0");
  apply_override(c, "name=my: model # not a comment");
  apply_override(c, "buckets=[1, 2, 3]");
  apply_override(c, "attention=");
  apply_override(c, "lr=-.inf");
  EXPECT_EQ(c.encoder.hidden, 512);
  EXPECT_EQ(c.encoder.cell, Cell::gru);
  EXPECT_EQ(c.dropout, 0.0f);
  EXPECT_EQ(c.name, "my: model # not a comment");  // strings are taken as typed
  EXPECT_EQ(c.buckets, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(c.attention, "");
  EXPECT_TRUE(std::isinf(c.lr) && c.lr < 0);

  expect_message(error_of([&] { apply_override(c, "encoder.hiden=3"); }),
                 {"unknown config key 'encoder.hiden' in --set encoder.hiden=3 (did you mean 'encoder.hidden'?)"});
  expect_message(error_of([&] { apply_override(c, "encoder.hidden=big"); }),
                 {"config key 'encoder.hidden' in --set encoder.hidden=big: expected an integer, got 'big'"});
  expect_message(error_of([&] { apply_override(c, "dropout.x=1"); }), {"'dropout'", "expected a number, got a map"});
  expect_message(error_of([&] { apply_override(c, "hidden"); }), {"--set expects key=value, got 'hidden'"});
  expect_message(error_of([&] { apply_override(c, "encoder..hidden=1"); }), {"empty component"});
  EXPECT_EQ(c.encoder.hidden, 512);  // failed overrides change nothing they reject
}

TEST(Config, FieldListForCliFlags) {
  const auto fields = config_fields(ModelConfig{});
  ASSERT_EQ(fields.size(), 9u);
  EXPECT_EQ(fields[1].key, "encoder.hidden");
  EXPECT_EQ(fields[1].type, "int");
  EXPECT_EQ(fields[1].value, "256");
  EXPECT_EQ(fields[1].help, "hidden units");
  EXPECT_EQ(fields[2].type, "lstm|gru");
  EXPECT_EQ(fields[2].value, "lstm");
  EXPECT_EQ(fields[3].type, "bool");
  EXPECT_EQ(fields[4].type, "float");
  EXPECT_EQ(fields[4].value, "0.1");
  EXPECT_EQ(fields[7].value, "[10, 20]");
  // Every listed key accepts its own value back through --set: applied to a config where every
  // field differs, they restore the defaults field by field.
  ModelConfig c;
  c.name = "other";
  c.encoder = {.hidden = 3, .cell = Cell::gru, .bidirectional = false};
  c.dropout = 0.5f;
  c.lr = 2.0;
  c.steps = 7;
  c.buckets = {1};
  c.attention = "dot";
  const auto changed = config_fields(c);
  ASSERT_EQ(changed.size(), fields.size());
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_NE(changed[i].value, fields[i].value) << fields[i].key;
  for (const auto& f : fields) EXPECT_NO_THROW(apply_override(c, f.key + "=" + f.value)) << f.key;
  const auto back = config_fields(c);
  ASSERT_EQ(back.size(), fields.size());
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(back[i].value, fields[i].value) << fields[i].key;
}

TEST(Config, OptimizerConfigFromYamlAndSet) {
  optim::OptimizerConfig c;
  from_yaml(parse_yaml("name: rmsprop\nlr: 1e-4\nmomentum: 0.9\n", "train.yaml"), c, "train.yaml");
  apply_override(c, "centered=true");
  EXPECT_EQ(c.name, "rmsprop");
  EXPECT_FLOAT_EQ(c.lr, 1e-4f);
  EXPECT_FLOAT_EQ(c.momentum, 0.9f);
  EXPECT_TRUE(c.centered);
  nn::ParamStore store;
  store.add("w", {2});
  EXPECT_EQ(optim::make_optimizer(store, c)->kind(), "rmsprop");
  expect_message(error_of([&] { apply_override(c, "monentum=0.5"); }), {"did you mean 'momentum'?"});
}

// A key given twice is an error naming its line (yaml-cpp alone keeps the first value silently);
// so is a document nested too deep (hardening issue: values silently replaced, bounded input).
TEST(Config, DuplicateKeysAndDeepNestingAreErrors) {
  try {
    parse_yaml("a: 1\nb:\n  c: 2\n  c: 3\n", "dup.yaml");
    ADD_FAILURE() << "a duplicate key was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dup.yaml: line 4: duplicate key 'c'"), std::string::npos) << e.what();
  }
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  try {
    parse_yaml("a: " + deep + "\n", "deep.yaml");
    ADD_FAILURE() << "a 100-deep document was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("deeper than 64"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parse_yaml("a: {b: [1, 2], c: {d: 3}}\n", "ok.yaml"));
  // A "billion laughs" document: 10 levels of aliases repeating the level below ten times (10^10
  // nodes once expanded) is refused in bounded time (fuzzing found the walk exponential).
  std::string laughs = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    laughs += fmt::format("l{}: &l{} [", i, i);
    for (int k = 0; k < 10; ++k) laughs += fmt::format("{}*l{}", k ? ", " : "", i - 1);
    laughs += "]\n";
  }
  try {
    parse_yaml(laughs, "laughs.yaml");
    ADD_FAILURE() << "an exponential alias document was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1000000 nodes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace engram::io
