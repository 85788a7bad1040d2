// Graph: the tape of a define-by-run computation. Each op runs its forward at once, allocates
// its result in the graph's Arena and records a Node holding a plain backward function pointer.
// backward(loss) walks the tape in reverse; every node's backward ACCUMULATES into the gradients
// of its inputs. A Graph belongs to one thread; any number of graphs may run in parallel.
// With grad disabled (inference mode) no backward is recorded and no gradient is allocated.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "engram/core/arena.h"
#include "engram/core/weights_bf16.h"
#include "engram/core/weights_int8.h"
#include "engram/core/weights_packed.h"
#include "engram/core/tensor.h"

namespace engram::core {

class Graph;
struct Node;

// Backward of one node: read n.grad (dL/d output) and add into the inputs' gradients.
using BackwardFn = void (*)(Graph& g, const Node& n);

struct Node {
  Tensor value;              // forward result
  float* grad = nullptr;     // dL/dvalue, same numel; allocated on first use
  BackwardFn backward = nullptr;
  int32_t in[3] = {-1, -1, -1};  // input node ids (ops with more inputs keep them in `aux`)
  bool needs_grad = false;
  // Small per-op payload, so most ops need no extra allocation.
  float f[2] = {0, 0};
  int32_t i[4] = {0, 0, 0, 0};
  void* aux = nullptr;       // arena memory for anything bigger (saved stats, index lists, ...)
  // A zero-copy view (Graph::view): its value and gradient alias node `view_of` at `view_offset`.
  int32_t view_of = -1;
  int64_t view_offset = 0;
};

// A handle to a node of a graph: cheap to copy, valid until the graph is reset.
struct Var {
  Graph* g = nullptr;
  int32_t id = -1;

  bool valid() const { return g != nullptr; }
  inline const Tensor& value() const;
  inline const Shape& shape() const;
  inline float* data() const;
  inline int64_t numel() const;
  inline bool needs_grad() const;
  // dL/dvalue after backward(); nullptr when no gradient reached this node.
  inline const float* grad() const;
};

class Graph {
 public:
  explicit Graph(bool grad_enabled = true, size_t arena_bytes = size_t{1} << 22);
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool on) { grad_enabled_ = on; }

  // Inference with bf16 weights (weights_bf16.h): while gradients are off, products x·Wᵀ whose W
  // lies in `w` run in bf16 on W's bf16 copy (ops/matmul.h weight_product). nullptr (the default)
  // = fp32 everywhere. `w` must outlive its use; reset() keeps it.
  void use_bf16_weights(const Bf16Weights* w) { bf16_ = w; }
  // The bf16 copy to use for weight `w`, or nullptr for fp32.
  const uint16_t* bf16_weight(const float* w) const { return bf16_ && !grad_enabled_ ? bf16_->find(w) : nullptr; }
  // Its packed copy when `w` starts a matrix [n, k] the Bf16Weights packed, else nullptr.
  const uint16_t* bf16_packed(const float* w, int n, int k) const {
    return bf16_ && !grad_enabled_ ? bf16_->find_packed(w, n, k) : nullptr;
  }
  // Inference with int8 weights (weights_int8.h): while gradients are off, products x·Wᵀ whose W
  // is a matrix listed in `w` run on W's int8 copy with x quantized per row (ops/matmul.h
  // weight_product); every other product stays as it was. nullptr (the default) = none. `w` must
  // outlive its use; reset() keeps it.
  void use_int8_weights(const Int8Weights* w) { int8_ = w; }
  // The int8 copy of the listed matrix [n, k] starting at `w`, or nullptr.
  const int8_t* int8_packed(const float* w, int n, int k) const {
    return int8_ && !grad_enabled_ ? int8_->find(w, n, k) : nullptr;
  }
  // Inference with fp32 weights packed for the few-row kernel (weights_packed.h): while gradients
  // are off, few-row products x·Wᵀ whose W is listed in `w` (and not run in bf16) read its packed
  // copy. Same values, same precision. nullptr (the default) = the plain layout. `w` must outlive
  // its use; reset() keeps it.
  void use_packed_weights(const PackedWeights* w) { packed_ = w; }
  const float* f32_packed(const float* w, int n, int k) const {
    return packed_ && !grad_enabled_ ? packed_->find(w, n, k) : nullptr;
  }

