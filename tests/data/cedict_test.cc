// CC-CEDICT reader: entry parsing, one-line errors naming file:line for malformed lines, the
// sense -> gloss rules, the entry filters and their counts, and the real dictionary.
#include "engram/data/cedict.h"

#include <gtest/gtest.h>

#include <map>

#include "data/test_util.h"
#include "engram/core/error.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::error_of;
using testing::TempDir;

TEST(Cedict, ParsesAnEntry) {
  const CedictEntry e = parse_cedict_line("北京 北京 [Bei3 jing1] /Beijing municipality, capital of the PRC/", "x:1");
  EXPECT_EQ(e.traditional, "北京");
  EXPECT_EQ(e.simplified, "北京");
  EXPECT_EQ(e.pinyin, "Bei3 jing1");
  EXPECT_EQ(e.senses, (std::vector<std::string>{"Beijing municipality, capital of the PRC"}));
  EXPECT_TRUE(parse_cedict_line("宊 宊 [tu2] //", "x:3").senses.empty());  // no definition: no senses
  const CedictEntry w = parse_cedict_line("歡迎 欢迎 [huan1 ying2] /to welcome/welcome/", "x:2");
  EXPECT_EQ(w.traditional, "歡迎");
  EXPECT_EQ(w.simplified, "欢迎");
  EXPECT_EQ(w.senses, (std::vector<std::string>{"to welcome", "welcome"}));
}

TEST(Cedict, FileSkipsCommentsAndBlankLinesAndKeepsLineNumbers) {
  TempDir tmp;
  const auto p = tmp.write("d.u8", "# CC-CEDICT\n\n來 来 [lai2] /to come/\r\n# more\n朋友 朋友 [peng2 you5] /friend/");
  const auto entries = read_cedict(p);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].simplified, "来");
  EXPECT_EQ(entries[0].line, 3);
  EXPECT_EQ(entries[0].senses, (std::vector<std::string>{"to come"}));  // the '\r' is not part of it
  EXPECT_EQ(entries[1].simplified, "朋友");
  EXPECT_EQ(entries[1].line, 5);
}

TEST(Cedict, MalformedLinesAreOneLineErrorsWithFileAndLine) {
  TempDir tmp;
  const std::string form = " (expected 'Traditional Simplified [pin1 yin1] /sense 1/sense 2/')";
  const std::map<std::string, std::string> cases = {
      {"北京", "CC-CEDICT entry without a space after the traditional headword"},
      {"北京 北京", "CC-CEDICT entry without a simplified headword between single spaces"},
      {"北京  北京 [Bei3 jing1] /Beijing/", "CC-CEDICT entry without a simplified headword between single spaces"},
      {"北京 北京 Bei3 jing1 /Beijing/", "CC-CEDICT entry without '[pinyin]' after the headwords"},
      {"北京 北京 [Bei3 jing1 /Beijing/", "CC-CEDICT entry: the pinyin's '[' is never closed"},
      {"北京 北京 [Bei3 jing1] Beijing/", "CC-CEDICT entry: no ' /' after the pinyin's ']'"},
      {"北京 北京 [Bei3 jing1] /Beijing", "CC-CEDICT entry: the senses do not end with '/'"},
      {"北京 北京 [Bei3 jing1] /", "CC-CEDICT entry: the senses do not end with '/'"},
      {"北京 北京 [Bei3 jing1] /// /", "CC-CEDICT entry: sense 1 is empty"},
      {"北京 北京 [Bei3 jing1] /Beijing// /", "CC-CEDICT entry: sense 2 is empty"},
      {"北京 北 [Bei3 jing1] /Beijing/", "CC-CEDICT entry: the traditional headword has 2 characters, the simplified "
                                         "one 1"},
  };
  for (const auto& [line, message] : cases) {
    const auto p = tmp.write("bad.u8", "# header\n來 来 [lai2] /to come/\n" + line + "\n朋友 朋友 [peng2 you5] /friend/\n");
    EXPECT_EQ(error_of([&] { read_cedict(p); }), p + ":3: " + message + form) << line;
  }
  const auto bad_utf8 = tmp.write("utf8.u8", "來 来 [lai2] /to come/\n\xE6\x9D [lai2] /x/\n");
  EXPECT_EQ(error_of([&] { read_cedict(bad_utf8); }), bad_utf8 + ":2: invalid UTF-8 (byte 0xE6 at column 1)");
  EXPECT_EQ(error_of([&] { read_cedict(tmp.file("missing.u8")); }).find(tmp.file("missing.u8")), 0u);
}

