// PTB tree parsing, writing, levels, SST views and the right-branching fallback (see tree.h).
#include "engram/data/tree.h"

#include <algorithm>

#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

bool is_ws(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool is_atom_char(char c) { return !is_ws(c) && c != '(' && c != ')'; }

// Up to 20 code points of s from pos, with "..." when cut.
std::string snippet(std::string_view s, size_t pos) {
  std::string_view rest = s.substr(pos);
  if (rest.size() <= 20) return std::string(rest);
  size_t end = 20;
  while (end > 0 && (static_cast<unsigned char>(rest[end]) & 0xC0) == 0x80) --end;
  return std::string(rest.substr(0, end)) + "...";
}

// One tree of one line. Nodes are appended when their ')' is read, which is post-order; the
// finished children of every open node wait on pending_ until their parent closes.
class Parser {
 public:
  Parser(std::string_view text, const TreeReadOptions& o, std::string_view file, int64_t line)
      : s_(text), o_(o), file_(file), line_(line) {}

  Tree run() {
    ENGRAM_CHECK(
        static_cast<int64_t>(s_.size()) <= o_.max_line_bytes,
        "{}: line is {} bytes long, over the limit of {} (TreeReadOptions::max_line_bytes)",
        where(0), s_.size(), o_.max_line_bytes);
    size_t i = 0;
    bool done = false;  // the root has been closed
    while (true) {
      while (i < s_.size() && is_ws(s_[i])) ++i;
      if (i == s_.size()) break;
      const char c = s_[i];
      if (stack_.empty()) {
        ENGRAM_CHECK(!(done && c == ')'), "{}: unbalanced parentheses: ')' without a matching '('",
                     where(i));
        ENGRAM_CHECK(!done, "{}: trailing text after the tree: '{}'", where(i), snippet(s_, i));
        ENGRAM_CHECK(c == '(', "{}: expected '(' to start a tree, got '{}'", where(i),
                     snippet(s_, i));
      }
      if (c == '(') {
        i = open(i);
      } else if (c == ')') {
        close(i++);
        done = stack_.empty();
      } else {
        const size_t b = i;
        while (i < s_.size() && is_atom_char(s_[i])) ++i;
        add_token(b, s_.substr(b, i - b));
      }
    }
    ENGRAM_CHECK(done || !stack_.empty(), "{}: expected '(' to start a tree, got an empty line",
                 where(0));
    ENGRAM_CHECK(stack_.empty(),
                 "{}: unbalanced parentheses: this '(' is not closed before the end of the line "
                 "({} still open)",
                 where(stack_.back().open_pos), stack_.size());
    return std::move(t_);
  }

 private:
  struct Frame {
    size_t open_pos = 0;  // byte offset of the '('
    int32_t label = kNoLabel;
    size_t pending_base = 0;  // this node's children are pending_[pending_base, end)
    std::string_view token;
    size_t token_pos = 0;
  };

  // "FILE:LINE:COLUMN" of byte offset pos (column in code points).
  std::string where(size_t pos) const {
    int64_t col = 1;
    for (size_t k = 0; k < pos && k < s_.size(); ++k) {
      if ((static_cast<unsigned char>(s_[k]) & 0xC0) != 0x80) ++col;
    }
    return fmt::format("{}:{}:{}", file_, line_, col);
  }

  // Reads "(label" at i; returns the offset after the label.
  size_t open(size_t i) {
    if (!stack_.empty()) {
      const Frame& top = stack_.back();
      ENGRAM_CHECK(top.token.empty(), "{}: node has both a token ('{}') and children", where(i),
                   top.token);
    }
    ENGRAM_CHECK(static_cast<int64_t>(stack_.size()) < o_.max_depth,
                 "{}: tree is nested deeper than {} levels (TreeReadOptions::max_depth)", where(i),
                 o_.max_depth);
    ENGRAM_CHECK(opened_ < o_.max_nodes,
                 "{}: tree has more than {} nodes (TreeReadOptions::max_nodes)", where(i),
                 o_.max_nodes);
    ++opened_;
    Frame f;
    f.open_pos = i;
    f.pending_base = pending_.size();
    size_t j = i + 1;
    while (j < s_.size() && is_ws(s_[j])) ++j;
    const size_t b = j;
    while (j < s_.size() && is_atom_char(s_[j])) ++j;
    const std::string_view label = s_.substr(b, j - b);
    if (label.empty()) {
      ENGRAM_CHECK(b < s_.size(),
                   "{}: unbalanced parentheses: this '(' is not closed before the end of the line",
                   where(i));
      ENGRAM_CHECK(s_[b] != ')', "{}: empty node '()'", where(i));
      ENGRAM_CHECK(false, "{}: missing label: expected a sentiment label 0-4 after '(', got '('",
                   where(b));
    }
    const bool numeric = std::all_of(label.begin() + (label[0] == '-' && label.size() > 1 ? 1 : 0),
                                     label.end(), [](char c) { return c >= '0' && c <= '9'; });
    ENGRAM_CHECK(numeric, "{}: missing label: expected a sentiment label 0-4 after '(', got '{}'",
                 where(b), snippet(label, 0));
    if (label == "-1" && o_.allow_unlabelled) {
      f.label = kNoLabel;
    } else {
      ENGRAM_CHECK(label.size() == 1 && label[0] <= '4', "{}: label {} is outside 0-4{}", where(b),
                   snippet(label, 0), o_.allow_unlabelled ? " (or -1)" : "");
      f.label = label[0] - '0';
    }
    stack_.push_back(f);
    return j;
  }

  void add_token(size_t pos, std::string_view token) {
    Frame& top = stack_.back();
    ENGRAM_CHECK(pending_.size() == top.pending_base,
                 "{}: node has both children and a token ('{}')", where(pos), snippet(token, 0));
    ENGRAM_CHECK(top.token.empty(),
                 "{}: leaf has a second token '{}' (a token holds no whitespace)", where(pos),
                 snippet(token, 0));
    top.token = token;
    top.token_pos = pos;
  }

  void close(size_t pos) {
    ENGRAM_CHECK(!stack_.empty(), "{}: unbalanced parentheses: ')' without a matching '('",
                 where(pos));
    const Frame f = stack_.back();
    stack_.pop_back();
    const size_t num_children = pending_.size() - f.pending_base;
    ENGRAM_CHECK(num_children > 0 || !f.token.empty(), "{}: node has no children and no token",
                 where(f.open_pos));
    const auto idx = static_cast<int32_t>(t_.nodes.size());
    TreeNode node;
    node.label = f.label;
    node.first_child = static_cast<int32_t>(t_.child_index.size());
    node.num_children = static_cast<int32_t>(num_children);
    if (num_children == 0) {
      node.leaf = static_cast<int32_t>(t_.tokens.size());
      t_.tokens.emplace_back(f.token);
    } else {
      for (size_t k = f.pending_base; k < pending_.size(); ++k) {
        TreeNode& child = t_.nodes[static_cast<size_t>(pending_[k])];
        child.parent = idx;
        node.height = std::max(node.height, child.height + 1);
        t_.child_index.push_back(pending_[k]);
      }
      pending_.resize(f.pending_base);
    }
    t_.nodes.push_back(node);
    pending_.push_back(idx);
  }

  std::string_view s_;
  const TreeReadOptions& o_;
  std::string_view file_;
  int64_t line_;
  Tree t_;
  std::vector<Frame> stack_;      // open nodes, outermost first
  std::vector<int32_t> pending_;  // finished nodes whose parent is still open
  int32_t opened_ = 0;
};

bool is_blank(std::string_view s) { return std::all_of(s.begin(), s.end(), is_ws); }

void replace_all(std::string* s, std::string_view from, std::string_view to) {
  for (size_t p = s->find(from); p != std::string::npos; p = s->find(from, p + to.size())) {
    s->replace(p, from.size(), to);
  }
}

}  // namespace