  // ---- leaves
  // A constant: copies `t` into the arena; never receives a gradient.
  Var constant(const Tensor& t);
  Var constant(Shape shape, const float* values);
  Var zeros(Shape shape);
  Var full(Shape shape, float v);
  // A view of caller-owned data without copying; no gradient (the data must outlive the graph use).
  Var input(const Tensor& t);
  // A trainable leaf: `grad` (same numel, caller-owned, e.g. a ParamStore buffer) receives the
  // accumulated gradient in backward(). With grad disabled it behaves like input().
  Var leaf(const Tensor& value, float* grad);
  // A leaf whose gradient lives in the arena (read it with Var::grad() after backward()).
  Var variable(const Tensor& value);

  // A zero-copy view of `shape.numel()` contiguous values of `parent` starting at `offset`.
  // Differentiable with no backward pass of its own: the view's gradient buffer IS the matching
  // part of the parent's gradient (allocated when first needed), so consumers accumulate
  // straight into the parent.
  Var view(Var parent, int64_t offset, Shape shape);

  // ---- backward
  // Seeds dL/dloss = 1 (loss must have one element) and runs the tape backwards.
  void backward(Var loss);
  // Seeds dL/dout = seed (out.numel() values) instead.
  void backward(Var out, const float* seed);

  // Drop the tape and the arena contents (keeps their memory).
  void reset();

  // For backward functions: dW [n, k] += dyᵀ x for dy [rows, n] and x [rows, k] (row strides ldy,
  // ldx), where W is node `w` (a no-op when W needs no gradient). For a parameter (a leaf: no
  // backward of its own, not a view) and fewer than kDeferRows rows, the rows are copied aside and
  // every such term of W is summed by one product [n, R]·[R, k] when backward() ends (a decoder
  // step's B rows, once per step, become one product of all steps' rows); otherwise at once. A
  // leaf's gradient is read only after backward(), so the sum is the same up to fp32 rounding.
  static constexpr int kDeferRows = 256;
  void weight_grad(int32_t w, int n, int k, int rows, const float* dy, int ldy, const float* x, int ldx);

  // ---- for op implementers
  Tensor alloc(Shape shape) { return {arena_.floats(shape.numel()), shape}; }
  Tensor alloc_zero(Shape shape) {
    Tensor t = alloc(shape);
    t.zero();
    return t;
  }
  Arena& arena() { return arena_; }
  // Records a result. The node needs a gradient iff grad is enabled and some input needs one;
  // otherwise `fn` is dropped. Returns the new Var; use node(v) to fill the payload.
  Var record(const Tensor& value, BackwardFn fn, std::initializer_list<Var> inputs);
  Node& node(Var v) { return nodes_[v.id]; }
  const Node& node(int32_t id) const { return nodes_[id]; }
  // Gradient buffer of node `id` for accumulation, zero-initialised on first use; nullptr if the
  // node needs no gradient (or id < 0), so backward functions can skip that input.
  float* grad(int32_t id);
  size_t size() const { return nodes_.size(); }

 private:
  friend struct Var;
  Arena arena_;
  std::vector<Node> nodes_;
  bool grad_enabled_;
  const Bf16Weights* bf16_ = nullptr;
  const Int8Weights* int8_ = nullptr;
  const PackedWeights* packed_ = nullptr;
  // Deferred weight-gradient rows (weight_grad), one entry per gradient buffer; the vectors keep
  // their capacity across backward() calls and resets.
  struct DeferredGrad {
    float* dw = nullptr;
    int n = 0, k = 0, rows = 0;
    std::vector<float> dy, x;  // [rows, n], [rows, k]
  };
  std::vector<DeferredGrad> deferred_;
  void flush_weight_grads();
};

inline const Tensor& Var::value() const { return g->nodes_[id].value; }
inline const Shape& Var::shape() const { return g->nodes_[id].value.shape; }
inline float* Var::data() const { return g->nodes_[id].value.data; }
inline int64_t Var::numel() const { return g->nodes_[id].value.numel(); }
inline bool Var::needs_grad() const { return g->nodes_[id].needs_grad; }
inline const float* Var::grad() const { return g->nodes_[id].grad; }

// Scoped inference mode: disables gradient recording on a graph and restores it after.
class NoGrad {
 public:
  explicit NoGrad(Graph& g) : g_(g), was_(g.grad_enabled()) { g.set_grad_enabled(false); }
  ~NoGrad() { g_.set_grad_enabled(was_); }

 private:
  Graph& g_;
  bool was_;
};

}  // namespace engram::core
