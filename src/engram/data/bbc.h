// Reader for the BBC News Summary corpus (2,225 BBC articles of 2004-2005 in five categories, each
// with an extractive summary; shared/data/summarization/bbc-news-summary/README.md):
//   DIR/articles/<category>/NNN.txt   line 1 headline, line 2 empty, then paragraphs separated
//                                     by empty lines (LF)
//   DIR/summaries/<category>/NNN.txt  one line: article sentences joined with no space after the
//                                     period ("...problems.The use of ink...")
// Text is UTF-8, except articles/sport/199.txt, which is ISO-8859-1 in the original data and is
// converted to UTF-8 here (a "£" in it); invalid UTF-8 in any other file is an error naming the
// file, line and column. Other errors name the file (and line): an empty file, a missing
// headline, no empty line after it, no body, an empty summary, a file name that is not NNN.txt,
// a summary without its article or an article without its summary.
//
// Body sentences come from split_sentences (sentences.h) per paragraph. The summary is cut
// where it matches the article's body sentences (longest first, so "rules."The club" is cut
// exactly as in the body); a stretch that matches none is cut by split_sentences' rules.
//
// Split (bbc_split_of; no official split exists): by file number within each category,
// NNN % 10 == 0 -> test, NNN % 10 == 9 -> valid, else train: 80/10/10 per category, 1,783 /
// 221 / 221 articles. The corpus repeats some articles under other numbers (129 headlines
// occur twice), so a few test articles also appear in train; docs/summarization.md has the count.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "engram/data/sentences.h"

namespace engram::data {

struct NewsArticle {
  std::string category;              // "business", "entertainment", "politics", "sport", "tech"
  int number = 0;                    // NNN of NNN.txt
  std::string headline;              // line 1
  std::vector<std::string> body;     // body sentences, in order (paragraphs flattened)
  std::vector<std::string> summary;  // the extractive summary's sentences, in order
};

// Every article of DIR (the folder holding articles/ and summaries/), sorted by (category,
// number). Throws engram::Error on the problems listed above.
std::vector<NewsArticle> load_bbc(const std::filesystem::path& dir);

enum class BbcSplit { kTrain, kValid, kTest };

BbcSplit bbc_split_of(const NewsArticle& article);
std::string_view bbc_split_name(BbcSplit split);  // "train" | "valid" | "test"

// The articles of one split, in their order.
std::vector<NewsArticle> bbc_subset(const std::vector<NewsArticle>& articles, BbcSplit split);

// One article from its two files' contents (UTF-8); `name` prefixes the error messages
// ("articles/tech/001.txt"). Used by load_bbc; exposed for tests and tools.
NewsArticle parse_bbc_article(std::string_view article_text, std::string_view summary_text,
                              const std::string& article_name, const std::string& summary_name);

}  // namespace engram::data
