// The cells of the tree family, each composed from core ops (affine, sigmoid, tanh, mul, add,
// split, sum, scatter_add_rows), so their gradients are the ops' gradients. A cell maps a batch
// of n nodes at once: the per-node execution calls it with n = 1, the level-batched execution
// with every node of one height across a batch of trees (models/tree/model.h).
//   RecursiveCell         h = tanh(W [h_1; ...; h_N] + b); leaves: h = x (E == H), else
//                         h = tanh(W_leaf x + b_leaf)
//   NaryTreeLstmCell      Tai et al. 2015 eq. 9-14 (constituency, N children): gates i, o, one
//                         forget gate f_k per child slot, u; c = i*u + sum_k f_k*c_k, h = o*tanh(c)
//   ChildSumTreeLstmCell  Tai et al. 2015 eq. 2-8: h~ = sum_k h_k; i, o, u from h~; one forget
//                         gate per child f_k = sigma(U_f h_k + b_f); c = i*u + sum_k f_k*c_k
// Constituency trees carry words only at the leaves, so leaves see x (the word embedding) and no
// children, inner nodes see children and no x: a leaf of the LSTM cells is i, o, u from x with
// c = i*u. A node of the N-ary cells with fewer than N children gets zero h and c in the missing
// slots (SST has unary nodes such as `(4 (4 rocks))` only in hand-written trees).
// Dims: n nodes, m children of those n nodes, E embedding, H hidden, N arity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/linear.h"
#include "engram/nn/param_store.h"

namespace engram::models {

using core::Graph;
using core::Var;

// The state of n nodes.
struct NodeState {
  Var h;  // [n, H]
  Var c;  // [n, H] memory (the LSTM cells); invalid for the recursive net
};

class RecursiveCell : public nn::Module {
 public:
  // Adds <path>/compose/{weight [H, N*H], bias [H]} and, when embed != hidden,
  // <path>/leaf/{weight [H, E], bias [H]}.
  RecursiveCell(nn::ParamStore& store, std::string path, int embed, int hidden, int arity, core::Rng& rng);
  // x [n, E] -> h [n, H]. Differentiable in x and the leaf parameters.
  NodeState leaf(Graph& g, Var x) const;
  // children [n, N*H] (h_1 .. h_N side by side per row, zeros for missing children) -> h [n, H].
  NodeState compose(Graph& g, Var children) const;

 private:
  int embed_, hidden_, arity_;
  nn::Linear compose_;             // [H, N*H]
  std::vector<nn::Linear> leaf_;   // [H, E]; empty when E == H
};

class NaryTreeLstmCell : public nn::Module {
 public:
  // Adds <path>/leaf/{weight [3H, E], bias [3H]} (rows: i, o, u) and
  // <path>/compose/{weight [(3+N)H, N*H], bias [(3+N)H]} (rows: i, o, f_1 .. f_N, u).
  NaryTreeLstmCell(nn::ParamStore& store, std::string path, int embed, int hidden, int arity, core::Rng& rng);
  // x [n, E] -> {h, c} [n, H]: c = sigma(i) * tanh(u), h = sigma(o) * tanh(c).
  NodeState leaf(Graph& g, Var x) const;
  // children_h, children_c [n, N*H] (slot k in columns [kH, (k+1)H), zeros for missing children).
  NodeState compose(Graph& g, Var children_h, Var children_c) const;

 private:
  int hidden_, arity_;
  nn::Linear leaf_;     // [3H, E]
  nn::Linear compose_;  // [(3+N)H, N*H]
};

class ChildSumTreeLstmCell : public nn::Module {
 public:
  // Adds <path>/leaf/{weight [3H, E], bias [3H]}, <path>/iou/{weight [3H, H], bias [3H]} and
  // <path>/forget/{weight [H, H], bias [H]}.
  ChildSumTreeLstmCell(nn::ParamStore& store, std::string path, int embed, int hidden, core::Rng& rng);
  // A node without children: x [n, E] -> {h, c} [n, H] as NaryTreeLstmCell::leaf.
  NodeState leaf(Graph& g, Var x) const;
  // n nodes with m >= 1 children in all: child_h, child_c [m, H], parent[k] in [0, n) the node of
  // child row k (every node needs at least one child). Sums over children by scatter_add_rows.
  NodeState compose(Graph& g, Var child_h, Var child_c, const std::vector<int32_t>& parent, int n) const;
  // One node with k >= 1 children child_h, child_c [k, H] -> [1, H]; sums by sum over axis 0 (the
  // reference compose() is tested against).
  NodeState compose_one(Graph& g, Var child_h, Var child_c) const;

 private:
  // i, o, u [n, H] from the h~ [n, H] of n nodes, and the forget gates [m, H] of their children.
  NodeState finish(Graph& g, Var iou, Var fc_sum) const;
  int hidden_;
  nn::Linear leaf_;    // [3H, E]
  nn::Linear iou_;     // [3H, H]
  nn::Linear forget_;  // [H, H]
};

}  // namespace engram::models
