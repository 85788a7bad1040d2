// Optimizer / schedule factories from their typed configs.
#include "engram/optim/factory.h"

#include <gtest/gtest.h>

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
