// The one table-driven gradient check over every op: prints the worst scaled error per row.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/grad_cases.h"

namespace engram::core {
namespace {

std::vector<GradCase> all_cases() {
  std::vector<GradCase> all;
  for (auto family : {elementwise_cases, matmul_cases, reduce_cases, shape_cases, index_cases,
                      softmax_cases, loss_cases, memory_cases, norm_cases, rnn_cases, ntm_cases}) {
    auto rows = family();
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

TEST(GradCheck, EveryOpMatchesFiniteDifferences) {
  auto cases = all_cases();
  ASSERT_GT(cases.size(), 0u);
  std::printf("%-36s %12s %8s  %s\n", "op", "worst err", "checked", "worst element");
  for (const auto& c : cases) {
    GradCheckResult r;
    ASSERT_NO_THROW(r = grad_check_op(c.fn, c.inputs, c.opt)) << c.op;
    std::printf("%-36s %12.3e %8lld  %s\n", c.op.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << c.op;
    EXPECT_LE(r.max_error, c.tol) << c.op << ": " << r.worst;
  }
}

}  // namespace
}  // namespace engram::core
