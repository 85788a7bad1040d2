// PTB-style labelled trees for recursive networks / Tree-LSTM, as in the Stanford Sentiment
// Treebank (Socher et al. 2013, files trainDevTestTrees_PTB/trees/{train,dev,test}.txt): the flat
// Tree (nodes in post-order, no pointers), its reader and writer, the per-height level lists a
// batched-by-level executor needs, the fine-grained and binary SST views (Tai et al. 2015), a
// right-branching fallback for plain sentences, and word ids from a Vocab.
//
// Text format: one tree per line, an S-expression with a sentiment label (0 very negative ...
// 4 very positive) before every constituent:
//     tree  := '(' label ( token | tree+ ) ')'
//     label := 0 | 1 | 2 | 3 | 4          (-1 "unlabelled" only with allow_unlabelled)
//     token := one or more bytes other than ASCII whitespace, '(' and ')'
// e.g. `(3 (2 It) (4 (4 rocks)))`. Whitespace (any amount, ASCII) separates items; SST uses
// single spaces and no space after '('. Unary nodes (`(4 (4 rocks))`) and N-ary nodes (for a
// child-sum Tree-LSTM) are accepted; SST itself is binary. Tokens are kept as the file has them
// (PTB escapes: -LRB- -RRB- for parentheses, `\/` and `\*` for / and *, `` and '' for quotes);
// unescape_ptb_token() turns them back into display text.
//
// Errors: malformed text throws engram::Error "FILE:LINE:COLUMN: what" (COLUMN is 1-based, in
// code points). Parsing is iterative (an explicit stack), so a deep tree cannot overflow the call
// stack; TreeReadOptions bounds line length, node count and nesting depth.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engram/data/vocab.h"

namespace engram::data {

inline constexpr int32_t kNoLabel = -1;           // an unlabelled node
inline constexpr int32_t kNumFineSentiments = 5;  // labels 0..4

struct TreeNode {
  int32_t label = kNoLabel;  // 0..4 (fine), 0..1 (binary view) or kNoLabel
  int32_t height = 0;        // leaves 0, a parent 1 + max over its children
  int32_t parent = -1;       // node index; -1 for the root
  // The children, left to right: Tree::child_index[first_child, first_child + num_children).
  int32_t first_child = 0;
  int32_t num_children = 0;  // 0 exactly for leaves
  int32_t leaf = -1;         // leaves: position in the sentence (index into tokens / word_ids)
};

// A tree stored flat and never empty. Invariants (check_tree verifies them; every function here keeps them):
//  - nodes are in post-order: each subtree is the contiguous range ending at its root, children
//    left to right, so a child's index is smaller than its parent's and the root is last;
//  - leaves appear in sentence order, leaf k having TreeNode::leaf == k;
//  - tokens has one entry per leaf; word_ids is empty or has one entry per leaf.
struct Tree {
  std::vector<TreeNode> nodes;       // [N] post-order
  std::vector<int32_t> child_index;  // [N - 1] children of every internal node, see TreeNode
  std::vector<std::string> tokens;   // [L] leaf tokens in sentence order, escaped as in the file
  std::vector<int32_t> word_ids;     // [L] set by assign_word_ids(); empty until then
  int64_t line = 0;                  // 1-based line in its file; 0 when not read from a file

