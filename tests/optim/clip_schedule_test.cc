// Gradient clipping and the learning-rate sequence of every schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engram/optim/clip.h"
#include "engram/optim/schedule.h"

namespace engram::optim {
namespace {

TEST(Clip, GlobalNormScalesDownAndReturnsNormBefore) {
  nn::ParamStore store;
  store.add("a", {1});
  store.add("b", {1});
  store.grads()[0] = 3.0f;
  store.grads()[1] = 4.0f;
  EXPECT_DOUBLE_EQ(clip_grad_norm(store, 1.0f), 5.0);
  EXPECT_NEAR(store.grads()[0], 0.6f, 1e-6);
  EXPECT_NEAR(store.grads()[1], 0.8f, 1e-6);
  EXPECT_NEAR(global_norm(store.grads(), 2), 1.0, 1e-6);
}

TEST(Clip, GlobalNormBelowThresholdIsUntouched) {
  std::vector<float> g = {0.3f, -0.4f};
  EXPECT_NEAR(clip_grad_norm(g.data(), 2, 1.0f), 0.5, 1e-7);
  EXPECT_EQ(g[0], 0.3f);
  EXPECT_EQ(g[1], -0.4f);
}

TEST(Clip, NonFiniteNormLeavesGradients) {
  std::vector<float> g = {1.0f, std::numeric_limits<float>::infinity()};
  EXPECT_TRUE(std::isinf(clip_grad_norm(g.data(), 2, 1.0f)));
  EXPECT_EQ(g[0], 1.0f);
}

TEST(Clip, GlobalNormOfLongVectorMatchesDouble) {
  std::vector<float> g(5000 + 7);
  double ref = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    g[i] = std::sin(0.1f * i) * (i % 3 == 0 ? 10.0f : 0.5f);
    ref += static_cast<double>(g[i]) * g[i];
  }
  EXPECT_NEAR(global_norm(g.data(), static_cast<int64_t>(g.size())), std::sqrt(ref), 1e-5 * std::sqrt(ref));
}

TEST(Clip, ByValue) {
  std::vector<float> g = {-3.0f, -0.5f, 0.0f, 0.7f, 2.0f};
  clip_grad_value(g.data(), 5, 1.0f);
  EXPECT_EQ(g, (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.7f, 1.0f}));
  EXPECT_THROW(clip_grad_value(g.data(), 5, -1.0f), Error);
}

std::vector<float> sequence(const LrSchedule& s, int n) {
  std::vector<float> out;
  for (int t = 0; t < n; ++t) out.push_back(s.lr(t));
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "t = " << i;
}

TEST(Schedule, Constant) { expect_near(sequence(ConstantLr(0.3f), 4), {0.3, 0.3, 0.3, 0.3}); }

TEST(Schedule, StepDecay) {
  expect_near(sequence(StepDecayLr(1.0f, 3, 0.5f), 8), {1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25});
  EXPECT_THROW(StepDecayLr(1.0f, 0, 0.5f), Error);
}

TEST(Schedule, WarmupInverseSqrt) {
  expect_near(sequence(WarmupInvSqrtLr(1.0f, 4), 8),
              {0.25, 0.5, 0.75, 1.0, std::sqrt(4.0 / 5), std::sqrt(4.0 / 6), std::sqrt(4.0 / 7), std::sqrt(0.5)});
}

TEST(Schedule, ReduceOnPlateauPatienceFactorMinLr) {
  ReduceOnPlateau s(1.0f, {.factor = 0.5f, .patience = 2, .min_lr = 0.3f});
  const double metrics[] = {5, 4, 4, 4, 4, 4, 4, 4, 3.9, 4, 4, 4};
  const double want[] = {1, 1, 1, 1, 0.5, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3, 0.3};
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(s.observe(metrics[i]), want[i], 1e-7) << "evaluation " << i;
  EXPECT_DOUBLE_EQ(s.best(), 3.9);
}

TEST(Schedule, ReduceOnPlateauThresholdCooldownAndMaximize) {
  // 1.00005 is within the relative threshold of 1.0, so it is no improvement in max mode.
  ReduceOnPlateau s(1.0f, {.maximize = true, .factor = 0.1f, .patience = 0, .cooldown = 2});
  EXPECT_FLOAT_EQ(s.observe(1.0), 1.0f);
  EXPECT_FLOAT_EQ(s.observe(1.00005), 0.1f);  // bad 1 > patience 0
  EXPECT_FLOAT_EQ(s.observe(0.5), 0.1f);      // cooldown
  EXPECT_FLOAT_EQ(s.observe(0.5), 0.1f);      // cooldown
  EXPECT_FLOAT_EQ(s.observe(2.0), 0.1f);      // improvement
  EXPECT_NEAR(s.observe(1.0), 0.01f, 1e-9);
}

TEST(Schedule, ReduceOnPlateauStateRoundTrip) {
  ReduceOnPlateau a(1.0f, {.factor = 0.5f, .patience = 1});
  for (double m : {3.0, 2.0, 2.5}) a.observe(m);
  ReduceOnPlateau b(1.0f, {.factor = 0.5f, .patience = 1});
  b.load_state_scalars(a.state_scalars());
  for (double m : {2.5, 2.5, 1.0, 1.5, 1.5}) EXPECT_EQ(a.observe(m), b.observe(m));
}

}  // namespace
}  // namespace engram::optim