// ---- Tree ---------------------------------------------------------------------------------

std::vector<int32_t> Tree::leaves() const {
  std::vector<int32_t> out(tokens.size());
  for (int32_t n = 0; n < size(); ++n) {
    if (is_leaf(n)) out[static_cast<size_t>(node(n).leaf)] = n;
  }
  return out;
}

std::string Tree::sentence() const {
  std::string out;
  for (const auto& tok : tokens) {
    if (!out.empty()) out += ' ';
    out += tok;
  }
  return out;
}

std::vector<std::vector<int32_t>> Tree::levels() const {
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(height()) + 1);
  for (int32_t n = 0; n < size(); ++n) out[static_cast<size_t>(node(n).height)].push_back(n);
  return out;
}

void check_tree(const Tree& t) {
  const int32_t n = t.size();
  ENGRAM_CHECK(n > 0, "tree: no nodes");
  ENGRAM_CHECK(t.word_ids.empty() || t.word_ids.size() == t.tokens.size(),
               "tree: {} word ids for {} tokens", t.word_ids.size(), t.tokens.size());
  std::vector<int32_t> subtree_size(static_cast<size_t>(n), 1);
  int32_t leaves = 0;
  int64_t edges = 0;
  for (int32_t i = 0; i < n; ++i) {
    const TreeNode& nd = t.node(i);
    ENGRAM_CHECK(nd.label >= kNoLabel && nd.label <= 4, "tree: node {} has label {}", i, nd.label);
    ENGRAM_CHECK(i == n - 1 ? nd.parent == -1 : nd.parent > i && nd.parent < n,
                 "tree: node {} has parent {} (nodes must be in post-order, the root last)", i,
                 nd.parent);
    if (nd.num_children == 0) {
      ENGRAM_CHECK(nd.leaf == leaves && nd.height == 0,
                   "tree: leaf node {} has leaf index {} and height {} (want {} and 0)", i, nd.leaf,
                   nd.height, leaves);
      ENGRAM_CHECK(static_cast<size_t>(nd.leaf) < t.tokens.size(), "tree: leaf {} has no token",
                   nd.leaf);
      const std::string& tok = t.tokens[static_cast<size_t>(nd.leaf)];
      ENGRAM_CHECK(!tok.empty() && std::all_of(tok.begin(), tok.end(), is_atom_char),
                   "tree: token '{}' is empty or holds whitespace or a parenthesis", tok);
      ++leaves;
      continue;
    }
    ENGRAM_CHECK(nd.num_children > 0 && nd.leaf == -1 && nd.first_child >= 0 &&
                     static_cast<size_t>(nd.first_child) + static_cast<size_t>(nd.num_children) <=
                         t.child_index.size(),
                 "tree: node {} has a bad child range or leaf index", i);
    // Post-order with contiguous subtrees: the last child is i - 1, each earlier child ends
    // right before the later one's subtree.
    int32_t expect = i - 1;
    int32_t height = 0;
    const auto kids = t.children(i);
    for (size_t k = kids.size(); k-- > 0;) {
      const int32_t c = kids[k];
      ENGRAM_CHECK(c == expect && c >= 0 && t.node(c).parent == i,
                   "tree: child {} of node {} breaks post-order (want {}) or names parent {}", c, i,
                   expect, c >= 0 && c < n ? t.node(c).parent : -1);
      expect -= subtree_size[static_cast<size_t>(c)];
      subtree_size[static_cast<size_t>(i)] += subtree_size[static_cast<size_t>(c)];
      height = std::max(height, t.node(c).height + 1);
    }
    ENGRAM_CHECK(nd.height == height, "tree: node {} has height {}, want {}", i, nd.height, height);
    edges += nd.num_children;
  }
  ENGRAM_CHECK(subtree_size.back() == n && edges == n - 1,
               "tree: the root's subtree has {} of the {} nodes", subtree_size.back(), n);
  ENGRAM_CHECK(static_cast<size_t>(leaves) == t.tokens.size(), "tree: {} leaves but {} tokens",
               leaves, t.tokens.size());
}

