// Optimizers must not allocate per step: this test binary counts heap allocations (replacing the
// global operator new, plain and over-aligned) around step() calls of every update rule and clip
// function.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "engram/optim/clip.h"
#include "engram/optim/optimizers.h"

namespace {
std::atomic<long> g_allocations{0};  // test instrumentation only
volatile std::uintptr_t g_sink = 0;  // where the control test's pointers escape to
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// Over-aligned allocations (alignas > 16, e.g. SIMD buffers) go through these: count them too.
void* operator new(std::size_t n, std::align_val_t a) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t align = std::max(static_cast<std::size_t>(a), sizeof(void*));
  if (void* p = std::aligned_alloc(align, (std::max<std::size_t>(n, 1) + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace engram::optim {
namespace {

// The counter sees both kinds of allocation (else the test below could not fail).
TEST(NoAlloc, TheCounterCountsAllocations) {
  struct alignas(64) Block {
    float v[16];
  };
  const long before = g_allocations.load();
  auto* plain = new std::vector<float>(1000);
  auto* aligned = new Block();
  g_sink = reinterpret_cast<std::uintptr_t>(plain->data()) ^ reinterpret_cast<std::uintptr_t>(aligned);
  EXPECT_GE(g_allocations.load() - before, 3);  // the vector, its buffer, the aligned block
  delete aligned;
  delete plain;
}

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
