// The one table-driven gradient check over every nn module: parameters and inputs.
#include <gtest/gtest.h>

#include <cstdio>

#include "nn/module_cases.h"

namespace engram::nn {
namespace {

core::GradCheckResult check_module(const ModuleCase& c) {
  ParamStore store;
  core::Rng rng(11);
  auto forward = c.build(store, rng);
  core::Rng in_rng(5);
  std::vector<std::vector<float>> values(c.inputs.size()), grads(c.inputs.size());
  std::vector<core::GradTarget> targets;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const int64_t n = c.inputs[k].shape.numel();
    values[k].resize(n);
    grads[k].resize(n);
    for (auto& v : values[k]) v = in_rng.uniform(c.inputs[k].lo, c.inputs[k].hi);
    targets.push_back({fmt::format("in{}", k), values[k].data(), grads[k].data(), n});
  }
  for (ParamId id = 0; id < store.count(); ++id)
    targets.push_back({store.name(id), store.value(id).data, store.grad(id).data, store.shape(id).numel()});
  auto f = [&](Graph& g) {
    std::vector<Var> vars;
    for (size_t k = 0; k < c.inputs.size(); ++k)
      vars.push_back(g.leaf(Tensor{values[k].data(), c.inputs[k].shape}, grads[k].data()));
    return forward(g, vars);
  };
  return core::grad_check(f, targets, c.opt);
}

TEST(ModuleGradCheck, EveryModuleMatchesFiniteDifferences) {
  std::vector<ModuleCase> cases;
  for (auto family : {basic_module_cases, rnn_module_cases, memn2n_module_cases, seq_module_cases, copy_module_cases}) {
    auto rows = family();
    cases.insert(cases.end(), rows.begin(), rows.end());
  }
  ASSERT_GT(cases.size(), 0u);
  std::printf("%-40s %12s %8s  %s\n", "module", "worst err", "checked", "worst element");
  for (const auto& c : cases) {
    core::GradCheckResult r;
    ASSERT_NO_THROW(r = check_module(c)) << c.name;
    std::printf("%-40s %12.3e %8lld  %s\n", c.name.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << c.name;
    EXPECT_LE(r.max_error, c.tol) << c.name << ": " << r.worst;
  }
}

}  // namespace
}  // namespace engram::nn
