// Fuzz harness: PTB/SST trees (data/tree.h). Each input line goes through parse_tree with the
// defaults and with allow_unlabelled and tight limits (256 bytes, 64 nodes, depth 8); the whole
// input through read_tree_file. Every tree returned must pass check_tree, survive
// format_tree -> parse_tree unchanged, have consistent levels(), and map to the binary view;
// batch_levels runs over all of them; right_branching_tree runs on each valid-UTF-8 line.
#include "engram/data/text.h"
#include "engram/data/tree.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "tree";
using namespace engram::data;

bool same_tree(const Tree& a, const Tree& b) {
  if (a.nodes.size() != b.nodes.size() || a.child_index != b.child_index || a.tokens != b.tokens) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const TreeNode &x = a.nodes[i], &y = b.nodes[i];
    if (x.label != y.label || x.height != y.height || x.parent != y.parent || x.first_child != y.first_child ||
        x.num_children != y.num_children || x.leaf != y.leaf)
      return false;
  }
  return true;
}

// A tree the library produced: its invariants are the library's promise, so an engram::Error
// from checking it is a finding.
void check_valid(const Tree& t, const TreeReadOptions& o, const char* what) {
  try {
    check_tree(t);
  } catch (const engram::Error& e) {
    engram::fuzz::finding(kHarness, fmt::format("{} returned an invalid tree: {}", what, e.what()));
  }
  FUZZ_CHECK(kHarness, t.size() <= o.max_nodes && t.height() < o.max_depth, "{}: {} nodes, height {} over the limits",
             what, t.size(), t.height());
  const auto levels = t.levels();
  size_t count = 0;
  for (size_t h = 0; h < levels.size(); ++h) {
    count += levels[h].size();
    for (int32_t n : levels[h]) {
      FUZZ_CHECK(kHarness, t.node(n).height == static_cast<int32_t>(h), "levels(): node {} on the wrong level", n);
      for (int32_t c : t.children(n))
        FUZZ_CHECK(kHarness, t.node(c).height < static_cast<int32_t>(h), "levels(): child above its parent");
    }
  }
  FUZZ_CHECK(kHarness, count == t.nodes.size(), "levels() lists {} of {} nodes", count, t.nodes.size());
  TreeReadOptions unlabelled = o;
  unlabelled.allow_unlabelled = true;
  unlabelled.max_line_bytes = 1 << 30;
  const std::string text = format_tree(t);
  Tree back;
  try {
    back = parse_tree(text, unlabelled);
  } catch (const engram::Error& e) {
    engram::fuzz::finding(kHarness, fmt::format("format_tree output does not parse: {}: {}", e.what(), text));
  }
  FUZZ_CHECK(kHarness, same_tree(t, back), "format_tree -> parse_tree changed the tree: {}", text);
  FUZZ_CHECK(kHarness, format_tree(back) == text, "format_tree is not stable: {}", text);
  if (auto binary = to_binary_sentiment(t)) check_tree(*binary);
  (void)display_sentence(t);
}

void run(std::string_view bytes) {
  TreeReadOptions tight;
  tight.allow_unlabelled = true;
  tight.max_line_bytes = 256;
  tight.max_nodes = 64;
  tight.max_depth = 8;
  std::vector<Tree> trees;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < bytes.size() && line_no < 1000) {  // a final '\n' does not start a line
    size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) end = bytes.size();
    const std::string_view line = bytes.substr(pos, end - pos);
    ++line_no;
    for (const TreeReadOptions& o : {TreeReadOptions{}, tight})
      engram::fuzz::guard(kHarness, [&] {
        Tree t = parse_tree(line, o, "fuzz", line_no);
        check_valid(t, o, "parse_tree");
        trees.push_back(std::move(t));
      });
    if (find_invalid_utf8(line) == std::string_view::npos)
      engram::fuzz::guard(kHarness, [&] {
        TreeReadOptions any;
        any.max_nodes = 1 << 30;
        any.max_depth = 1 << 30;
        check_valid(right_branching_tree(line), any, "right_branching_tree");
      });
    pos = end + 1;
  }
  (void)batch_levels(trees);

  const auto path = engram::fuzz::temp_file("trees.txt", bytes);
  for (const Tree& t : read_tree_file(path.string())) check_valid(t, TreeReadOptions{}, "read_tree_file");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
