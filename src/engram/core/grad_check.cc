// Finite-difference gradient check harness.
#include "engram/core/grad_check.h"

#include <cmath>
#include <limits>
#include <vector>

namespace engram::core {

namespace {

double weighted_sum(const Var& out, const std::vector<float>& w) {
  double s = 0;
  const float* p = out.data();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) s += static_cast<double>(w[i]) * p[i];
  return s;
}

}  // namespace

GradCheckResult grad_check(const std::function<Var(Graph&)>& f, const std::vector<GradTarget>& targets,
                           const GradCheckOptions& opt) {
  Rng rng(opt.seed);
  std::vector<float> w;
  std::vector<std::vector<float>> analytic(targets.size());
  {
    for (const auto& t : targets)
      for (int64_t i = 0; i < t.size; ++i) t.grad[i] = 0.0f;
    Graph g(true);
    Var out = f(g);
    w.resize(out.numel());
    for (auto& x : w) x = rng.uniform(-1.0f, 1.0f);
    g.backward(out, w.data());
    for (size_t k = 0; k < targets.size(); ++k)
      analytic[k].assign(targets[k].grad, targets[k].grad + targets[k].size);
  }
  GradCheckResult r;
  Graph g(false);
  for (size_t k = 0; k < targets.size(); ++k) {
    const GradTarget& t = targets[k];
    const int64_t step = t.size > opt.max_elements ? (t.size + opt.max_elements - 1) / opt.max_elements : 1;
    for (int64_t i = (t.size > opt.max_elements ? static_cast<int64_t>(rng.below(step)) : 0); i < t.size; i += step) {
      const float orig = t.value[i];
      const float up = orig + opt.eps, down = orig - opt.eps;
      t.value[i] = up;
      g.reset();
      const double lp = weighted_sum(f(g), w);
      t.value[i] = down;
      g.reset();
      const double lm = weighted_sum(f(g), w);
      t.value[i] = orig;
      const double numeric = (lp - lm) / (static_cast<double>(up) - static_cast<double>(down));
      const double a = analytic[k][i];
      const double err = std::fabs(a - numeric) / std::max({std::fabs(a), std::fabs(numeric), opt.floor});
      ++r.checked;
      // NaN anywhere counts as an infinite error, so a row producing NaN cannot pass.
      const double scored = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
      if (scored > r.max_error || r.worst.empty()) {
        r.max_error = scored;
        r.worst = fmt::format("{}[{}]: analytic {:.6g} vs numeric {:.6g}", t.name, i, a, numeric);
      }
    }
  }
  return r;
}

GradCheckResult grad_check_op(const std::function<Var(Graph&, const std::vector<Var>&)>& op,
                              const std::vector<OpInput>& inputs, const GradCheckOptions& opt) {
  Rng rng(opt.seed * 31 + 1);
  std::vector<std::vector<float>> values(inputs.size()), grads(inputs.size());
  std::vector<GradTarget> targets;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int64_t n = inputs[k].shape.numel();
    values[k].resize(n);
    grads[k].resize(n);
    for (auto& v : values[k]) v = rng.uniform(inputs[k].lo, inputs[k].hi);
    targets.push_back({fmt::format("in{}", k), values[k].data(), grads[k].data(), n});
  }
  auto f = [&](Graph& g) {
    std::vector<Var> vars;
    for (size_t k = 0; k < inputs.size(); ++k)
      vars.push_back(g.leaf(Tensor{values[k].data(), inputs[k].shape}, grads[k].data()));
    return op(g, vars);
  };
  return grad_check(f, targets, opt);
}

}  // namespace engram::core
