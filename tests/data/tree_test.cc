// PTB tree reader on strings and temp files (structure, post-order, heights, levels, round trip,
// every malformed case with its exact FILE:LINE:COLUMN, the size limits), the SST views, the
// right-branching fallback, word ids, and the real SST files of shared/data/sst (counts from its
// README: 8544 / 1101 / 2210 trees; binary 6920 / 872 / 1821 as in Tai et al. 2015).
#include "engram/data/tree.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::TempDir;

using testing::error_of;

std::vector<int32_t> labels_of(const Tree& t) {
  std::vector<int32_t> out;
  for (const auto& n : t.nodes) out.push_back(n.label);
  return out;
}

std::vector<int32_t> heights_of(const Tree& t) {
  std::vector<int32_t> out;
  for (const auto& n : t.nodes) out.push_back(n.height);
  return out;
}

std::vector<int32_t> children_of(const Tree& t, int32_t n) {
  const auto c = t.children(n);
  return {c.begin(), c.end()};
}

TEST(Tree, ParsesLabelsTokensAndPostOrder) {
  const Tree t = parse_tree("(3 (2 It) (4 (4 rocks)))");
  check_tree(t);
  // Post-order: It, (4 rocks) (a leaf), the unary (4 (4 rocks)), the root.
  ASSERT_EQ(t.size(), 4);
  EXPECT_EQ(labels_of(t), (std::vector<int32_t>{2, 4, 4, 3}));
  EXPECT_EQ(heights_of(t), (std::vector<int32_t>{0, 0, 1, 2}));
  EXPECT_EQ(t.root(), 3);
  EXPECT_EQ(t.height(), 2);
  EXPECT_EQ(children_of(t, 3), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(children_of(t, 2), (std::vector<int32_t>{1}));
  EXPECT_TRUE(t.is_leaf(0) && t.is_leaf(1) && !t.is_leaf(2));
  EXPECT_EQ(t.node(0).parent, 3);
  EXPECT_EQ(t.node(1).parent, 2);
  EXPECT_EQ(t.node(3).parent, -1);
  EXPECT_EQ(t.tokens, (std::vector<std::string>{"It", "rocks"}));
  EXPECT_EQ(t.node(1).leaf, 1);
  EXPECT_EQ(t.node(2).leaf, -1);
  EXPECT_EQ(t.leaves(), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(t.sentence(), "It rocks");
  EXPECT_EQ(t.line, 0);
  // Extra whitespace is accepted and does not change the tree.
  EXPECT_EQ(format_tree(parse_tree("  ( 3\t(2 It)  (4 (4 rocks) ) ) ")), format_tree(t));
  // A single leaf is a whole tree.
  const Tree leaf = parse_tree("(1 bad)");
  EXPECT_EQ(leaf.size(), 1);
  EXPECT_EQ(leaf.height(), 0);
  EXPECT_EQ(leaf.children(0).size(), 0u);
}

TEST(Tree, BinaryTreeHeightsAndLevels) {
  // ((a b) (c (d e))): leaves at several depths.
  const Tree t = parse_tree("(2 (1 (0 a) (1 b)) (3 (2 c) (4 (3 d) (4 e))))");
  check_tree(t);
  // Post-order: a b ab c d e de c(de) root.
  EXPECT_EQ(t.tokens, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(t.leaves(), (std::vector<int32_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(heights_of(t), (std::vector<int32_t>{0, 0, 1, 0, 0, 0, 1, 2, 3}));
  const auto levels = t.levels();
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_EQ(levels[0], (std::vector<int32_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(levels[1], (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(levels[2], (std::vector<int32_t>{7}));
  EXPECT_EQ(levels[3], (std::vector<int32_t>{8}));
  // Children always sit on lower levels (what a level-by-level executor relies on).
  for (int32_t n = 0; n < t.size(); ++n) {
    for (int32_t c : t.children(n)) EXPECT_LT(t.node(c).height, t.node(n).height);
  }
}

TEST(Tree, BatchLevelsAcrossTrees) {
  const std::vector<Tree> trees = {parse_tree("(2 (2 a) (2 b))"), parse_tree("(1 x)"),
                                   parse_tree("(3 (3 (2 p) (3 q)) (2 r))")};
  const auto levels = batch_levels(trees);
  ASSERT_EQ(levels.size(), 3u);
  auto refs = [](const std::vector<NodeRef>& v) {
    std::vector<std::pair<int32_t, int32_t>> out;
    for (const auto& r : v) out.emplace_back(r.tree, r.node);
    return out;
  };
  using P = std::vector<std::pair<int32_t, int32_t>>;
  EXPECT_EQ(refs(levels[0]), (P{{0, 0}, {0, 1}, {1, 0}, {2, 0}, {2, 1}, {2, 3}}));
  EXPECT_EQ(refs(levels[1]), (P{{0, 2}, {2, 2}}));
  EXPECT_EQ(refs(levels[2]), (P{{2, 4}}));
  EXPECT_TRUE(batch_levels({}).empty());
}

TEST(Tree, NaryNodesForChildSum) {
  const Tree t = parse_tree("(4 (3 a) (2 b) (1 c) (0 (2 d) (2 e) (2 f) (2 g)))");
  check_tree(t);
  EXPECT_EQ(t.node(t.root()).num_children, 4);
  EXPECT_EQ(children_of(t, t.root()), (std::vector<int32_t>{0, 1, 2, 7}));
  EXPECT_EQ(children_of(t, 7), (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(t.height(), 2);
  EXPECT_EQ(t.child_index.size(), static_cast<size_t>(t.size() - 1));
  EXPECT_EQ(format_tree(t), "(4 (3 a) (2 b) (1 c) (0 (2 d) (2 e) (2 f) (2 g)))");
}

TEST(Tree, RoundTripsThroughTheWriter) {
  for (const std::string s : {"(1 x)", "(3 (2 It) (4 (4 rocks)))",
                              "(3 (2 (2 The) (2 Rock)) (4 (3 (2 is) (4 (2 destined) (2 -LRB-))) (2 "
                              "co-writer\\/director)))",
                              "(2 (2 ``) (2 (2 caf\xc3\xa9) (2 '')))"}) {
    const Tree t = parse_tree(s);
    EXPECT_EQ(format_tree(t), s);
    const Tree again = parse_tree(format_tree(t));
    EXPECT_EQ(labels_of(again), labels_of(t));
    EXPECT_EQ(again.tokens, t.tokens);
    EXPECT_EQ(again.child_index, t.child_index);
  }
  // Unlabelled nodes are written as -1 and read back only with allow_unlabelled.
  const Tree fallback = right_branching_tree("a b c");
  EXPECT_EQ(format_tree(fallback), "(-1 (-1 a) (-1 (-1 b) (-1 c)))");
  TreeReadOptions o;
  o.allow_unlabelled = true;
  EXPECT_EQ(labels_of(parse_tree(format_tree(fallback), o)), labels_of(fallback));
  EXPECT_EQ(error_of([&] { parse_tree(format_tree(fallback)); }),
            "<string>:1:2: label -1 is outside 0-4");
}

TEST(Tree, MalformedInputNamesFileLineColumn) {
  TempDir tmp;
  struct Case {
    std::string text;
    std::string message;  // after "PATH:"; line 2 follows a good line 1
  };
  const Case cases[] = {
      {"(2 a",
       "2:1: unbalanced parentheses: this '(' is not closed before the end of the line "
       "(1 still open)"},
      {"(3 (2 a) (2 b",
       "2:10: unbalanced parentheses: this '(' is not closed before the end of "
       "the line (2 still open)"},
      {"(3 (2 a)) (2 b)", "2:11: trailing text after the tree: '(2 b)'"},
      {"(2 a))", "2:6: unbalanced parentheses: ')' without a matching '('"},
      {"(3 (2 a) x", "2:10: node has both children and a token ('x')"},
      {"(2 a (2 b))", "2:6: node has both a token ('a') and children"},
      {"(2 a b)", "2:6: leaf has a second token 'b' (a token holds no whitespace)"},
      {"((2 a) (2 b))", "2:2: missing label: expected a sentiment label 0-4 after '(', got '('"},
      {"(3 (It) (2 b))", "2:5: missing label: expected a sentiment label 0-4 after '(', got 'It'"},
      {"(3 (2 a) (5 b))", "2:11: label 5 is outside 0-4"},
      {"(3 (2 a) (-1 b))", "2:11: label -1 is outside 0-4"},
      {"(3 (2 a) (12 b))", "2:11: label 12 is outside 0-4"},
      {"(3 (2 a) (2 ))", "2:10: node has no children and no token"},
      {"(3 (2 a) (2))", "2:10: node has no children and no token"},
      {"(3 (2 a) ())", "2:10: empty node '()'"},
      {"(3 (2 a) (",
       "2:10: unbalanced parentheses: this '(' is not closed before the end of the "
       "line"},
      {"2 a", "2:1: expected '(' to start a tree, got '2 a'"},
      {"(2 a) trailing words here and more and more",
       "2:7: trailing text after the tree: "
       "'trailing words here ...'"},
      // Columns count code points: "é" is two bytes but one column.
      {"(2 (2 caf\xc3\xa9) (7 x))", "2:14: label 7 is outside 0-4"},
  };
  int k = 0;
  for (const auto& c : cases) {
    const auto p = tmp.write("bad" + std::to_string(k++) + ".txt", "(2 good)\n" + c.text + "\n");
    EXPECT_EQ(error_of([&] { read_tree_file(p); }), p + ":" + c.message) << c.text;
  }
  // Strings name "<string>" and the line the caller gives.
  EXPECT_EQ(error_of([] { parse_tree("(2 a"); }),
            "<string>:1:1: unbalanced parentheses: this '(' is not closed before the end of the "
            "line (1 still open)");
  EXPECT_EQ(error_of([] { parse_tree("(9 a)", {}, "x.txt", 42); }),
            "x.txt:42:2: label 9 is outside 0-4");
  EXPECT_EQ(error_of([] { parse_tree(""); }),
            "<string>:1:1: expected '(' to start a tree, got an empty line");
  EXPECT_EQ(error_of([] { parse_tree("   "); }),
            "<string>:1:1: expected '(' to start a tree, got an empty line");
}

TEST(Tree, DeepAndLongInputIsRefusedCleanly) {
  const int depth = 100000;
  std::string deep;
  for (int i = 0; i < depth; ++i) deep += "(2 ";
  deep += "x";
  deep += std::string(depth, ')');
  // Default limits: the line is too long.
  EXPECT_EQ(error_of([&] { parse_tree(deep); }),
            "<string>:1:1: line is 400001 bytes long, over the limit of 65536 "
            "(TreeReadOptions::max_line_bytes)");
  // With the line limit lifted, the nesting limit stops it at the 1001st '('.
  TreeReadOptions o;
  o.max_line_bytes = 1 << 20;
  EXPECT_EQ(error_of([&] { parse_tree(deep, o); }),
            "<string>:1:3001: tree is nested deeper than 1000 levels (TreeReadOptions::max_depth)");
  // And the node limit.
  std::string wide = "(2";
  for (int i = 0; i < 20000; ++i) wide += " (2 a)";
  wide += ")";
  EXPECT_EQ(error_of([&] { parse_tree(wide, o); }),
            "<string>:1:59998: tree has more than 10000 nodes (TreeReadOptions::max_nodes)");
  // Lifted limits: a 100k-deep chain parses, checks and writes without recursion.
  o.max_depth = depth + 1;
  o.max_nodes = depth + 1;
  const Tree t = parse_tree(deep, o);
  EXPECT_EQ(t.size(), depth);
  EXPECT_EQ(t.height(), depth - 1);
  check_tree(t);
  EXPECT_EQ(format_tree(t), deep);
  EXPECT_EQ(t.levels().size(), static_cast<size_t>(depth));
  // The limit applies to file lines too.
  TempDir tmp;
  const auto p = tmp.write("deep.txt", "(2 ok)\n" + deep + "\n");
  EXPECT_EQ(error_of([&] { read_tree_file(p); }),
            p + ":2:1: line is 400001 bytes long, over the limit of 65536 "
                "(TreeReadOptions::max_line_bytes)");
}

TEST(Tree, ReadFileSkipsBlankLinesAndKeepsLineNumbers) {
  TempDir tmp;
  const auto p = tmp.write("t.txt", "(3 (2 a) (3 b))\n\n   \n(1 c)\r\n(0 d)");
  const auto trees = read_tree_file(p);
  ASSERT_EQ(trees.size(), 3u);
  EXPECT_EQ(trees[0].line, 1);
  EXPECT_EQ(trees[1].line, 4);
  EXPECT_EQ(trees[2].line, 5);
  EXPECT_EQ(trees[1].tokens, (std::vector<std::string>{"c"}));
  EXPECT_TRUE(read_tree_file(tmp.write("empty.txt", "")).empty());
  const auto missing = tmp.file("missing.txt");
  EXPECT_NE(error_of([&] { read_tree_file(missing); }).find(missing), std::string::npos);
}

TEST(Tree, EscapesAndUnescapesPtbTokens) {
  EXPECT_EQ(escape_ptb_token("("), "-LRB-");
  EXPECT_EQ(escape_ptb_token("(really)"), "-LRB-really-RRB-");
  EXPECT_EQ(escape_ptb_token("and/or"), "and\\/or");
  EXPECT_EQ(escape_ptb_token("and\\/or"), "and\\/or");  // already escaped
  EXPECT_EQ(escape_ptb_token("***"), "\\*\\*\\*");
  EXPECT_EQ(unescape_ptb_token("-LRB-"), "(");
  EXPECT_EQ(unescape_ptb_token("-RRB-"), ")");
  EXPECT_EQ(unescape_ptb_token("-LSB-x-RSB-"), "[x]");
  EXPECT_EQ(unescape_ptb_token("writer\\/director"), "writer/director");
  EXPECT_EQ(unescape_ptb_token("\\*\\*\\*"), "***");
  EXPECT_EQ(unescape_ptb_token("``"), "\"");
  EXPECT_EQ(unescape_ptb_token("''"), "\"");
  EXPECT_EQ(unescape_ptb_token("'s"), "'s");
  for (const std::string s : {"(really)", "a/b*c", ")(", "plain"}) {
    EXPECT_EQ(unescape_ptb_token(escape_ptb_token(s)), s);
  }
  const Tree t = parse_tree("(2 (2 -LRB-) (2 (2 and\\/or) (2 -RRB-)))");
  EXPECT_EQ(t.sentence(), "-LRB- and\\/or -RRB-");
  EXPECT_EQ(display_sentence(t), "( and/or )");
}

TEST(Tree, RightBranchingFallback) {
  const Tree t = right_branching_tree("  It (really) rocks . ");
  check_tree(t);
  EXPECT_EQ(t.tokens, (std::vector<std::string>{"It", "-LRB-really-RRB-", "rocks", "."}));
  ASSERT_EQ(t.size(), 7);
  EXPECT_EQ(t.leaves(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(children_of(t, 4), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(children_of(t, 5), (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(children_of(t, 6), (std::vector<int32_t>{0, 5}));
  EXPECT_EQ(heights_of(t), (std::vector<int32_t>{0, 0, 0, 0, 1, 2, 3}));
  for (const auto& n : t.nodes) EXPECT_EQ(n.label, kNoLabel);
  EXPECT_EQ(display_sentence(t), "It (really) rocks .");
  EXPECT_EQ(format_tree(t), "(-1 (-1 It) (-1 (-1 -LRB-really-RRB-) (-1 (-1 rocks) (-1 .))))");
  const Tree one = right_branching_tree("word");
  check_tree(one);
  EXPECT_EQ(one.size(), 1);
  EXPECT_EQ(error_of([] { right_branching_tree(" \t "); }),
            "right_branching_tree: the sentence has no tokens");
  // The limits of a parsed tree hold for the fallback's tree too: nesting, nodes, bytes.
  std::string words;
  for (int i = 0; i < 1001; ++i) words += "w ";
  EXPECT_EQ(error_of([&] { right_branching_tree(words); }),
            "a sentence of 1001 words makes a tree nested 1001 levels deep, over the limit of 1000 "
            "(TreeReadOptions::max_depth)");
  EXPECT_NO_THROW(right_branching_tree(words.substr(2)));  // 1000 words
  EXPECT_EQ(error_of([&] { right_branching_tree(words, {.max_nodes = 100}); }),
            "a sentence of 1001 words makes a tree of 2001 nodes, more than 100 (TreeReadOptions::max_nodes)");
  EXPECT_EQ(error_of([&] { right_branching_tree(std::string(70000, 'a')); }),
            "the sentence is 70000 bytes long, over the limit of 65536 (TreeReadOptions::max_line_bytes)");
}

TEST(Tree, WordIdsFromVocab) {
  std::vector<Tree> trees = {parse_tree("(3 (2 good) (3 (2 good) (2 film)))"),
                             parse_tree("(1 bad)")};
  TokenCounts counts;
  count_tree_tokens(trees, &counts);
  EXPECT_EQ(counts["good"], 2);
  EXPECT_EQ(counts["film"], 1);
  VocabOptions vo;
  vo.min_count = 2;
  const Vocab v = Vocab::build(counts, vo);
  assign_word_ids(v, &trees);
  EXPECT_EQ(trees[0].word_ids, (std::vector<int32_t>{v.id("good"), v.id("good"), kUnkId}));
  EXPECT_NE(v.id("good"), kUnkId);
  EXPECT_EQ(trees[1].word_ids, (std::vector<int32_t>{kUnkId}));
  check_tree(trees[0]);
}

TEST(Tree, CheckTreeRejectsBrokenInvariants) {
  const Tree good = parse_tree("(3 (2 a) (3 (2 b) (2 c)))");
  check_tree(good);
  Tree t = good;
  t.nodes[4].height = 1;
  EXPECT_EQ(error_of([&] { check_tree(t); }), "tree: node 4 has height 1, want 2");
  t = good;
  std::swap(t.child_index[0], t.child_index[1]);
  EXPECT_NE(error_of([&] { check_tree(t); }).find("breaks post-order"), std::string::npos);
  t = good;
  t.tokens[1] = "two words";
  EXPECT_EQ(error_of([&] { check_tree(t); }),
            "tree: token 'two words' is empty or holds whitespace or a parenthesis");
  t = good;
  t.nodes[0].label = 7;
  EXPECT_EQ(error_of([&] { check_tree(t); }), "tree: node 0 has label 7");
  t = good;
  t.word_ids = {1};
  EXPECT_EQ(error_of([&] { check_tree(t); }), "tree: 1 word ids for 3 tokens");
  EXPECT_EQ(error_of([] { check_tree(Tree{}); }), "tree: no nodes");
}

TEST(Sst, BinaryLabelMapping) {
  EXPECT_EQ(binary_sentiment(0), 0);
  EXPECT_EQ(binary_sentiment(1), 0);
  EXPECT_EQ(binary_sentiment(2), kNoLabel);
  EXPECT_EQ(binary_sentiment(3), 1);
  EXPECT_EQ(binary_sentiment(4), 1);
  EXPECT_EQ(binary_sentiment(kNoLabel), kNoLabel);
  EXPECT_EQ(error_of([] { binary_sentiment(5); }),
            "binary_sentiment: label 5 is outside 0-4 (or -1)");

  const Tree fine = parse_tree("(4 (2 It) (3 (0 not) (4 bad)))");
  const auto bin = to_binary_sentiment(fine);
  ASSERT_TRUE(bin.has_value());
  EXPECT_EQ(labels_of(*bin), (std::vector<int32_t>{-1, 0, 1, 1, 1}));
  EXPECT_EQ(bin->tokens, fine.tokens);
  EXPECT_FALSE(to_binary_sentiment(parse_tree("(2 (3 good) (1 bad))")).has_value());

  std::vector<Tree> trees = {parse_tree("(0 a)"), parse_tree("(2 b)"), parse_tree("(3 c)"),
                             parse_tree("(1 (2 d) (1 e))")};
  trees[2].line = 3;
  const auto view = sentiment_view(trees, SentimentView::kBinary);
  ASSERT_EQ(view.size(), 3u);
  EXPECT_EQ(view[0].tokens[0], "a");
  EXPECT_EQ(view[1].line, 3);
  EXPECT_EQ(labels_of(view[2]), (std::vector<int32_t>{-1, 0, 0}));
  EXPECT_EQ(sentiment_view(trees, SentimentView::kFine).size(), 4u);
  EXPECT_EQ(labels_of(sentiment_view(trees, SentimentView::kFine)[3]), labels_of(trees[3]));
}

TEST(Sst, ViewNames) {
  EXPECT_EQ(parse_sentiment_view("fine"), SentimentView::kFine);
  EXPECT_EQ(parse_sentiment_view("binary"), SentimentView::kBinary);
  EXPECT_EQ(sentiment_view_name(SentimentView::kBinary), "binary");
  EXPECT_EQ(num_sentiment_classes(SentimentView::kFine), 5);
  EXPECT_EQ(num_sentiment_classes(SentimentView::kBinary), 2);
  EXPECT_EQ(error_of([] { parse_sentiment_view("fine-grained"); }),
            "sentiment view must be 'fine' or 'binary', got 'fine-grained'");
}

class SstCorpus : public CorpusTest {};

TEST_F(SstCorpus, FineAndBinaryCountsAndRoundTrip) {
  const std::string dir = path("sst");
  const std::map<std::string, std::pair<size_t, size_t>> expected = {
      {"train", {8544, 6920}}, {"dev", {1101, 872}}, {"test", {2210, 1821}}};
  // Root-label distribution from the README.
  const std::map<std::string, std::vector<int>> roots = {{"train", {1092, 2218, 1624, 2322, 1288}},
                                                         {"dev", {139, 289, 229, 279, 165}},
                                                         {"test", {279, 633, 389, 510, 399}}};
  for (const auto& [split, counts] : expected) {
    SCOPED_TRACE(split);
    const std::string file = dir + "/" + split + ".txt";
    const auto lines = read_lines(file);
    const auto trees = read_tree_file(file);
    ASSERT_EQ(trees.size(), counts.first);
    ASSERT_EQ(lines.size(), trees.size());
    std::vector<int> root_count(5, 0);
    for (size_t i = 0; i < trees.size(); ++i) {
      const Tree& t = trees[i];
      ASSERT_EQ(t.line, static_cast<int64_t>(i + 1));
      ASSERT_EQ(format_tree(t), lines[i]) << file << ":" << t.line;
      ASSERT_EQ(t.size(), 2 * t.num_leaves() - 1) << "SST trees are binary";
      for (const auto& n : t.nodes) ASSERT_TRUE(n.label >= 0 && n.label <= 4);
      ++root_count[static_cast<size_t>(t.node(t.root()).label)];
    }
    EXPECT_EQ(root_count, roots.at(split));
    const auto binary = sentiment_view(trees, SentimentView::kBinary);
    EXPECT_EQ(binary.size(), counts.second);
    for (const auto& t : binary) ASSERT_NE(t.node(t.root()).label, kNoLabel);
  }
  check_tree(read_tree_file(dir + "/dev.txt")[0]);
}

TEST_F(SstCorpus, LoadSstViewsAndVocabulary) {
  const SstSplits fine = load_sst(path("sst"), SentimentView::kFine);
  const SstSplits binary = load_sst(path("sst"), SentimentView::kBinary);
  EXPECT_EQ(fine.train.size(), 8544u);
  EXPECT_EQ(fine.dev.size(), 1101u);
  EXPECT_EQ(fine.test.size(), 2210u);
  EXPECT_EQ(binary.train.size(), 6920u);
  EXPECT_EQ(binary.dev.size(), 872u);
  EXPECT_EQ(binary.test.size(), 1821u);
  // dev line 1 (README): "(3 (2 It) (4 (4 (2 's) ..." -> binary root 1, first leaf unlabelled.
  const Tree& first = binary.dev[0];
  EXPECT_EQ(first.line, 1);
  EXPECT_EQ(first.tokens[0], "It");
  EXPECT_EQ(first.node(first.root()).label, 1);
  EXPECT_EQ(first.node(first.leaves()[0]).label, kNoLabel);
  // Parentheses stay escaped as the files have them; the sentence round-trips to display text.
  TokenCounts counts;
  count_tree_tokens(fine.train, &counts);
  EXPECT_GT(counts["-LRB-"], 0);
  EXPECT_EQ(counts.count("("), 0u);
  const Vocab v = Vocab::build(counts);
  std::vector<Tree> dev = fine.dev;
  assign_word_ids(v, &dev);
  int64_t known = 0, total = 0;
  for (const auto& t : dev) {
    for (int32_t id : t.word_ids) {
      known += id != kUnkId ? 1 : 0;
      ++total;
    }
  }
  EXPECT_GT(static_cast<double>(known) / static_cast<double>(total), 0.9);
  // Levels across a batch of real trees cover every node once.
  const std::span<const Tree> batch(fine.train.data(), 32);
  size_t nodes = 0, covered = 0;
  for (const auto& t : batch) nodes += t.nodes.size();
  for (const auto& level : batch_levels(batch)) covered += level.size();
  EXPECT_EQ(covered, nodes);
}

}  // namespace
}  // namespace engram::data
