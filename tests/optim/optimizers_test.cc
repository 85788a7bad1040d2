// Each update rule against a hand-computed 2-3 step update on a tiny vector, Adam against the
// PyTorch formula in double precision, state export/import, and minimising a quadratic.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "engram/optim/optimizers.h"

namespace engram::optim {
namespace {

// A store with one parameter "w" of the given values.
struct Fixture {
  nn::ParamStore store;
  nn::ParamId id;
  explicit Fixture(std::vector<float> w) {
    id = store.add("w", {static_cast<int>(w.size())});
    for (size_t i = 0; i < w.size(); ++i) store.value(id)[i] = w[i];
  }
  void set_grad(std::vector<float> g) {
    for (size_t i = 0; i < g.size(); ++i) store.grad(id)[i] = g[i];
  }
  float w(int i) { return store.value(id)[i]; }
};

TEST(Sgd, PlainWithWeightDecay) {
  Fixture f({1.0f, -2.0f});
  Sgd opt(f.store, {.lr = 0.1f, .weight_decay = 0.1f});
  f.set_grad({0.5f, 0.5f});
  opt.step();  // g' = [0.6, 0.3]
  EXPECT_NEAR(f.w(0), 0.94f, 1e-6);
  EXPECT_NEAR(f.w(1), -2.03f, 1e-6);
  opt.step();  // g' = [0.594, 0.297]
  EXPECT_NEAR(f.w(0), 0.8806f, 1e-6);
  EXPECT_NEAR(f.w(1), -2.0597f, 1e-6);
  EXPECT_EQ(opt.steps(), 2);
  EXPECT_TRUE(opt.state_tensors().empty());  // no momentum buffer without momentum
}

TEST(Sgd, Momentum) {
  Fixture f({1.0f});
  Sgd opt(f.store, {.lr = 0.1f, .momentum = 0.9f});
  f.set_grad({1.0f});
  const float expected[] = {0.9f, 0.71f, 0.439f};  // b = 1, 1.9, 2.71
  for (float e : expected) {
    opt.step();
    EXPECT_NEAR(f.w(0), e, 1e-6);
  }
}

TEST(Sgd, Nesterov) {
  Fixture f({1.0f});
  Sgd opt(f.store, {.lr = 0.1f, .momentum = 0.9f, .nesterov = true});
  f.set_grad({1.0f});
  const float expected[] = {0.81f, 0.539f, 0.1951f};  // d = 1.9, 2.71, 3.439
  for (float e : expected) {
    opt.step();
    EXPECT_NEAR(f.w(0), e, 1e-6);
  }
}

TEST(Sgd, RejectsBadOptions) {
  Fixture f({1.0f});
  EXPECT_THROW(Sgd(f.store, {.lr = 0.1f, .nesterov = true}), Error);
  EXPECT_THROW(Sgd(f.store, {.lr = -1.0f}), Error);
  EXPECT_THROW(Sgd(f.store, {.lr = 0.1f, .momentum = 1.5f}), Error);
}

TEST(Adam, ConstantGradientMovesLrPerStep) {
  // With a constant gradient the bias-corrected moments are exactly g and g²: each step is
  // lr * g / (|g| + eps), i.e. lr in the direction of -sign(g).
  Fixture f({0.0f, 0.0f});
  Adam opt(f.store, {.lr = 0.1f});
  f.set_grad({1.0f, -2.0f});
  for (int t = 1; t <= 3; ++t) {
    opt.step();
    EXPECT_NEAR(f.w(0), -0.1f * t, 1e-5);
    EXPECT_NEAR(f.w(1), 0.1f * t, 1e-5);
  }
}

TEST(Adam, MatchesPyTorchFormula) {
  // torch.optim.Adam (amsgrad=False, weight_decay as L2), evaluated in double on a gradient
  // that changes each step: g = w - c (the gradient of 0.5 * ||w - c||²) plus L2 decay.
  const std::vector<float> w0 = {0.5f, -1.5f, 2.0f};
  const std::vector<double> c = {1.0, 1.0, -3.0};
  const double lr = 0.05, b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.01;
  Fixture f(w0);
  Adam opt(f.store, {.lr = 0.05f, .beta1 = 0.8f, .beta2 = 0.95f, .eps = 1e-6f, .weight_decay = 0.01f});
  std::vector<double> w(w0.begin(), w0.end()), m(3, 0.0), v(3, 0.0);
  for (int t = 1; t <= 5; ++t) {
    for (int i = 0; i < 3; ++i) f.store.grad(f.id)[i] = static_cast<float>(w[i] - c[i]);
    opt.step();
    const double bc1 = 1 - std::pow(b1, t), bc2_sqrt = std::sqrt(1 - std::pow(b2, t));
    for (int i = 0; i < 3; ++i) {
      const double g = static_cast<float>(w[i] - c[i]) + wd * w[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      w[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / bc2_sqrt + eps);
      EXPECT_NEAR(f.w(i), w[i], 2e-6) << "step " << t << " element " << i;
    }
  }
}

TEST(Adam, DecoupledAndL2WeightDecay) {
  {  // AdamW with zero gradient: only the decay acts, w *= 1 - lr * wd.
    Fixture f({1.0f});
    Adam opt(f.store, {.lr = 0.1f, .weight_decay = 0.5f, .decoupled_weight_decay = true});
    f.set_grad({0.0f});
    opt.step();
    EXPECT_NEAR(f.w(0), 0.95f, 1e-6);
    opt.step();
    EXPECT_NEAR(f.w(0), 0.9025f, 1e-6);
  }
  {  // L2: the decay term is part of the gradient, so Adam normalises it to a step of lr.
    Fixture f({1.0f});
    Adam opt(f.store, {.lr = 0.1f, .weight_decay = 0.5f});
    f.set_grad({0.0f});
    opt.step();
    EXPECT_NEAR(f.w(0), 0.9f, 1e-5);
  }
}

TEST(Adagrad, ThreeSteps) {
  Fixture f({1.0f});
  Adagrad opt(f.store, {.lr = 0.1f});
  f.set_grad({2.0f});
  const double expected[] = {0.9, 0.8292893218888453, 0.7715542949715494};  // s = 4, 8, 12
  for (double e : expected) {
    opt.step();
    EXPECT_NEAR(f.w(0), e, 1e-6);
  }
}

TEST(Adagrad, InitialAccumulator) {
  Fixture f({1.0f});
  Adagrad opt(f.store, {.lr = 0.1f, .initial_accumulator = 5.0f});
  f.set_grad({2.0f});
  opt.step();  // s = 9
  EXPECT_NEAR(f.w(0), 1.0f - 0.2f / 3.0f, 1e-6);
}

struct RmsCase {
  const char* name;
  RmspropOptions options;
  double expected[3];
};

TEST(RmsProp, ThreeStepsEveryVariant) {
  // alpha 0.9, lr 0.01, constant gradient 1 from w = 1 (values from the formula in double).
  const RmsCase cases[] = {
      {"plain", {.lr = 0.01f, .alpha = 0.9f}, {0.9683772243983162, 0.9454356515375758, 0.926226183146697}},
      {"momentum", {.lr = 0.01f, .alpha = 0.9f, .momentum = 0.9f},
       {0.9683772243983162, 0.9169751534960603, 0.8515038212931513}},
      {"centered", {.lr = 0.01f, .alpha = 0.9f, .centered = true},
       {0.9666666677777778, 0.9411760313308213, 0.9186776340877107}},
      {"centered+momentum", {.lr = 0.01f, .alpha = 0.9f, .momentum = 0.9f, .centered = true},
       {0.9666666677777778, 0.9111760323308212, 0.8387360631854498}},
      // eps under the root (Graves 2013): d = sqrt(v + eps); eps 0.01 so that it shows.
      {"eps_in_root", {.lr = 0.01f, .alpha = 0.9f, .eps = 0.01f, .eps_in_root = true},
       {0.9698488655422236, 0.9474881857672257, 0.9286236188196121}},
      {"graves (centered+momentum+eps_in_root)",
       {.lr = 0.01f, .alpha = 0.9f, .eps = 0.01f, .momentum = 0.9f, .centered = true, .eps_in_root = true},
       {0.9683772233983162, 0.9152159526691288, 0.8454210773573898}},
  };
  for (const auto& c : cases) {
    Fixture f({1.0f});
    RmsProp opt(f.store, c.options);
    f.set_grad({1.0f});
    for (double e : c.expected) {
      opt.step();
      EXPECT_NEAR(f.w(0), e, 2e-6) << c.name << " step " << opt.steps();
    }
  }
}

// Per-parameter multipliers: three parameters, the middle one at 2x and the last at 0x. Adagrad's
// first step moves each value by its rate exactly (lr * g / sqrt(g^2)), so a = 1 - 0.1,
// b = 1 - 0.2, c = 1; Adam must keep each parameter's moments at its own offset, so three steps
// equal three steps of separate optimizers at lr and 2 lr.
TEST(Optimizer, PerParameterLrScale) {
  nn::ParamStore store;
  const nn::ParamId a = store.add("a", {2}), b = store.add("b", {3}), c = store.add("c", {1});
  for (int64_t i = 0; i < store.numel(); ++i) store.values()[i] = 1.0f, store.grads()[i] = 2.0f;
  Adagrad ada(store, {.lr = 0.1f});
  ada.set_lr_scale(b, 2.0f);
  ada.set_lr_scale(c, 0.0f);
  EXPECT_EQ(ada.lr_scale(a), 1.0f);
  EXPECT_EQ(ada.lr_scale(b), 2.0f);
  ada.step();
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(store.value(a)[i], 0.9f, 1e-6);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(store.value(b)[i], 0.8f, 1e-6);
  EXPECT_EQ(store.value(c)[0], 1.0f);
  ada.set_lr(0.05f);  // a schedule moves every parameter's rate by one factor: b at 0.1
  ada.step();  // s = 8: a -= 0.05 * 2 / sqrt(8), b -= 0.1 * 2 / sqrt(8)
  EXPECT_NEAR(store.value(a)[0], 0.9f - 0.1f / std::sqrt(8.0f), 1e-6);
  EXPECT_NEAR(store.value(b)[2], 0.8f - 0.2f / std::sqrt(8.0f), 1e-6);
  EXPECT_THROW(ada.set_lr_scale(3, 1.0f), Error);
  EXPECT_THROW(ada.set_lr_scale(a, -1.0f), Error);
  EXPECT_THROW(ada.set_lr_scale(a, NAN), Error);

  const std::vector<float> ga = {0.5f, -1.0f}, gb = {2.0f, 0.25f, -3.0f};
  nn::ParamStore joint;
  const nn::ParamId ja = joint.add("a", {2}), jb = joint.add("b", {3});
  Fixture fa({1.0f, 2.0f}), fb({-1.0f, 0.5f, 3.0f});
  for (int i = 0; i < 2; ++i) joint.value(ja)[i] = fa.w(i), joint.grad(ja)[i] = ga[i];
  for (int i = 0; i < 3; ++i) joint.value(jb)[i] = fb.w(i), joint.grad(jb)[i] = gb[i];
  fa.set_grad(ga), fb.set_grad(gb);
  Adam adam(joint, {.lr = 0.01f});
  adam.set_lr_scale(jb, 2.0f);
  Adam adam_a(fa.store, {.lr = 0.01f}), adam_b(fb.store, {.lr = 0.02f});
  for (int step = 0; step < 3; ++step) {
    joint.grad(ja)[0] = fa.store.grad(fa.id)[0] = ga[0] * float(step + 1);  // moments differ by step
    adam.step(), adam_a.step(), adam_b.step();
  }
  for (int i = 0; i < 2; ++i) EXPECT_FLOAT_EQ(joint.value(ja)[i], fa.w(i));
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(joint.value(jb)[i], fb.w(i));
}

TEST(Optimizer, StateNamesAndShapes) {
  nn::ParamStore store;
  store.add("enc/w", {2, 3});
  store.add("enc/b", {3});
  Adam adam(store);
  auto st = adam.state_tensors();
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[0].name, "exp_avg/enc/w");
  EXPECT_EQ(st[0].shape, (core::Shape{2, 3}));
  EXPECT_EQ(st[1].name, "exp_avg/enc/b");
  EXPECT_EQ(st[3].name, "exp_avg_sq/enc/b");
  EXPECT_EQ(st[1].data, st[0].data + 6);  // views into one flat buffer laid out like the store
  RmsProp rms(store, {.momentum = 0.9f, .centered = true});
  auto names = rms.state_tensors();
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(names[2].name, "grad_avg/enc/w");
  EXPECT_EQ(names[4].name, "momentum_buffer/enc/w");
}

TEST(Optimizer, ErrorsWhenStoreGrewAfterCreation) {
  nn::ParamStore store;
  store.add("a", {2});
  Sgd opt(store);
  store.add("b", {2});
  EXPECT_THROW(opt.step(), Error);
  EXPECT_THROW(opt.state_tensors(), Error);  // views would point past the state buffers
}

// Copying tensors + scalars into a fresh optimizer continues exactly like the original.
TEST(Optimizer, StateImportContinuesBitIdentically) {
  auto grad_of = [](nn::ParamStore& s) {
    for (int64_t i = 0; i < s.numel(); ++i) s.grads()[i] = s.values()[i] * s.values()[i] - 0.5f * i;
  };
  nn::ParamStore a, b;
  for (auto* s : {&a, &b}) {
    s->add("w", {4});
    for (int i = 0; i < 4; ++i) s->values()[i] = 0.1f * (i + 1);
  }
  RmsProp oa(a, {.lr = 0.01f, .momentum = 0.9f, .centered = true});
  for (int t = 0; t < 3; ++t) grad_of(a), oa.step();
  b.copy_values_from(a);
  RmsProp ob(b, {.lr = 0.5f, .momentum = 0.9f, .centered = true});
  auto src = oa.state_tensors();
  auto dst = ob.state_tensors();
  ASSERT_EQ(src.size(), dst.size());
  for (size_t k = 0; k < src.size(); ++k) std::copy(src[k].data, src[k].data + src[k].shape.numel(), dst[k].data);
  ob.load_state_scalars(oa.state_scalars());
  EXPECT_EQ(ob.steps(), 3);
  EXPECT_EQ(ob.lr(), 0.01f);
  for (int t = 0; t < 4; ++t) grad_of(a), oa.step(), grad_of(b), ob.step();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.values()[i], b.values()[i]);
}

// The kernels work in blocks of a few hundred values: a long buffer must update every element
// exactly as a one-element store does.
TEST(Optimizer, LongBufferMatchesElementwise) {
  const int n = 601;
  auto run = [&](auto make) {
    nn::ParamStore big;
    big.add("w", {n});
    auto opt = make(big);
    std::vector<nn::ParamStore> small(n);
    std::vector<std::unique_ptr<Optimizer>> small_opts;
    for (int i = 0; i < n; ++i) {
      big.values()[i] = 0.01f * (i % 37) - 0.2f;
      small[i].add("w", {1});
      small[i].values()[0] = big.values()[i];
      small_opts.push_back(make(small[i]));
    }
    for (int t = 0; t < 3; ++t) {
      for (int i = 0; i < n; ++i) {
        big.grads()[i] = std::sin(0.37f * i + t) + 0.1f * big.values()[i];
        small[i].grads()[0] = big.grads()[i];
        small_opts[i]->step();
      }
      opt->step();
    }
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(big.values()[i], small[i].values()[0], 1e-6) << opt->kind() << " element " << i;
  };
  run([](nn::ParamStore& s) -> std::unique_ptr<Optimizer> {
    return std::make_unique<Adam>(s, AdamOptions{.lr = 0.1f, .weight_decay = 0.1f});
  });
  run([](nn::ParamStore& s) -> std::unique_ptr<Optimizer> {
    return std::make_unique<Adagrad>(s, AdagradOptions{.lr = 0.1f, .weight_decay = 0.1f});
  });
  run([](nn::ParamStore& s) -> std::unique_ptr<Optimizer> {
    return std::make_unique<RmsProp>(s, RmspropOptions{.lr = 0.01f, .momentum = 0.9f, .centered = true});
  });
  run([](nn::ParamStore& s) -> std::unique_ptr<Optimizer> {
    return std::make_unique<RmsProp>(s, RmspropOptions{.lr = 0.01f});
  });
}

// Each optimizer drives an ill-conditioned quadratic 0.5 * Σ a_i (w_i - c_i)² to its minimum.
TEST(Optimizer, MinimisesQuadratic) {
  const float a[] = {1.0f, 10.0f, 0.3f, 3.0f};
  const float c[] = {1.0f, -2.0f, 0.5f, 3.0f};
  auto run = [&](const char* name, auto make, int steps) {
    nn::ParamStore store;
    store.add("w", {4});
    std::unique_ptr<Optimizer> opt = make(store);
    for (int t = 0; t < steps; ++t) {
      for (int i = 0; i < 4; ++i) store.grads()[i] = a[i] * (store.values()[i] - c[i]);
      opt->step();
    }
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(store.values()[i], c[i], 1e-3) << name << " element " << i;
  };
  run("sgd", [](nn::ParamStore& s) { return std::make_unique<Sgd>(s, SgdOptions{.lr = 0.15f}); }, 400);
  run("momentum", [](nn::ParamStore& s) { return std::make_unique<Sgd>(s, SgdOptions{.lr = 0.05f, .momentum = 0.9f}); },
      400);
  run("nesterov",
      [](nn::ParamStore& s) {
        return std::make_unique<Sgd>(s, SgdOptions{.lr = 0.05f, .momentum = 0.9f, .nesterov = true});
      },
      400);
  run("adam", [](nn::ParamStore& s) { return std::make_unique<Adam>(s, AdamOptions{.lr = 0.05f}); }, 2000);
  run("adagrad", [](nn::ParamStore& s) { return std::make_unique<Adagrad>(s, AdagradOptions{.lr = 1.0f}); }, 2000);
  run("rmsprop",
      [](nn::ParamStore& s) {
        return std::make_unique<RmsProp>(s, RmspropOptions{.lr = 0.01f, .momentum = 0.9f, .centered = true});
      },
      2000);
}

}  // namespace
}  // namespace engram::optim