TEST(Cedict, SenseToGloss) {
  struct Case {
    std::string sense;
    bool proper;
    std::string text;
    SenseReject reject;
  };
  const std::vector<Case> cases = {
      {"to welcome", false, "to welcome", SenseReject::kNone},
      {"friend", false, "friend", SenseReject::kNone},
      {"to visit (a place, e.g. museum or factory); to tour", false, "to visit", SenseReject::kNone},
      {"all over the world", false, "all over the world", SenseReject::kNone},
      {"of; ~'s (possessive particle)", false, "of", SenseReject::kNone},
      {"fig. to be left in the lurch", false, "to be left in the lurch", SenseReject::kNone},
      {"(idiom) (fig.) to stand out", false, "to stand out", SenseReject::kNone},
      {"(computing) cache (memory (of a CPU))", false, "cache", SenseReject::kNone},
      {"Beijing municipality, capital of the People's Republic of China (abbr. to 京[Jing1])", true, "Beijing",
       SenseReject::kNone},
      {"Palace Museum, in the Forbidden City, Beijing", true, "Palace Museum", SenseReject::kNone},
      {"the Forbidden City", true, "the Forbidden City", SenseReject::kNone},
      {"Temple of Heaven in Beijing", true, "Temple of Heaven", SenseReject::kNone},
      {"Confucius (551-479 BC), Chinese thinker", true, "Confucius", SenseReject::kNone},
      {"Hangzhou subprovincial city and capital of Zhejiang", true, "Hangzhou", SenseReject::kNone},
      {"(literary) to be at ease", false, "", SenseReject::kRegister},
      {"(Tw) to steal", false, "", SenseReject::kRegister},
      {"(bound form) individual", false, "", SenseReject::kRegister},
      {"see 杭州市[Hang2 zhou1 Shi4]", true, "", SenseReject::kCrossReference},
      {"variant of 個|个[ge4]", false, "", SenseReject::kCrossReference},
      {"old variant of 來|来[lai2]", false, "", SenseReject::kCrossReference},
      {"used in 自個兒|自个儿[zi4 ge3 r5]", false, "", SenseReject::kCrossReference},
      {"abbr. for 故宮博物院|故宫博物院[Gu4 gong1 Bo2 wu4 yuan4]", true, "", SenseReject::kCrossReference},
      {"surname Zhang", true, "", SenseReject::kSurname},
      {"CL:個|个[ge4]", false, "", SenseReject::kClassifier},
      {"classifier for flat objects, sheet", false, "", SenseReject::kClassifier},
      {"lit. to draw a snake and add feet", false, "", SenseReject::kLiteral},
      {"one made of leather 皮革的", false, "", SenseReject::kChinese},
      {"(completed action marker)", false, "", SenseReject::kEmpty},
      {"ethnic group of the Yunnan border", true, "", SenseReject::kNoName},
  };
  for (const Case& c : cases) {
    const SenseGloss g = cedict_gloss(c.sense, c.proper);
    EXPECT_EQ(g.text, c.text) << c.sense;
    EXPECT_EQ(g.reject, c.reject) << c.sense;
  }
}

