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

class ParamStore {
 public:
  // Adds a zero-initialised parameter. Names are unique (error on a duplicate).
  ParamId add(const std::string& name, Shape shape);

  Tensor value(ParamId id) { return {values_.data() + params_[id].offset, params_[id].shape}; }
  Tensor grad(ParamId id) { return {grads_.data() + params_[id].offset, params_[id].shape}; }
  // The parameter as a leaf of `g`: its gradient accumulates straight into this store.
  Var var(Graph& g, ParamId id) { return g.leaf(value(id), grads_.data() + params_[id].offset); }

  const std::string& name(ParamId id) const { return params_[id].name; }
  const Shape& shape(ParamId id) const { return params_[id].shape; }
  int64_t offset(ParamId id) const { return params_[id].offset; }
  std::optional<ParamId> find(const std::string& name) const;
  int32_t count() const { return static_cast<int32_t>(params_.size()); }
  int64_t numel() const { return static_cast<int64_t>(values_.size()); }

  float* values() { return values_.data(); }
  float* grads() { return grads_.data(); }
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
  std::vector<float> values_;  // all parameters, concatenated
  std::vector<float> grads_;   // same layout
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
