// Element-wise ops: shape rule + forward + accumulating backward, side by side.
#include "engram/core/ops/elementwise.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "engram/core/kernels/parallel.h"
#include "engram/core/ops/broadcast.h"

namespace engram::core {

namespace ops_detail {

Broadcast broadcast(const Shape& a, const Shape& b) {
  Broadcast bc{};
  int r = a.rank() > b.rank() ? a.rank() : b.rank();
  int da[4] = {1, 1, 1, 1}, db[4] = {1, 1, 1, 1};
  for (int i = 0; i < a.rank(); ++i) da[4 - a.rank() + i] = a[i];
  for (int i = 0; i < b.rank(); ++i) db[4 - b.rank() + i] = b[i];
  int64_t stride_a = 1, stride_b = 1;
  for (int i = 3; i >= 0; --i) {
    ENGRAM_CHECK(da[i] == db[i] || da[i] == 1 || db[i] == 1, "cannot broadcast {} with {}", a, b);
    bc.d[i] = da[i] > db[i] ? da[i] : db[i];
    if (da[i] == 0 || db[i] == 0) bc.d[i] = 0;
    bc.sa[i] = da[i] == 1 ? 0 : stride_a;
    bc.sb[i] = db[i] == 1 ? 0 : stride_b;
    stride_a *= da[i];
    stride_b *= db[i];
  }
  bc.out = Shape::from(bc.d + 4 - r, bc.d + 4);
  bc.same = a == b;
  bc.b_scalar = b.numel() == 1 && a == bc.out;
  return bc;
}

}  // namespace ops_detail

namespace {

using ops_detail::Broadcast;
using ops_detail::broadcast;
using ops_detail::for_each_broadcast;

// Element-wise loops over the calling thread's team (kernels/parallel.h: parallel_for) in blocks
// of kBlock elements; loops under kGrain elements stay on the calling thread.
constexpr int64_t kBlock = 1024, kGrain = int64_t{1} << 15;
template <class Fn>
void for_blocks(int64_t n, Fn&& fn) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  kernels::parallel_for(blocks, kGrain / kBlock,
                        [&](int64_t b, int64_t e) { fn(b * kBlock, std::min(n, e * kBlock)); });
}

// Binary op skeleton: forward y = F(a, b); backward via DA(dy, a, b, y), DB(dy, a, b, y).
// The Broadcast is stashed in the arena so backward can reduce over broadcast dimensions.
template <class Fwd>
Var binary(Var a, Var b, Fwd fwd, BackwardFn bwd) {
  Graph& g = *a.g;
  Broadcast bc = broadcast(a.shape(), b.shape());
  Tensor y = g.alloc(bc.out);
  const float *pa = a.data(), *pb = b.data();
  float* py = y.data;
  if (bc.same) {
    for_blocks(y.numel(), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) py[i] = fwd(pa[i], pb[i]);
    });
  } else if (bc.b_scalar) {
    const float s = pb[0];
    for_blocks(y.numel(), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) py[i] = fwd(pa[i], s);
    });
  } else {
    for_each_broadcast(bc, [&](int64_t ia, int64_t ib, int64_t io) { py[io] = fwd(pa[ia], pb[ib]); });
  }
  Var v = g.record(y, bwd, {a, b});
  if (v.needs_grad()) {
    auto* saved = g.arena().array<Broadcast>(1);
    *saved = bc;
    g.node(v).aux = saved;
  }
  return v;
}

// Backward skeleton: da[ia] += GA(dy, a, b, y); db[ib] += GB(dy, a, b, y).
template <class GA, class GB>
void binary_backward(Graph& g, const Node& n, GA ga, GB gb) {
  const Broadcast& bc = *static_cast<const Broadcast*>(n.aux);
  const float* pa = g.node(n.in[0]).value.data;
  const float* pb = g.node(n.in[1]).value.data;
  const float* py = n.value.data;
  const float* dy = n.grad;
  float* da = g.grad(n.in[0]);
  float* db = g.grad(n.in[1]);
  if (bc.same) {
    for_blocks(n.value.numel(), [&](int64_t lo, int64_t hi) {
      if (da)
        for (int64_t i = lo; i < hi; ++i) da[i] += ga(dy[i], pa[i], pb[i], py[i]);
      if (db)
        for (int64_t i = lo; i < hi; ++i) db[i] += gb(dy[i], pa[i], pb[i], py[i]);
    });
    return;
  }
  for_each_broadcast(bc, [&](int64_t ia, int64_t ib, int64_t io) {
    if (da) da[ia] += ga(dy[io], pa[ia], pb[ib], py[io]);
    if (db) db[ib] += gb(dy[io], pa[ia], pb[ib], py[io]);
  });
}

// Unary op skeleton: y = F(x); backward dx += dy * D(x, y), with constants f[0], f[1].
template <class Fwd>
Var unary(Var x, Fwd fwd, BackwardFn bwd, float c0 = 0, float c1 = 0) {
  Graph& g = *x.g;
  Tensor y = g.alloc(x.shape());
  const float* px = x.data();
  for (int64_t i = 0, n = y.numel(); i < n; ++i) y.data[i] = fwd(px[i]);
  Var v = g.record(y, bwd, {x});
  g.node(v).f[0] = c0;
  g.node(v).f[1] = c1;
  return v;
}

