// The tree family's model config: which cell composes children into a parent (recursive net,
// N-ary Tree-LSTM, child-sum Tree-LSTM), the widths, the classifier and the vocabulary size.
// It is what a checkpoint's config.yaml holds. Dims: E embedding, H hidden, C classes, V vocab,
// N arity (children a node of the N-ary cells may have).
#pragma once

#include <cstdint>
#include <utility>

#include "engram/io/config.h"

namespace engram::models {

enum class TreeCell {
  kRnn,       // recursive neural network: h = tanh(W [h_1; ...; h_N] + b)
  kTreeLstm,  // N-ary (binary for SST) constituency Tree-LSTM, Tai et al. 2015 section 3.2
  kChildSum,  // child-sum Tree-LSTM, Tai et al. 2015 section 3.1
};

struct TreeConfig {
  TreeCell cell = TreeCell::kTreeLstm;
  int embed = 300;          // E
  int hidden = 150;         // H
  int classes = 5;          // C: 5 (fine) or 2 (binary view)
  int arity = 2;            // N: rnn / treelstm children slots (missing children are zero states)
  float dropout = 0.5f;     // on every node's h before the classifier (training only)
  float embed_init = 0.05f; // embeddings ~ U(-embed_init, embed_init) (no pretrained vectors)
  int vocab = 0;            // V, set from the data

  template <class V>
  void visit(V& v) {
    v("cell", cell, "rnn | treelstm (N-ary constituency) | childsum");
    v("embed", embed, "word embedding width (rnn: leaves are the embeddings when it equals hidden)");
    v("hidden", hidden, "hidden (and memory) width");
    v("classes", classes, "sentiment classes: 5 (fine) or 2 (binary)");
    v("arity", arity, "rnn / treelstm: children per node (SST is binary: 2)");
    v("dropout", dropout, "dropout on each node's state before the classifier");
    v("embed_init", embed_init, "embeddings drawn from U(-embed_init, embed_init)");
    v("vocab", vocab, "vocabulary size (set from the data)");
  }
};

const char* tree_cell_name(TreeCell cell);

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::TreeCell> {
  static constexpr std::pair<engram::models::TreeCell, const char*> items[] = {
      {engram::models::TreeCell::kRnn, "rnn"},
      {engram::models::TreeCell::kTreeLstm, "treelstm"},
      {engram::models::TreeCell::kChildSum, "childsum"}};
};
