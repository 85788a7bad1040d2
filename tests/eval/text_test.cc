// 13a tokenizer, Unicode helpers and accuracy. 13a expectations follow the rules of
// sacrebleu/tokenizers/tokenizer_13a.py + tokenizer_re.py applied by hand (ROUGE: rouge_test.cc).
#include <gtest/gtest.h>

#include "engram/core/error.h"
#include "engram/eval/accuracy.h"
#include "engram/eval/tokenizer_13a.h"
#include "engram/eval/unicode.h"

namespace engram::eval {
namespace {

TEST(Tokenizer13a, Rules) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize_13a("It costs $3.50, ok?"), "It costs $ 3.50 , ok ?");
  EXPECT_EQ(tokenize_13a("1990-2000 and a-b"), "1990 - 2000 and a-b");
  EXPECT_EQ(tokenize_13a("&quot;hi&quot; &amp; &lt;tag&gt;"), "\" hi \" & < tag >");
  EXPECT_EQ(tokenize_13a("<skipped>x don't"), "x don't");
  EXPECT_EQ(tokenize_13a("U.S.A."), "U . S . A .");
  EXPECT_EQ(tokenize_13a("3,000.5 people."), "3,000.5 people .");
  EXPECT_EQ(tokenize_13a("line-\nbreak\nhere"), "linebreak here");
  EXPECT_EQ(tokenize_13a("  a\t\tb  "), "a b");
  EXPECT_EQ(tokenize_13a(""), "");
  // Non-ASCII: a period after a multi-byte letter is split; U+3000 (ideographic space) splits.
  EXPECT_EQ(tokenize_13a("zahăr.\u3000Été,x"), "zahăr . Été , x");
  EXPECT_EQ(tokens_13a("a (b)"), (std::vector<std::string>{"a", "(", "b", ")"}));
}

TEST(Unicode, PythonWhitespaceAndSplit) {
  EXPECT_TRUE(is_python_space(0x1F));
  EXPECT_TRUE(is_python_space(0x85));
  EXPECT_TRUE(is_python_space(0x3000));
  EXPECT_FALSE(is_python_space(0x200B));  // zero-width space is not whitespace in Python
  const auto parts = split_python(" a\u00a0b\u2003c  ");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "a");
  EXPECT_EQ(parts[2], "c");
  EXPECT_EQ(rstrip_python("x \u3000\n"), "x");
  EXPECT_EQ(remove_python_space("a b\tc"), "abc");
  EXPECT_EQ(char_boundaries("aé中").size(), 4u);
}

TEST(Unicode, SimpleLower) {
  EXPECT_EQ(simple_lower("ÀÉÎ Straße ŁÓDŹ ȘȚ ΑΒΓ ДЖЯ Ё"), "àéî straße łódź șț αβγ джя ё");
  EXPECT_EQ(simple_lower("İ"), "i\u0307");  // as Python's str.lower()
  EXPECT_EQ(simple_lower("中文 ABC"), "中文 abc");
  // Invalid UTF-8 survives unchanged (surrogateescape-style), never throws.
  EXPECT_EQ(simple_lower(std::string("A\xff"
                                     "B")),
            std::string("a\xff"
                        "b"));
}

TEST(Accuracy, ExactAndNormalised) {
  EXPECT_DOUBLE_EQ(accuracy({"a", "b", "c", "d"}, {"a", "x", "c", "D"}), 0.5);
  EXPECT_DOUBLE_EQ(exact_match({" Hello   world ", "D"}, {"hello world", "d"}), 1.0);
  EXPECT_DOUBLE_EQ(exact_match({"Hello"}, {"hello"}, /*lowercase=*/false), 0.0);
  EXPECT_EQ(accuracy({}, {}), 0.0);
  EXPECT_THROW(accuracy({"a"}, {"a", "b"}), Error);
}

}  // namespace
}  // namespace engram::eval
