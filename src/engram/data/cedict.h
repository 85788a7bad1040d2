// CC-CEDICT, the Chinese-English dictionary (CC BY-SA 4.0, MDBG and contributors: keep the
// attribution with anything derived from it that is shipped), read as short training pairs
// "simplified headword -> one English gloss" for a Chinese-English translation model.
//
// File format: UTF-8, one entry a line, '#' lines are comments, blank lines are skipped:
//   Traditional Simplified [pin1 yin1] /sense 1/sense 2/.../
// Traditional and Simplified hold no space and have the same number of code points; the pinyin
// is between the first '[' and the next ']'; the senses are the '/'-separated fields between a
// leading '/' and a trailing '/', none of them empty, or none at all ("[pin1 yin1] //": an entry
// without a definition, which filters drop). A line that is not of this form is an error
// "PATH:LINE: ..." (read_cedict); nothing is guessed.
//
// From an entry to a pair (cedict_pairs), in this order; every entry gets exactly one fate, and
// DictionaryStats counts each:
//   1. the headword (simplified) must be all Han characters (no Latin letters, digits, '·' ...);
//   2. a sense that cedict_gloss() keeps, else (an entry whose senses are all rejected) "see
//      X[...]" takes the gloss of X when X has one of its own (one step, no chains);
//   3. at most max_chars headword code points; the gloss is the first kept sense of at most
//      max_words words (an entry whose kept senses are all longer is dropped);
//   4. one pair per headword: the first entry in file order that passes 1-3.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::data {

struct CedictEntry {
  std::string traditional, simplified, pinyin;
  std::vector<std::string> senses;  // as written between the slashes, in order
  int64_t line = 0;                 // 1-based line in the file
};

// Parses one entry line; `where` ("PATH:LINE") prefixes the error of a malformed line.
CedictEntry parse_cedict_line(std::string_view line, std::string_view where);

// Every entry of a CC-CEDICT file (comments and blank lines skipped).
std::vector<CedictEntry> read_cedict(const std::string& path);

// Why cedict_gloss() rejects a sense.
enum class SenseReject {
  kNone,            // kept
  kRegister,        // marked (literary), (archaic), (old), (dialect), (Tw), (slang), (bound form) ...
  kCrossReference,  // "see X", "variant of X", "used in X", "abbr. for X", "also written X" ...
  kSurname,         // "surname Wang"
  kClassifier,      // "CL:...", "classifier for ..."
  kLiteral,         // "lit. ...": a word-by-word gloss, not a translation
  kChinese,         // still holds Han characters or a "[pinyin]" reference after the cuts
  kEmpty,           // nothing left (e.g. a sense that is all parentheses)
  kNoName,          // a proper noun's sense that does not start with a capitalised name
};

struct SenseGloss {
  std::string text;  // empty unless reject == kNone
  SenseReject reject = SenseReject::kNone;
};

// One sense as a short English gloss: a leading register tag rejects the sense; parenthesised
// text is removed (nested, unbalanced ')' ignored); the text is cut at the first ';' or ',';
// a leading "fig. " is dropped; spaces are collapsed. For a proper noun (pinyin starting with a
// capital letter) only the leading run of capitalised words is kept ("Beijing municipality" ->
// "Beijing"; "the Great Wall" keeps its "the"; "of"/"and"/"the" inside a name are kept when a
// capitalised word follows).
SenseGloss cedict_gloss(std::string_view sense, bool proper_noun);

struct DictionaryOptions {
  int64_t max_chars = 8;  // headword code points, >= 1
  int64_t max_words = 6;  // gloss words (whitespace tokens), >= 1
  // false: a gloss "to V..." of an entry that is not a name loses its "to " (来 -> "come", not
  // "to come"), before the max_words test.
  bool infinitive_to = true;
};

// Every entry is counted in exactly one of not_hanzi, no_gloss, too_long_zh, too_long_en,
// duplicate, kept; see_followed counts kept entries whose gloss came from a "see X" entry, names
// kept proper nouns, infinitives kept entries whose "to " was removed (infinitive_to false).
// The sense counters count senses (of all entries that reach step 2).
struct DictionaryStats {
  int64_t entries = 0;
  int64_t not_hanzi = 0;
  int64_t no_gloss = 0;
  int64_t too_long_zh = 0;
  int64_t too_long_en = 0;
  int64_t duplicate = 0;
  int64_t kept = 0;
  int64_t see_followed = 0;
  int64_t names = 0;
  int64_t infinitives = 0;
  int64_t senses = 0;
  int64_t senses_register = 0, senses_cross_reference = 0, senses_surname = 0, senses_classifier = 0,
          senses_literal = 0, senses_chinese = 0, senses_empty = 0, senses_no_name = 0;
};

struct DictionaryPairs {
  std::vector<std::string> zh;  // [N] simplified headwords
  std::vector<std::string> en;  // [N] glosses
  std::vector<int64_t> line;    // [N] the entry's line in the file
  std::vector<bool> name;       // [N] a proper noun: the entry's pinyin starts with a capital letter
  DictionaryStats stats;
  size_t size() const { return zh.size(); }
};

DictionaryPairs cedict_pairs(const std::vector<CedictEntry>& entries, const DictionaryOptions& options = {});

// One line: "124263 entries: 100466 pairs kept, ... (senses: ...)".
std::string to_string(const DictionaryStats& s);

}  // namespace engram::data
