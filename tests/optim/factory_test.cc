// Optimizer / schedule factories from their typed configs.
#include "engram/optim/factory.h"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <limits>
#include <cmath>

namespace engram::optim {
namespace {

TEST(Factory, BuildsEveryOptimizerByName) {
  nn::ParamStore store;
  store.add("w", {3});
  for (const char* name : {"sgd", "adam", "adagrad", "rmsprop"}) {
    OptimizerConfig c;
    c.name = name;
    c.lr = 0.25f;
    auto opt = make_optimizer(store, c);
    EXPECT_EQ(opt->kind(), name);
    EXPECT_EQ(opt->lr(), 0.25f);
  }
  OptimizerConfig c;
  c.name = "rmsprop";
  c.momentum = 0.9f;
  c.centered = true;
  EXPECT_EQ(make_optimizer(store, c)->state_tensors().size(), 3u);  // square_avg, grad_avg, momentum
  c.eps_in_root = true;
  c.eps = 0.5f;
  auto rms = make_optimizer(store, c);
  EXPECT_TRUE(dynamic_cast<RmsProp&>(*rms).options().eps_in_root);  // the config reaches the optimizer
  EXPECT_EQ(dynamic_cast<RmsProp&>(*rms).options().eps, 0.5f);
  c.eps_in_root = false;
  c.name = "adamw";
  try {
    make_optimizer(store, c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown optimizer 'adamw' (expected sgd|adam|adagrad|rmsprop)");
  }
}

// Every hyper-parameter is checked with the config: eps must be a finite number > 0 (it is the
// floor of a denominator that is 0 where a gradient has been 0), and no option takes an infinity
// or NaN.
TEST(Factory, RefusesEpsZeroAndNonFiniteHyperParameters) {
  auto error_of = [](OptimizerConfig c) -> std::string {
    try {
      check_optimizer_config(c);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  for (const char* name : {"adam", "adagrad", "rmsprop"})
    for (float eps : {0.0f, -1e-8f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
      OptimizerConfig c;
      c.name = name;
      c.eps = eps;
      EXPECT_NE(error_of(c).find(fmt::format("{}: eps must be a finite number > 0", name)), std::string::npos)
          << name << " eps " << eps << ": " << error_of(c);
    }
  OptimizerConfig sgd;
  sgd.name = "sgd";
  sgd.eps = 0;  // sgd has no eps
  EXPECT_EQ(error_of(sgd), "");
  OptimizerConfig ada;
  ada.name = "adagrad";
  ada.weight_decay = std::numeric_limits<float>::infinity();
  EXPECT_NE(error_of(ada), "");
  OptimizerConfig c;
  c.beta2 = std::nanf("");
  EXPECT_NE(error_of(c), "");
  ScheduleConfig p;
  p.name = "plateau";
  p.min_lr = std::numeric_limits<float>::infinity();
  EXPECT_THROW(make_plateau(p, 0.1f), Error);
  p.min_lr = 0;
  p.threshold = std::numeric_limits<double>::infinity();
  EXPECT_THROW(make_plateau(p, 0.1f), Error);
}

// param_lr: a group names a parameter or a module path (its parameters, not a longer name with
// the same prefix); its rate is a multiple of optimizer.lr, so the multiplier is lr / base.
TEST(Factory, ParamLrGroups) {
  nn::ParamStore store;
  const nn::ParamId emb = store.add("embedding/weight", {4});
  const nn::ParamId other = store.add("embedding_proj/weight", {2});
  const nn::ParamId cell = store.add("cell/w", {3});
  OptimizerConfig c;
  c.name = "adagrad";
  c.lr = 0.05f;
  c.param_lr = {{.params = "embedding", .lr = 0.1f}};
  auto opt = make_optimizer(store, c);
  EXPECT_FLOAT_EQ(opt->lr_scale(emb), 2.0f);
  EXPECT_EQ(opt->lr_scale(other), 1.0f);
  EXPECT_EQ(opt->lr_scale(cell), 1.0f);
  c.param_lr = {{.params = "cell/w", .lr = 0.0f}, {.params = "embedding_proj", .lr = 0.5f}};
  opt = make_optimizer(store, c);
  EXPECT_EQ(opt->lr_scale(cell), 0.0f);
  EXPECT_FLOAT_EQ(opt->lr_scale(other), 10.0f);
  EXPECT_EQ(opt->lr_scale(emb), 1.0f);
  check_optimizer_config(c);  // no parameters needed

  auto error = [&](std::vector<ParamLrConfig> groups, float base = 0.05f) {
    OptimizerConfig bad = c;
    bad.param_lr = std::move(groups);
    bad.lr = base;
    try {
      make_optimizer(store, bad);
      return std::string("no error");
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(error({{.params = "decoder", .lr = 0.1f}}),
            "optimizer.param_lr[0]: 'decoder' names no parameter of the model (its top-level paths: cell, embedding, "
            "embedding_proj)");
  EXPECT_EQ(error({{.params = "embedding", .lr = 0.1f}, {.params = "embedding/weight", .lr = 0.2f}}),
            "optimizer.param_lr[1] (embedding/weight): parameter 'embedding/weight' is already in param_lr[0] "
            "(embedding)");
  EXPECT_EQ(error({{.params = "embedding", .lr = -0.1f}}),
            "optimizer.param_lr[0] (embedding): lr must be finite and >= 0, got -0.1");
  EXPECT_EQ(error({{.params = "embedding/", .lr = 0.1f}}),
            "optimizer.param_lr[0]: params 'embedding/' must be a parameter name or module path (no leading or "
            "trailing '/')");
  EXPECT_EQ(error({{.params = "embedding", .lr = 0.1f}}, 0.0f),
            "optimizer.param_lr needs optimizer.lr > 0 (the groups' rates are multiples of it), got 0");
  OptimizerConfig bad = c;
  bad.param_lr = {{.params = "", .lr = 0.1f}};
  EXPECT_THROW(check_optimizer_config(bad), Error);
}

TEST(Factory, BuildsSchedules) {
  ScheduleConfig c;
  EXPECT_EQ(make_schedule(c, 0.5f)->lr(100), 0.5f);
  c.name = "step";
  c.every = 2;
  c.gamma = 0.1f;
  EXPECT_NEAR(make_schedule(c, 1.0f)->lr(4), 0.01f, 1e-8);
  c.name = "warmup_inv_sqrt";
  c.warmup = 10;
  EXPECT_NEAR(make_schedule(c, 1.0f)->lr(4), 0.5f, 1e-7);
  c.name = "plateau";
  EXPECT_THROW(make_schedule(c, 1.0f), Error);
  ReduceOnPlateau p = make_plateau(c, 1.0f);
  EXPECT_EQ(p.lr(), 1.0f);
  c.name = "cosine";
  EXPECT_THROW(make_schedule(c, 1.0f), Error);
}

}  // namespace
}  // namespace engram::optim
