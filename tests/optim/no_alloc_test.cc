// Optimizers must not allocate per step: this test binary counts heap allocations (replacing the
// global operator new) around step() calls of every update rule and clip function.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

#include "engram/optim/clip.h"
#include "engram/optim/optimizers.h"

namespace {
std::atomic<long> g_allocations{0};  // test instrumentation only
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace engram::optim {
namespace {

TEST(NoAlloc, StepAndClipDoNotAllocate) {
  nn::ParamStore store;
  store.add("a", {64, 32});
  store.add("b", {32});
  for (int64_t i = 0; i < store.numel(); ++i) store.grads()[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  std::vector<std::unique_ptr<Optimizer>> opts;
  opts.push_back(std::make_unique<Sgd>(store, SgdOptions{.momentum = 0.9f, .nesterov = true, .weight_decay = 0.1f}));
  opts.push_back(std::make_unique<Adam>(store, AdamOptions{.weight_decay = 0.1f, .decoupled_weight_decay = true}));
  opts.push_back(std::make_unique<Adagrad>(store));
  opts.push_back(std::make_unique<RmsProp>(store, RmspropOptions{.momentum = 0.9f, .centered = true}));
  for (auto& opt : opts) {
    opt->step();  // warm
    const long before = g_allocations.load();
    for (int t = 0; t < 5; ++t) {
      clip_grad_norm(store, 1.0f);
      clip_grad_value(store, 0.5f);
      opt->set_lr(0.001f * (t + 1));
      opt->step();
    }
    EXPECT_EQ(g_allocations.load(), before) << opt->kind();
  }
}

}  // namespace
}  // namespace engram::optim
