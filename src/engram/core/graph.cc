// Graph: leaves, recording and the reverse walk of the tape.
#include "engram/core/graph.h"

#include <algorithm>
#include <cstring>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/kernels/parallel.h"

namespace engram::core {

Graph::Graph(bool grad_enabled, size_t arena_bytes) : arena_(arena_bytes), grad_enabled_(grad_enabled) {
  nodes_.reserve(1024);
}

Var Graph::constant(const Tensor& t) { return constant(t.shape, t.data); }

Var Graph::constant(Shape shape, const float* values) {
  Tensor t = alloc(shape);
  if (t.numel()) std::memcpy(t.data, values, sizeof(float) * t.numel());
  return input(t);
}

Var Graph::zeros(Shape shape) { return input(alloc_zero(shape)); }

Var Graph::full(Shape shape, float v) {
  Tensor t = alloc(shape);
  t.fill(v);
  return input(t);
}

Var Graph::input(const Tensor& t) {
  Node& n = nodes_.emplace_back();
  n.value = t;
  return {this, static_cast<int32_t>(nodes_.size() - 1)};
}

Var Graph::leaf(const Tensor& value, float* grad) {
  Var v = input(value);
  if (grad_enabled_) {
    Node& n = nodes_[v.id];
    n.needs_grad = true;
    n.grad = grad;
  }
  return v;
}

Var Graph::variable(const Tensor& value) {
  Var v = input(value);
  nodes_[v.id].needs_grad = grad_enabled_;
  return v;
}

Var Graph::record(const Tensor& value, BackwardFn fn, std::initializer_list<Var> inputs) {
  Node& n = nodes_.emplace_back();
  n.value = value;
  int k = 0;
  bool needs = false;
  for (const Var& v : inputs) {
    ENGRAM_CHECK(v.g == this, "op input belongs to another graph");
    if (k < 3) n.in[k] = v.id;
    ++k;
    needs = needs || nodes_[v.id].needs_grad;
  }
  if (grad_enabled_ && needs) {
    n.needs_grad = true;
    n.backward = fn;
  }
  return {this, static_cast<int32_t>(nodes_.size() - 1)};
}

Var Graph::view(Var parent, int64_t offset, Shape shape) {
  ENGRAM_CHECK(parent.g == this, "view of a Var of another graph");
  ENGRAM_CHECK(offset >= 0 && offset + shape.numel() <= parent.numel(), "view of {} values at {} out of range for {}",
               shape.numel(), offset, parent.shape());
  Node& n = nodes_.emplace_back();
  n.value = Tensor{nodes_[parent.id].value.data + offset, shape};
  n.needs_grad = grad_enabled_ && nodes_[parent.id].needs_grad;
  n.view_of = parent.id;
  n.view_offset = offset;
  return {this, static_cast<int32_t>(nodes_.size() - 1)};
}

float* Graph::grad(int32_t id) {
  if (id < 0) return nullptr;
  Node& n = nodes_[id];
  if (!n.needs_grad) return nullptr;
  if (!n.grad && n.view_of >= 0) {
    const int32_t parent = n.view_of;
    const int64_t offset = n.view_offset;
    float* pg = grad(parent);  // may not push nodes: `n` stays valid
    nodes_[id].grad = pg + offset;
    return nodes_[id].grad;
  }
  if (!n.grad) {
    float* p = n.grad = arena_.floats(n.value.numel());
    // Zeroed over the thread team in 16k-float blocks (big buffers: the [rows, vocab] logits).
    constexpr int64_t kBlock = 16384;
    const int64_t count = n.value.numel();
    kernels::parallel_for((count + kBlock - 1) / kBlock, 4, [p, count](int64_t b, int64_t e) {
      const int64_t lo = b * kBlock, hi = std::min(count, e * kBlock);
      std::memset(p + lo, 0, sizeof(float) * (hi - lo));
    });
  }
  return n.grad;
}

void Graph::backward(Var loss) {
  ENGRAM_CHECK(loss.numel() == 1, "backward(loss) needs a single-element loss, got {}", loss.shape());
  const float one = 1.0f;
  backward(loss, &one);
}

void Graph::backward(Var out, const float* seed) {
  ENGRAM_CHECK(out.g == this, "backward on a Var of another graph");
  ENGRAM_CHECK(grad_enabled_, "backward() called on a graph in inference mode");
  float* d = grad(out.id);
  if (!d) return;  // nothing trainable upstream
  for (int64_t i = 0, n = out.numel(); i < n; ++i) d[i] += seed[i];
  for (int32_t id = out.id; id >= 0; --id) {
    const Node& n = nodes_[id];
    if (n.backward && n.grad) n.backward(*this, n);
  }
  flush_weight_grads();
}

void Graph::weight_grad(int32_t w, int n, int k, int rows, const float* dy, int ldy, const float* x, int ldx) {
  float* dw = grad(w);
  if (!dw || rows <= 0) return;
  const Node& node = nodes_[w];
  if (node.backward || node.view_of >= 0 || rows >= kDeferRows) {
    kernels::sgemm(true, false, n, k, rows, 1.0f, dy, ldy, x, ldx, 1.0f, dw, k);
    return;
  }
  auto it = std::find_if(deferred_.begin(), deferred_.end(),
                         [&](const DeferredGrad& d) { return d.dw == dw || d.rows == 0; });
  if (it == deferred_.end()) it = deferred_.insert(deferred_.end(), DeferredGrad{});
  if (it->rows == 0) *it = DeferredGrad{dw, n, k, 0, std::move(it->dy), std::move(it->x)};
  ENGRAM_CHECK(it->n == n && it->k == k, "weight_grad: [{}, {}] rows for a gradient of [{}, {}]", n, k, it->n, it->k);
  it->dy.resize(static_cast<size_t>(it->rows + rows) * n);
  it->x.resize(static_cast<size_t>(it->rows + rows) * k);
  for (int r = 0; r < rows; ++r) {
    std::copy_n(dy + static_cast<int64_t>(r) * ldy, n, it->dy.data() + static_cast<int64_t>(it->rows + r) * n);
    std::copy_n(x + static_cast<int64_t>(r) * ldx, k, it->x.data() + static_cast<int64_t>(it->rows + r) * k);
  }
  it->rows += rows;
}

void Graph::flush_weight_grads() {
  for (DeferredGrad& d : deferred_) {
    if (d.rows == 0) continue;
    kernels::sgemm(true, false, d.n, d.k, d.rows, 1.0f, d.dy.data(), d.n, d.x.data(), d.k, 1.0f, d.dw, d.k);
    d.rows = 0;
  }
}

void Graph::reset() {
  for (DeferredGrad& d : deferred_) d.rows = 0;  // rows of a backward() that threw
  nodes_.clear();
  arena_.reset();
}

}  // namespace engram::core
