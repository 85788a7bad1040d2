// ParamStore: every trainable parameter of a model, named by module path
// ("encoder/gru_0/w_ih"), in one flat value buffer and one flat gradient buffer.
// Handles (ParamId) stay valid as parameters are added; take Tensors/pointers after the model is
// built (adding parameters may move the buffers).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engram/core/graph.h"

namespace engram::nn {

using core::Graph;
using core::Shape;
using core::Tensor;
using core::Var;

using ParamId = int32_t;

// Zero-initialised floats for a ParamStore's buffers, in pages of their own (mmap): fresh pages
// are zeros that cost nothing until written, and growing remaps the pages (mremap) instead of
// copying and zero-filling them. Invariant: size() floats at data(), each set by the owner or 0;
// the rest of the mapping is 0.
class ZeroedFloats {
 public:
  ZeroedFloats() = default;
  ZeroedFloats(const ZeroedFloats& other);
  ZeroedFloats& operator=(const ZeroedFloats& other);
  ZeroedFloats(ZeroedFloats&& other) noexcept;
  ZeroedFloats& operator=(ZeroedFloats&& other) noexcept;
  ~ZeroedFloats();

  // Grows to n >= size() floats; the new ones are 0. Moves the data.
  void grow(size_t n);
  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes mapped at data_: whole pages, >= size_ floats
};

// While one lives, a ParamStore on this thread refuses to grow past `floats` values, with an error
// naming `what` and the parameter: the checkpoint loader sets it to the size of the tensors it
// will read, so a corrupt or edited config.yaml describing a larger model errors before its
// parameters are mapped.
class ParamBudgetOnThisThread {
 public:
  ParamBudgetOnThisThread(int64_t floats, std::string what);
  ~ParamBudgetOnThisThread();
  ParamBudgetOnThisThread(const ParamBudgetOnThisThread&) = delete;
  ParamBudgetOnThisThread& operator=(const ParamBudgetOnThisThread&) = delete;

 private:
  friend class ParamStore;
  int64_t floats_;
  std::string what_;
  const ParamBudgetOnThisThread* was_;
};

class ParamStore {
 public:
  // Adds a zero-initialised parameter. Names are unique (error on a duplicate); within a
  // ParamBudgetOnThisThread the store's values stay within its floats (error otherwise).
  ParamId add(const std::string& name, Shape shape);

  Tensor value(ParamId id) { return {values_.data() + params_[id].offset, params_[id].shape}; }
  Tensor grad(ParamId id) { return {grads() + params_[id].offset, params_[id].shape}; }
  // The parameter as a leaf of `g`: its gradient accumulates straight into this store (a graph
  // without gradients gets no gradient pointer, so decoding never allocates them).
  Var var(Graph& g, ParamId id) {
    return g.leaf(value(id), g.grad_enabled() ? grads() + params_[id].offset : nullptr);
  }

  const std::string& name(ParamId id) const { return params_[id].name; }
  const Shape& shape(ParamId id) const { return params_[id].shape; }
  int64_t offset(ParamId id) const { return params_[id].offset; }
  std::optional<ParamId> find(const std::string& name) const;
  int32_t count() const { return static_cast<int32_t>(params_.size()); }
  int64_t numel() const { return static_cast<int64_t>(values_.size()); }

  float* values() { return values_.data(); }
  // The gradients [numel()], allocated on first use (a model that only decodes never touches them;
  // the first call must not race another thread's: the trainer's zero_grad() makes it).
  float* grads() {
    if (grads_.size() != values_.size()) grads_.grow(values_.size());
    return grads_.data();
  }
  const float* values() const { return values_.data(); }
  void zero_grad();
  // Copies every value from `other` (same names and shapes, else an error naming the first misfit).
  void copy_values_from(const ParamStore& other);

 private:
  struct Param {
    std::string name;
    Shape shape;
    int64_t offset;
  };
  std::vector<Param> params_;
  std::unordered_map<std::string, ParamId> index_;
  ZeroedFloats values_;  // all parameters, concatenated
  ZeroedFloats grads_;   // same layout once grads() is called; empty before
};

// Base of modules: a store and the module's path in it. Child paths are "<path>/<name>".
class Module {
 public:
  Module(ParamStore& store, std::string path) : store_(&store), path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  ParamStore& store() const { return *store_; }

 protected:
  ParamId add_param(const std::string& name, Shape shape) { return store_->add(child(name), shape); }
  std::string child(const std::string& name) const { return path_.empty() ? name : path_ + "/" + name; }
  Var param(Graph& g, ParamId id) const { return store_->var(g, id); }

 private:
  ParamStore* store_;
  std::string path_;
};

// A bf16 copy of every value of `store` for inference (core/weights_bf16.h), with every
// rank-2 parameter listed as a matrix to pack for the few-row kernel.
core::Bf16Weights bf16_weights(const ParamStore& store);
// One bf16 copy of several stores (an ensemble's members decoded in one graph), each as above.
core::Bf16Weights bf16_weights(std::span<const ParamStore* const> stores);
// int8 copies of every rank-2 parameter of `store` (core/weights_int8.h), and of several stores.
core::Int8Weights int8_weights(const ParamStore& store);
core::Int8Weights int8_weights(std::span<const ParamStore* const> stores);
// Every rank-2 parameter of `store` packed in fp32 for the few-row kernel (core/weights_packed.h).
core::PackedWeights packed_weights(const ParamStore& store);

}  // namespace engram::nn
