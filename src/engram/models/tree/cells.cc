// The tree cells, composed from core ops (see cells.h for the equations).
// Dims: n nodes, m children, E embedding, H hidden, N arity.
#include "engram/models/tree/cells.h"

#include "engram/core/ops.h"

namespace engram::models {

namespace {

nn::Linear make_linear(nn::ParamStore& store, const std::string& path, int in, int out, core::Rng& rng) {
  return nn::Linear(store, path, nn::LinearConfig{.in_dim = in, .out_dim = out}, rng);
}

// pre [n, 3H] = [i | o | u] -> c = sigma(i) * tanh(u), h = sigma(o) * tanh(c).
NodeState lstm_leaf(Var pre, int hidden) {
  const std::vector<Var> parts = core::split(pre, {2 * hidden, hidden}, 1);
  const std::vector<Var> io = core::split(core::sigmoid(parts[0]), {hidden, hidden}, 1);
  const Var c = core::mul(io[0], core::tanh(parts[1]));
  return {core::mul(io[1], core::tanh(c)), c};
}

}  // namespace

// ---- recursive net ------------------------------------------------------------------------

RecursiveCell::RecursiveCell(nn::ParamStore& store, std::string path, int embed, int hidden, int arity, core::Rng& rng)
    : Module(store, std::move(path)),
      embed_(embed),
      hidden_(hidden),
      arity_(arity),
      compose_(make_linear(store, child("compose"), arity * hidden, hidden, rng)) {
  ENGRAM_CHECK(embed > 0 && hidden > 0 && arity >= 1, "tree rnn: embed {}, hidden {}, arity {} must be positive", embed,
               hidden, arity);
  if (embed != hidden) leaf_.push_back(make_linear(store, child("leaf"), embed, hidden, rng));
}

// h = x, or tanh(W_leaf x + b_leaf) when E != H
NodeState RecursiveCell::leaf(Graph& g, Var x) const {
  if (leaf_.empty()) return {x, {}};
  return {core::tanh(leaf_[0].forward(g, x)), {}};
}

// h = tanh(W [h_1; ...; h_N] + b)
NodeState RecursiveCell::compose(Graph& g, Var children) const {
  return {core::tanh(compose_.forward(g, children)), {}};
}

// ---- N-ary Tree-LSTM ----------------------------------------------------------------------

NaryTreeLstmCell::NaryTreeLstmCell(nn::ParamStore& store, std::string path, int embed, int hidden, int arity,
                                   core::Rng& rng)
    : Module(store, std::move(path)),
      hidden_(hidden),
      arity_(arity),
      leaf_(make_linear(store, child("leaf"), embed, 3 * hidden, rng)),
      compose_(make_linear(store, child("compose"), arity * hidden, (3 + arity) * hidden, rng)) {
  ENGRAM_CHECK(embed > 0 && hidden > 0 && arity >= 1, "tree treelstm: embed {}, hidden {}, arity {} must be positive",
               embed, hidden, arity);
}

NodeState NaryTreeLstmCell::leaf(Graph& g, Var x) const { return lstm_leaf(leaf_.forward(g, x), hidden_); }

// [i | o | f_1..f_N | u] = U [h_1; ...; h_N] + b;  c = s(i) t(u) + sum_k s(f_k) c_k;  h = s(o) t(c)
NodeState NaryTreeLstmCell::compose(Graph& g, Var children_h, Var children_c) const {
  const int h = hidden_, n = children_h.shape()[0];
  ENGRAM_CHECK(children_c.shape() == children_h.shape() && children_h.shape().last() == arity_ * h,
               "tree treelstm: children h {} and c {} must both be [n, N*H] = [n, {}]", children_h.shape(),
               children_c.shape(), arity_ * h);
  const std::vector<Var> parts = core::split(compose_.forward(g, children_h), {(2 + arity_) * h, h}, 1);
  const std::vector<Var> gates = core::split(core::sigmoid(parts[0]), {h, h, arity_ * h}, 1);  // i, o, f
  Var fc = core::mul(gates[2], children_c);                                                  // [n, N*H]
  if (arity_ > 1) fc = core::sum(core::reshape(fc, {n, arity_, h}), 1);                      // [n, H]
  const Var c = core::add(core::mul(gates[0], core::tanh(parts[1])), fc);
  return {core::mul(gates[1], core::tanh(c)), c};
}

// ---- child-sum Tree-LSTM ------------------------------------------------------------------

ChildSumTreeLstmCell::ChildSumTreeLstmCell(nn::ParamStore& store, std::string path, int embed, int hidden,
                                           core::Rng& rng)
    : Module(store, std::move(path)),
      hidden_(hidden),
      leaf_(make_linear(store, child("leaf"), embed, 3 * hidden, rng)),
      iou_(make_linear(store, child("iou"), hidden, 3 * hidden, rng)),
      forget_(make_linear(store, child("forget"), hidden, hidden, rng)) {
  ENGRAM_CHECK(embed > 0 && hidden > 0, "tree childsum: embed {} and hidden {} must be positive", embed, hidden);
}

NodeState ChildSumTreeLstmCell::leaf(Graph& g, Var x) const { return lstm_leaf(leaf_.forward(g, x), hidden_); }

// c = s(i) t(u) + fc_sum;  h = s(o) t(c)
NodeState ChildSumTreeLstmCell::finish(Graph& g, Var h_sum, Var fc_sum) const {
  const int h = hidden_;
  const std::vector<Var> parts = core::split(iou_.forward(g, h_sum), {2 * h, h}, 1);
  const std::vector<Var> io = core::split(core::sigmoid(parts[0]), {h, h}, 1);
  const Var c = core::add(core::mul(io[0], core::tanh(parts[1])), fc_sum);
  return {core::mul(io[1], core::tanh(c)), c};
}

// h~_j = sum_{k: parent k = j} h_k;  f_k = s(U_f h_k + b_f);  fc_j = sum_{k: parent k = j} f_k c_k
NodeState ChildSumTreeLstmCell::compose(Graph& g, Var child_h, Var child_c, const std::vector<int32_t>& parent,
                                        int n) const {
  const int h = hidden_;
  ENGRAM_CHECK(child_h.shape() == child_c.shape() && child_h.shape().rank() == 2 && child_h.shape()[1] == h &&
                   static_cast<size_t>(child_h.shape()[0]) == parent.size(),
               "tree childsum: child h {} and c {} must be [m, {}] with m = {} parents", child_h.shape(),
               child_c.shape(), h, parent.size());
  const Var zeros = g.zeros({n, h});
  const Var h_sum = core::scatter_add_rows(zeros, child_h, parent);
  const Var fc = core::mul(core::sigmoid(forget_.forward(g, child_h)), child_c);
  return finish(g, h_sum, core::scatter_add_rows(zeros, fc, parent));
}

NodeState ChildSumTreeLstmCell::compose_one(Graph& g, Var child_h, Var child_c) const {
  ENGRAM_CHECK(child_h.shape() == child_c.shape() && child_h.shape().rank() == 2 && child_h.shape()[0] >= 1 &&
                   child_h.shape()[1] == hidden_,
               "tree childsum: child h {} and c {} must be [k >= 1, {}]", child_h.shape(), child_c.shape(), hidden_);
  const Var fc = core::mul(core::sigmoid(forget_.forward(g, child_h)), child_c);
  return finish(g, core::sum(child_h, 0, true), core::sum(fc, 0, true));
}

}  // namespace engram::models
