// The two executions of a tree model over a batch of trees (model.h): node by node in post-order,
// and batched by level. Both return every node's h in canonical order (tree by tree, post-order).
// Dims: n nodes of one level, m their children, N arity, H hidden, E embedding, L leaves.
#include <algorithm>
#include <numeric>

#include "engram/core/ops.h"
#include "engram/models/tree/model.h"

namespace engram::models {

namespace {

void check_arity(const data::Tree& t, int32_t node, int arity, TreeCell cell) {
  ENGRAM_CHECK(t.node(node).num_children <= arity,
               "tree (line {}): node {} has {} children; the {} cell takes at most tree.arity = {}", t.line, node,
               t.node(node).num_children, tree_cell_name(cell), arity);
}

// Where a node's state lives in the level-batched execution: row `row` of level `level`;
// level -1 = a zero state (a missing child slot of the N-ary cells).
struct LevelRef {
  int32_t level = -1;
  int32_t row = 0;
};

// Rows refs[k] of the level tensors srcs[level] ([n_level, W] each) -> [K, W]. Each level
// contributes one select_rows (or itself, when every row is taken in order), and the parts are
// put in the order of `refs` by one more select_rows when there is more than one part.
Var gather_level_rows(Graph& g, const std::vector<Var>& srcs, const std::vector<LevelRef>& refs, int width) {
  const int levels = static_cast<int>(srcs.size());
  std::vector<std::vector<int32_t>> rows(static_cast<size_t>(levels) + 1);  // [levels + 1]: the last is zeros
  std::vector<std::pair<int32_t, int32_t>> at(refs.size());               // (group, index in group)
  for (size_t k = 0; k < refs.size(); ++k) {
    const int32_t grp = refs[k].level < 0 ? levels : refs[k].level;
    auto& r = rows[static_cast<size_t>(grp)];
    if (grp == levels) {
      if (r.empty()) r.push_back(0);
      at[k] = {grp, 0};
    } else {
      at[k] = {grp, static_cast<int32_t>(r.size())};
      r.push_back(refs[k].row);
    }
  }
  std::vector<Var> parts;
  std::vector<int32_t> part_offset(static_cast<size_t>(levels) + 1, 0);
  int32_t offset = 0;
  for (int grp = 0; grp <= levels; ++grp) {
    const auto& r = rows[static_cast<size_t>(grp)];
    if (r.empty()) continue;
    part_offset[static_cast<size_t>(grp)] = offset;
    offset += static_cast<int32_t>(r.size());
    if (grp == levels) {
      parts.push_back(g.zeros({1, width}));
      continue;
    }
    const Var src = srcs[static_cast<size_t>(grp)];
    bool whole = static_cast<int>(r.size()) == src.shape()[0];
    for (size_t i = 0; whole && i < r.size(); ++i) whole = r[i] == static_cast<int32_t>(i);
    parts.push_back(whole ? src : core::select_rows(src, r));
  }
  if (parts.size() == 1 && rows[static_cast<size_t>(levels)].empty()) return parts[0];  // already in order
  std::vector<int32_t> order(refs.size());
  for (size_t k = 0; k < refs.size(); ++k) order[k] = part_offset[static_cast<size_t>(at[k].first)] + at[k].second;
  return core::select_rows(core::concat(parts, 0), order);
}

}  // namespace

// Node by node: a leaf's embedding row -> cell.leaf; an inner node's children -> cell.compose.
Var TreeModel::states_per_node(Graph& g, std::span<const data::Tree> trees) const {
  const int hidden = cfg_.hidden, arity = cfg_.arity;
  const Var zero = g.zeros({1, hidden});  // a missing child slot (rnn, treelstm)
  std::vector<Var> all_h;
  std::vector<NodeState> st;
  for (const data::Tree& t : trees) {
    const Var x = embedding_.forward(g, t.word_ids);  // [L, E]
    st.assign(static_cast<size_t>(t.size()), {});
    for (int32_t n = 0; n < t.size(); ++n) {
      const data::TreeNode& node = t.node(n);
      NodeState& s = st[static_cast<size_t>(n)];
      if (node.num_children == 0) {
        const Var xn = core::slice(x, 0, node.leaf, node.leaf + 1);  // [1, E]
        s = rnn_ ? rnn_->leaf(g, xn) : nary_ ? nary_->leaf(g, xn) : childsum_->leaf(g, xn);
      } else if (childsum_) {
        std::vector<Var> hs, cs;
        for (int32_t c : t.children(n)) hs.push_back(st[static_cast<size_t>(c)].h), cs.push_back(st[static_cast<size_t>(c)].c);
        s = childsum_->compose_one(g, hs.size() == 1 ? hs[0] : core::concat(hs, 0),
                                   cs.size() == 1 ? cs[0] : core::concat(cs, 0));  // [k, H] each
      } else {
        check_arity(t, n, arity, cfg_.cell);
        std::vector<Var> hs(static_cast<size_t>(arity), zero), cs(static_cast<size_t>(arity), zero);
        const auto ch = t.children(n);
        for (size_t k = 0; k < ch.size(); ++k) hs[k] = st[static_cast<size_t>(ch[k])].h, cs[k] = st[static_cast<size_t>(ch[k])].c;
        const Var h_cat = arity == 1 ? hs[0] : core::concat(hs, 1);  // [1, N*H]
        s = rnn_ ? rnn_->compose(g, h_cat) : nary_->compose(g, h_cat, arity == 1 ? cs[0] : core::concat(cs, 1));
      }
      all_h.push_back(s.h);
    }
  }
  return all_h.size() == 1 ? all_h[0] : core::concat(all_h, 0);  // [N_all, H]
}

// Level by level: level 0 (every leaf of every tree) is one embedding lookup and one leaf cell
// call; level k >= 1 gathers its nodes' children from the levels below and makes one compose
// call. The levels' h are then put in canonical order by one select_rows.
Var TreeModel::states_by_level(Graph& g, std::span<const data::Tree> trees) const {
  const int hidden = cfg_.hidden, arity = cfg_.arity;
  const std::vector<std::vector<data::NodeRef>> levels = data::batch_levels(trees);
  std::vector<int32_t> tree_offset(trees.size() + 1, 0);
  for (size_t t = 0; t < trees.size(); ++t) tree_offset[t + 1] = tree_offset[t] + trees[t].size();
  std::vector<LevelRef> where(static_cast<size_t>(tree_offset.back()));  // canonical node -> (level, row)
  for (size_t l = 0; l < levels.size(); ++l)
    for (size_t r = 0; r < levels[l].size(); ++r) {
      const data::NodeRef& ref = levels[l][r];
      where[static_cast<size_t>(tree_offset[static_cast<size_t>(ref.tree)] + ref.node)] = {static_cast<int32_t>(l),
                                                                                           static_cast<int32_t>(r)};
    }
  auto at = [&](int32_t tree, int32_t node) { return where[static_cast<size_t>(tree_offset[static_cast<size_t>(tree)] + node)]; };

  std::vector<Var> hs, cs;  // [levels] the h and c [n_level, H] of each level
  {
    std::vector<int32_t> ids;
    for (const data::NodeRef& ref : levels[0]) {
      const data::Tree& t = trees[static_cast<size_t>(ref.tree)];
      ids.push_back(t.word_ids[static_cast<size_t>(t.node(ref.node).leaf)]);
    }
    const Var x = embedding_.forward(g, ids);  // [L_all, E]
    const NodeState s = rnn_ ? rnn_->leaf(g, x) : nary_ ? nary_->leaf(g, x) : childsum_->leaf(g, x);
    hs.push_back(s.h), cs.push_back(s.c);
  }
  std::vector<LevelRef> refs;
  std::vector<int32_t> parent;
  for (size_t l = 1; l < levels.size(); ++l) {
    const std::vector<data::NodeRef>& nodes = levels[l];
    const int n = static_cast<int>(nodes.size());
    refs.clear(), parent.clear();
    NodeState s;
    if (childsum_) {
      for (int j = 0; j < n; ++j) {
        const data::Tree& t = trees[static_cast<size_t>(nodes[j].tree)];
        for (int32_t c : t.children(nodes[j].node)) refs.push_back(at(nodes[j].tree, c)), parent.push_back(j);
      }
      s = childsum_->compose(g, gather_level_rows(g, hs, refs, hidden), gather_level_rows(g, cs, refs, hidden), parent, n);
    } else {
      for (int j = 0; j < n; ++j) {
        const data::Tree& t = trees[static_cast<size_t>(nodes[j].tree)];
        check_arity(t, nodes[j].node, arity, cfg_.cell);
        const auto ch = t.children(nodes[j].node);
        for (int k = 0; k < arity; ++k)
          refs.push_back(k < static_cast<int>(ch.size()) ? at(nodes[j].tree, ch[static_cast<size_t>(k)]) : LevelRef{});
      }
      // [n*N, H] with row j*N + k the k-th child of node j, i.e. [n, N*H] with the slots side by side
      const Var h_cat = core::reshape(gather_level_rows(g, hs, refs, hidden), {n, arity * hidden});
      s = rnn_ ? rnn_->compose(g, h_cat)
               : nary_->compose(g, h_cat, core::reshape(gather_level_rows(g, cs, refs, hidden), {n, arity * hidden}));
    }
    hs.push_back(s.h), cs.push_back(s.c);
  }
  std::vector<int32_t> level_offset(levels.size(), 0);
  for (size_t l = 1; l < levels.size(); ++l) level_offset[l] = level_offset[l - 1] + static_cast<int32_t>(levels[l - 1].size());
  std::vector<int32_t> order(where.size());
  for (size_t i = 0; i < where.size(); ++i) order[i] = level_offset[static_cast<size_t>(where[i].level)] + where[i].row;
  return core::select_rows(hs.size() == 1 ? hs[0] : core::concat(hs, 0), order);  // [N_all, H]
}

}  // namespace engram::models