// Unary op whose forward is a whole-array Eigen expression (vectorised exp/log/tanh/...):
// fwd(ArrayMap in) returns the expression for y.
template <class Fwd>
Var unary_array(Var x, Fwd fwd, BackwardFn bwd) {
  Graph& g = *x.g;
  Tensor y = g.alloc(x.shape());
  const float* px = x.data();
  // Blocks of kBlock elements (a multiple of every vector width): each element goes through the
  // same vectorised code whatever the thread count.
  for_blocks(y.numel(), [&](int64_t b, int64_t e) {
    Eigen::Map<Eigen::ArrayXf>(y.data + b, e - b) = fwd(Eigen::Map<const Eigen::ArrayXf>(px + b, e - b));
  });
  return g.record(y, bwd, {x});
}

template <class D>
void unary_backward(Graph& g, const Node& n, D deriv) {
  float* dx = g.grad(n.in[0]);
  if (!dx) return;
  const float* px = g.node(n.in[0]).value.data;
  const float* py = n.value.data;
  const float* dy = n.grad;
  for_blocks(n.value.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] += dy[i] * deriv(px[i], py[i], n);
  });
}

}  // namespace

// y = a + b;  da += dy, db += dy
Var add(Var a, Var b) {
  return binary(a, b, [](float x, float y) { return x + y; }, [](Graph& g, const Node& n) {
    binary_backward(g, n, [](float d, float, float, float) { return d; },
                    [](float d, float, float, float) { return d; });
  });
}

// y = a - b;  da += dy, db -= dy
Var sub(Var a, Var b) {
  return binary(a, b, [](float x, float y) { return x - y; }, [](Graph& g, const Node& n) {
    binary_backward(g, n, [](float d, float, float, float) { return d; },
                    [](float d, float, float, float) { return -d; });
  });
}

// y = a * b;  da += dy b, db += dy a
Var mul(Var a, Var b) {
  return binary(a, b, [](float x, float y) { return x * y; }, [](Graph& g, const Node& n) {
    binary_backward(g, n, [](float d, float, float b, float) { return d * b; },
                    [](float d, float a, float, float) { return d * a; });
  });
}

// y = a / b;  da += dy / b, db -= dy a / b^2
Var div(Var a, Var b) {
  return binary(a, b, [](float x, float y) { return x / y; }, [](Graph& g, const Node& n) {
    binary_backward(g, n, [](float d, float, float b, float) { return d / b; },
                    [](float d, float a, float b, float) { return -d * a / (b * b); });
  });
}

// y = -x;  dx -= dy
Var neg(Var x) {
  return unary(x, [](float v) { return -v; }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float, const Node&) { return -1.0f; });
  });
}

// y = s x;  dx += s dy
Var scale(Var x, float s) {
  return unary(x, [s](float v) { return s * v; }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float, const Node& nd) { return nd.f[0]; });
  }, s);
}

// y = x + s;  dx += dy
Var add_scalar(Var x, float s) {
  return unary(x, [s](float v) { return v + s; }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float, const Node&) { return 1.0f; });
  });
}

// y = 1 - x;  dx -= dy
Var one_minus(Var x) {
  return unary(x, [](float v) { return 1.0f - v; }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float, const Node&) { return -1.0f; });
  });
}

// y = e^x;  dx += dy y
Var exp(Var x) {
  return unary_array(x, [](const auto& a) { return a.exp(); }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float y, const Node&) { return y; });
  });
}

// y = ln x;  dx += dy / x
Var log(Var x) {
  return unary_array(x, [](const auto& a) { return a.log(); }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float x, float, const Node&) { return 1.0f / x; });
  });
}

// y = tanh x;  dx += dy (1 - y^2)
Var tanh(Var x) {
  return unary_array(x, [](const auto& a) { return a.tanh(); }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float y, const Node&) { return 1.0f - y * y; });
  });
}

// y = 1 / (1 + e^-x);  dx += dy y (1 - y)
Var sigmoid(Var x) {
  return unary_array(x, [](const auto& a) { return a.logistic(); }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float y, const Node&) { return y * (1.0f - y); });
  });
}

// y = max(0, x);  dx += dy [x > 0]
Var relu(Var x) {
  return unary(x, [](float v) { return v > 0 ? v : 0.0f; }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float x, float, const Node&) { return x > 0 ? 1.0f : 0.0f; });
  });
}

// y = log(1 + e^x) = max(x, 0) + log1p(e^-|x|);  dx += dy sigmoid(x)
Var softplus(Var x) {
  return unary(x, [](float v) { return std::max(v, 0.0f) + std::log1p(std::exp(-std::fabs(v))); },
               [](Graph& g, const Node& n) {
                 unary_backward(g, n, [](float x, float, const Node&) { return 1.0f / (1.0f + std::exp(-x)); });
               });
}

// y = x^p;  dx += dy p x^(p-1)
Var pow(Var x, float p) {
  return unary(x, [p](float v) { return std::pow(v, p); }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float x, float, const Node& nd) { return nd.f[0] * std::pow(x, nd.f[0] - 1.0f); });
  }, p);
}

// y = sqrt x;  dx += dy / (2 y)
Var sqrt(Var x) {
  return unary_array(x, [](const auto& a) { return a.sqrt(); }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float, float y, const Node&) { return 0.5f / y; });
  });
}

// y = x^2;  dx += 2 x dy
Var square(Var x) {
  return unary(x, [](float v) { return v * v; }, [](Graph& g, const Node& n) {
    unary_backward(g, n, [](float x, float, const Node&) { return 2.0f * x; });
  });
}

}  // namespace engram::core