  int32_t size() const { return static_cast<int32_t>(nodes.size()); }
  int32_t num_leaves() const { return static_cast<int32_t>(tokens.size()); }
  int32_t root() const { return size() - 1; }
  int32_t height() const { return nodes.back().height; }
  const TreeNode& node(int32_t n) const { return nodes[static_cast<size_t>(n)]; }
  bool is_leaf(int32_t n) const { return node(n).num_children == 0; }
  std::span<const int32_t> children(int32_t n) const {
    return {child_index.data() + node(n).first_child, static_cast<size_t>(node(n).num_children)};
  }
  // Node indices of the leaves, left to right ([L]).
  std::vector<int32_t> leaves() const;
  // The tokens joined by single spaces, escaped as in the file.
  std::string sentence() const;
  // [height() + 1] level h lists the nodes of height h in ascending index order. Every child of
  // a level-h node is on a level below h, so evaluating levels 0, 1, ... in turn is valid.
  std::vector<std::vector<int32_t>> levels() const;
};

// Throws engram::Error "tree: ..." when t breaks an invariant above, has a label outside -1..4,
// or a token that is empty or holds whitespace or a parenthesis. For hand-built trees and tests.
void check_tree(const Tree& t);

// One node of one tree in a batch.
struct NodeRef {
  int32_t tree = 0;  // index into the span given to batch_levels
  int32_t node = 0;
};

// Levels across many trees: [1 + max height] level h lists every node of height h, tree by tree
// in the given order and by ascending node index within a tree. A batched executor evaluates
// level 0 (all leaves) first, then level 1, ...; each level's children are already computed.
std::vector<std::vector<NodeRef>> batch_levels(std::span<const Tree> trees);

struct TreeReadOptions {
  // Bounds on one line. SST's largest tree is 700 bytes, 111 nodes, nested 30 deep.
  int64_t max_line_bytes = 1 << 16;
  int32_t max_nodes = 10000;
  int32_t max_depth = 1000;  // nesting of '(' (the root is depth 1), so height < max_depth
  // Accept label -1 (kNoLabel), as format_tree writes unlabelled nodes.
  bool allow_unlabelled = false;
};

// Parses one tree; `file` and `line` only name the position in error messages. Errors, as
// "FILE:LINE:COLUMN: ..." with COLUMN pointing at the offending item:
//   expected '(' to start a tree       unbalanced parentheses (a '(' never closed, a stray ')')
//   missing label  / label outside 0-4 empty node '()'    node with no children and no token
//   a node with both a token and children, or two tokens     trailing text after the tree
//   a line, node count or nesting over the TreeReadOptions limits (named in the message)
Tree parse_tree(std::string_view text, const TreeReadOptions& options = {},
                std::string_view file = "<string>", int64_t line = 1);

// The tree in the text format above: parse_tree(format_tree(t)) == t for every tree parse_tree
// returns, and format_tree(parse_tree(s)) == s for single-spaced text such as the SST files.
// Unlabelled nodes are written with label -1 (readable with allow_unlabelled).
std::string format_tree(const Tree& t);

// Reads one tree per line (Tree::line set). Blank lines (empty or only whitespace) are skipped
// but still counted for line numbers; any other line must be one whole tree. Errors name
// PATH:LINE:COLUMN; unreadable files and invalid UTF-8 fail as in read_lines().
std::vector<Tree> read_tree_file(const std::string& path, const TreeReadOptions& options = {});

// PTB token escapes. escape: '(' ')' -> -LRB- -RRB-; '/' '*' -> \/ \* (unless already escaped).
// unescape (for display): -LRB- -RRB- -LSB- -RSB- -LCB- -RCB- -> ( ) [ ] { }; \/ \* -> / *;
// the whole tokens `` and '' -> ". unescape_ptb_token(escape_ptb_token(s)) == s for s without
// quotes.
std::string escape_ptb_token(std::string_view token);
std::string unescape_ptb_token(std::string_view token);
// The unescaped tokens joined by single spaces (no detokenisation otherwise).
std::string display_sentence(const Tree& t);

// A plain sentence (tokens split on ASCII whitespace, then escape_ptb_token) as a right-branching
// binary tree (w1 (w2 (... (w_{n-1} w_n)))) with every node unlabelled (kNoLabel): the fallback
// when no parse is available. One token gives a single leaf; no tokens is an error, and so is a
// sentence over the options' limits, as parse_tree's: its bytes, its 2n - 1 nodes, its nesting
// (n levels: the leaves nest as deep as the innermost pair).
Tree right_branching_tree(std::string_view sentence, const TreeReadOptions& options = {});

// ---- SST views ----------------------------------------------------------------------------

enum class SentimentView {
  kFine,    // 5 classes, every node labelled 0..4: the trees as read
  kBinary,  // Tai et al. 2015: trees with root label 2 dropped; 0,1 -> 0; 3,4 -> 1; 2 -> kNoLabel
};

// "fine" or "binary"; anything else is an error listing both.
SentimentView parse_sentiment_view(std::string_view name);
std::string_view sentiment_view_name(SentimentView view);
int32_t num_sentiment_classes(SentimentView view);  // 5 or 2

// Fine label -> binary label: 0,1 -> 0; 3,4 -> 1; 2 and kNoLabel -> kNoLabel. Throws outside -1..4.
int32_t binary_sentiment(int32_t fine_label);
// The binary view of one tree; nullopt when its root label is 2 (neutral). A kNoLabel root is
// kept (with its nodes mapped).
std::optional<Tree> to_binary_sentiment(const Tree& fine);
// The view of a list of trees: kFine returns them unchanged, kBinary maps them and drops
// neutral-root trees (file order kept).
std::vector<Tree> sentiment_view(std::vector<Tree> trees, SentimentView view);

struct SstSplits {
  std::vector<Tree> train, dev, test;
};

// Reads DIR/{train,dev,test}.txt and applies the view. Real SST: 8544 / 1101 / 2210 trees fine,
// 6920 / 872 / 1821 binary.
SstSplits load_sst(const std::string& dir, SentimentView view, const TreeReadOptions& options = {});

// ---- word ids -----------------------------------------------------------------------------

// Adds every leaf token (as in the file, case kept) to counts, for Vocab::build.
void count_tree_tokens(std::span<const Tree> trees, TokenCounts* counts);
// Sets t->word_ids[k] = vocab.id(t->tokens[k]) (kUnkId for unknown tokens).
void assign_word_ids(const Vocab& vocab, Tree* t);
void assign_word_ids(const Vocab& vocab, std::vector<Tree>* trees);

}  // namespace engram::data