TEST(Cedict, PairsFiltersAndCounts) {
  TempDir tmp;
  const auto p = tmp.write(
      "d.u8",
      "3C 3C [san1 C] /computers, communications, and consumer electronics/\n"  // 1 not all Han
      "張 张 [Zhang1] /surname Zhang/\n"                                          // 2 no usable sense
      "張 张 [zhang1] /to open up/to spread/\n"                                   // 3 kept (first usable sense)
      "杭州 杭州 [Hang2 zhou1] /see 杭州市[Hang2 zhou1 Shi4]/\n"                  // 4 kept through 'see'
      "杭州市 杭州市 [Hang2 zhou1 Shi4] /Hangzhou subprovincial city/\n"          // 5 kept
      "西安 西安 [Xi1 an1] /see 西安市[Xi1 an1 Shi4]/\n"                          // 6 'see' a missing entry
      "中華人民共和國 中华人民共和国 [Zhong1 hua2 Ren2 min2 Gong4 he2 guo2] /People's Republic of China/\n"  // 7 long
      "故宮博物院 故宫博物院 [Gu4 gong1 Bo2 wu4 yuan4] /Palace Museum, in the Forbidden City, Beijing/\n"     // 8 kept
      "欣 欣 [xin1] /to take delight in something that is happening to a friend/\n"  // 9 gloss too long
      "了 了 [le5] /(completed action marker)/\n"                                      // 10 no usable sense
      "了 了 [liao3] /to finish/\n"                                                    // 11 kept
      "瞭 了 [liao3] /to understand clearly/\n"                                        // 12 repeated headword
      "宊 宊 [tu2] //\n"                                                              // 13 no senses at all
      "兵馬俑 兵马俑 [bing1 ma3 yong3] /figurines of warriors and horses buried with the dead/"
      "Terracotta Army (historic site)/\n");                                          // 14 kept: the 2nd sense fits
  DictionaryOptions o;
  o.max_chars = 5;
  o.max_words = 6;
  const DictionaryPairs d = cedict_pairs(read_cedict(p), o);
  EXPECT_EQ(d.zh, (std::vector<std::string>{"张", "杭州", "杭州市", "故宫博物院", "了", "兵马俑"}));
  EXPECT_EQ(d.en, (std::vector<std::string>{"to open up", "Hangzhou", "Hangzhou", "Palace Museum", "to finish",
                                            "Terracotta Army"}));
  EXPECT_EQ(d.line, (std::vector<int64_t>{3, 4, 5, 8, 11, 14}));
  EXPECT_EQ(d.name, (std::vector<bool>{false, true, true, true, false, false}));
  const DictionaryStats& s = d.stats;
  EXPECT_EQ(s.entries, 14);
  EXPECT_EQ(s.not_hanzi, 1);
  EXPECT_EQ(s.no_gloss, 4);  // 张 (surname), 西安 (see a missing entry), 了 (all parentheses), 宊 (no sense)
  EXPECT_EQ(s.too_long_zh, 1);
  EXPECT_EQ(s.too_long_en, 1);
  EXPECT_EQ(s.duplicate, 1);
  EXPECT_EQ(s.kept, 6);
  EXPECT_EQ(s.see_followed, 1);
  EXPECT_EQ(s.names, 3);
  EXPECT_EQ(s.not_hanzi + s.no_gloss + s.too_long_zh + s.too_long_en + s.duplicate + s.kept, s.entries);
  EXPECT_EQ(s.senses, 14);  // the senses of the 13 all-Han entries
  EXPECT_EQ(s.senses_surname, 1);
  EXPECT_EQ(s.senses_cross_reference, 2);
  EXPECT_EQ(s.senses_empty, 1);
  EXPECT_EQ(s.infinitives, 0);
  // Without the infinitive's "to": verbs lose it, names and other glosses keep their words; the
  // word limit counts what is left (欣's gloss is still 10 words).
  o.infinitive_to = false;
  const DictionaryPairs bare = cedict_pairs(read_cedict(p), o);
  EXPECT_EQ(bare.en, (std::vector<std::string>{"open up", "Hangzhou", "Hangzhou", "Palace Museum", "finish",
                                               "Terracotta Army"}));
  EXPECT_EQ(bare.stats.infinitives, 2);
  EXPECT_EQ(bare.stats.too_long_en, 1);
  o.max_words = 1;  // "to finish" is 2 words, "finish" 1; 张 takes its first sense that fits
  EXPECT_EQ(cedict_pairs(read_cedict(p), o).en, (std::vector<std::string>{"spread", "Hangzhou", "Hangzhou", "finish"}));
  EXPECT_EQ(error_of([&] { cedict_pairs({}, {.max_chars = 0}); }),
            "dictionary: max_chars 0 and max_words 6 must be >= 1");
}

// shared/data/cc-cedict/README.md: 124,263 entries; the seeds' words come out as the recipe
// configs/tatoeba-cedict-zh-en.yaml needs them (it writes verbs without "to": the last checks).
TEST_F(CorpusTest, CcCedict) {
  const auto entries = read_cedict(path("cc-cedict/cedict_ts.u8"));
  EXPECT_EQ(entries.size(), 124263u);
  const DictionaryPairs d = cedict_pairs(entries);
  const DictionaryStats& s = d.stats;
  EXPECT_EQ(s.entries, 124263);
  EXPECT_EQ(s.not_hanzi + s.no_gloss + s.too_long_zh + s.too_long_en + s.duplicate + s.kept, s.entries);
  EXPECT_GT(s.kept, 90000);
  // headword -> gloss of a set of pairs
  const auto glosses = [](const DictionaryPairs& p) {
    std::map<std::string, std::string> g;
    for (size_t i = 0; i < p.size(); ++i) g[p.zh[i]] = p.en[i];
    return g;
  };
  auto gloss = glosses(d);
  EXPECT_EQ(gloss["北京"], "Beijing");
  EXPECT_EQ(gloss["欢迎"], "to welcome");
  EXPECT_EQ(gloss["来"], "to come");
  EXPECT_EQ(gloss["故宫博物院"], "Palace Museum");
  EXPECT_EQ(gloss["故宫"], "the Forbidden City");
  EXPECT_EQ(gloss["世界各地"], "all over the world");
  EXPECT_EQ(gloss["参观"], "to visit");
  EXPECT_EQ(gloss["朋友"], "friend");
  EXPECT_EQ(gloss["杭州"], "Hangzhou");  // through "see 杭州市"
  EXPECT_EQ(gloss["孔子"], "Confucius");
  EXPECT_EQ(gloss["兵马俑"], "Terracotta Army");  // the first sense has 8 words
  const DictionaryPairs bare = cedict_pairs(entries, {.infinitive_to = false});
  auto verb = glosses(bare);
  EXPECT_EQ(verb["欢迎"], "welcome");
  EXPECT_EQ(verb["来"], "come");
  EXPECT_EQ(verb["北京"], "Beijing");
  EXPECT_GT(bare.stats.kept, s.kept);  // a gloss without "to" may now fit max_words
  EXPECT_GT(bare.stats.infinitives, 20000);
}

}  // namespace
}  // namespace engram::data