std::vector<std::vector<NodeRef>> batch_levels(std::span<const Tree> trees) {
  std::vector<std::vector<NodeRef>> out;
  for (size_t ti = 0; ti < trees.size(); ++ti) {
    const Tree& t = trees[ti];
    if (static_cast<size_t>(t.height()) >= out.size()) out.resize(t.height() + 1);
    for (int32_t n = 0; n < t.size(); ++n) {
      out[static_cast<size_t>(t.node(n).height)].push_back({static_cast<int32_t>(ti), n});
    }
  }
  return out;
}

// ---- reading and writing ------------------------------------------------------------------

Tree parse_tree(std::string_view text, const TreeReadOptions& options, std::string_view file,
                int64_t line) {
  return Parser(text, options, file, line).run();
}

std::string format_tree(const Tree& t) {
  std::string out;
  std::vector<std::pair<int32_t, int32_t>> stack;  // (open internal node, next child)
  auto open = [&](int32_t n) {
    out += '(';
    out += fmt::to_string(t.node(n).label);
    if (t.is_leaf(n)) {
      out += ' ';
      out += t.tokens[static_cast<size_t>(t.node(n).leaf)];
      out += ')';
    } else {
      stack.emplace_back(n, 0);
    }
  };
  open(t.root());
  while (!stack.empty()) {
    const auto [n, k] = stack.back();
    if (k < t.node(n).num_children) {
      ++stack.back().second;
      out += ' ';
      open(t.children(n)[static_cast<size_t>(k)]);
    } else {
      out += ')';
      stack.pop_back();
    }
  }
  return out;
}

std::vector<Tree> read_tree_file(const std::string& path, const TreeReadOptions& options) {
  const auto lines = read_lines(path);
  std::vector<Tree> out;
  for (size_t li = 0; li < lines.size(); ++li) {
    if (is_blank(lines[li])) continue;
    const auto lineno = static_cast<int64_t>(li + 1);
    out.push_back(parse_tree(lines[li], options, path, lineno));
    out.back().line = lineno;
  }
  return out;
}

// ---- escapes and the fallback -------------------------------------------------------------

std::string escape_ptb_token(std::string_view token) {
  std::string out;
  for (size_t k = 0; k < token.size(); ++k) {
    const char c = token[k];
    if (c == '(') {
      out += "-LRB-";
    } else if (c == ')') {
      out += "-RRB-";
    } else if ((c == '/' || c == '*') && (k == 0 || token[k - 1] != '\\')) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_ptb_token(std::string_view token) {
  if (token == "``" || token == "''") return "\"";
  std::string out(token);
  static constexpr std::string_view kBrackets[][2] = {
      {"-LRB-", "("}, {"-RRB-", ")"}, {"-LSB-", "["}, {"-RSB-", "]"},
      {"-LCB-", "{"}, {"-RCB-", "}"}, {"\\/", "/"},   {"\\*", "*"}};
  for (const auto& [from, to] : kBrackets) replace_all(&out, from, to);
  return out;
}

std::string display_sentence(const Tree& t) {
  std::string out;
  for (const auto& tok : t.tokens) {
    if (!out.empty()) out += ' ';
    out += unescape_ptb_token(tok);
  }
  return out;
}

Tree right_branching_tree(std::string_view sentence, const TreeReadOptions& o) {
  ENGRAM_CHECK(static_cast<int64_t>(sentence.size()) <= o.max_line_bytes,
               "the sentence is {} bytes long, over the limit of {} (TreeReadOptions::max_line_bytes)", sentence.size(),
               o.max_line_bytes);
  const auto words = split_whitespace(sentence);
  ENGRAM_CHECK(!words.empty(), "right_branching_tree: the sentence has no tokens");
  ENGRAM_CHECK(2 * static_cast<int64_t>(words.size()) - 1 <= o.max_nodes,
               "a sentence of {} words makes a tree of {} nodes, more than {} (TreeReadOptions::max_nodes)", words.size(),
               2 * words.size() - 1, o.max_nodes);
  ENGRAM_CHECK(static_cast<int64_t>(words.size()) <= o.max_depth,
               "a sentence of {} words makes a tree nested {} levels deep, over the limit of {} "
               "(TreeReadOptions::max_depth)", words.size(), words.size(), o.max_depth);
  const auto n = static_cast<int32_t>(words.size());
  Tree t;
  t.nodes.reserve(static_cast<size_t>(2 * n - 1));
  for (int32_t k = 0; k < n; ++k) {
    TreeNode leaf;
    leaf.leaf = k;
    t.nodes.push_back(leaf);
    t.tokens.push_back(escape_ptb_token(words[static_cast<size_t>(k)]));
  }
  // Post-order of (w1 (w2 (... (w_{n-1} w_n)))): all leaves, then the internal nodes from the
  // innermost (w_{n-1} w_n) out to the root.
  int32_t right = n - 1;
  for (int32_t k = n - 2; k >= 0; --k) {
    const auto idx = static_cast<int32_t>(t.nodes.size());
    TreeNode node;
    node.first_child = static_cast<int32_t>(t.child_index.size());
    node.num_children = 2;
    node.height = t.nodes[static_cast<size_t>(right)].height + 1;
    t.child_index.push_back(k);
    t.child_index.push_back(right);
    t.nodes[static_cast<size_t>(k)].parent = idx;
    t.nodes[static_cast<size_t>(right)].parent = idx;
    t.nodes.push_back(node);
    right = idx;
  }
  return t;
}

// ---- SST views ----------------------------------------------------------------------------

SentimentView parse_sentiment_view(std::string_view name) {
  if (name == "fine") return SentimentView::kFine;
  if (name == "binary") return SentimentView::kBinary;
  ENGRAM_CHECK(false, "sentiment view must be 'fine' or 'binary', got '{}'", name);
  return SentimentView::kFine;
}

std::string_view sentiment_view_name(SentimentView view) {
  return view == SentimentView::kFine ? "fine" : "binary";
}

int32_t num_sentiment_classes(SentimentView view) {
  return view == SentimentView::kFine ? kNumFineSentiments : 2;
}

int32_t binary_sentiment(int32_t fine_label) {
  ENGRAM_CHECK(fine_label >= kNoLabel && fine_label <= 4,
               "binary_sentiment: label {} is outside 0-4 (or -1)", fine_label);
  if (fine_label == 0 || fine_label == 1) return 0;
  if (fine_label == 3 || fine_label == 4) return 1;
  return kNoLabel;
}

std::optional<Tree> to_binary_sentiment(const Tree& fine) {
  if (fine.nodes.back().label == 2) return std::nullopt;
  Tree out = fine;
  for (auto& nd : out.nodes) nd.label = binary_sentiment(nd.label);
  return out;
}

std::vector<Tree> sentiment_view(std::vector<Tree> trees, SentimentView view) {
  if (view == SentimentView::kFine) return trees;
  std::vector<Tree> out;
  out.reserve(trees.size());
  for (auto& t : trees) {
    if (t.nodes.back().label == 2) continue;
    for (auto& nd : t.nodes) nd.label = binary_sentiment(nd.label);
    out.push_back(std::move(t));
  }
  return out;
}

SstSplits load_sst(const std::string& dir, SentimentView view, const TreeReadOptions& options) {
  SstSplits out;
  out.train = sentiment_view(read_tree_file(dir + "/train.txt", options), view);
  out.dev = sentiment_view(read_tree_file(dir + "/dev.txt", options), view);
  out.test = sentiment_view(read_tree_file(dir + "/test.txt", options), view);
  return out;
}

// ---- word ids -----------------------------------------------------------------------------

void count_tree_tokens(std::span<const Tree> trees, TokenCounts* counts) {
  for (const auto& t : trees) {
    for (const auto& tok : t.tokens) ++(*counts)[tok];
  }
}

void assign_word_ids(const Vocab& vocab, Tree* t) {
  t->word_ids.resize(t->tokens.size());
  for (size_t k = 0; k < t->tokens.size(); ++k) t->word_ids[k] = vocab.id(t->tokens[k]);
}

void assign_word_ids(const Vocab& vocab, std::vector<Tree>* trees) {
  for (auto& t : *trees) assign_word_ids(vocab, &t);
}

}  // namespace engram::data
