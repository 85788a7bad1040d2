// Names put into sentence pairs: which pairs are slots (once on each side, whole English words,
// the longest name), and the swap.
#include "engram/data/name_swap.h"

#include <gtest/gtest.h>

#include "data/test_util.h"

namespace engram::data {
namespace {

using testing::error_of;

TEST(NameSwap, SlotsAreNamesOnceOnEachSideAsWholeWords) {
  const std::vector<std::string> zh = {
      "我明天要去上海。",      // 0 slot: 上海 / Shanghai
      "汤姆喜欢汤姆。",        // 1 汤姆 twice in Chinese
      "明天见。",              // 2 no name
      "我住在日本京都。",      // 3 京都 and 日本 both: the earliest listed of equal length wins
      "我是日本人。",          // 4 日本人 (3 characters) before 日本
      "汤姆来了。",            // 5 "Tomorrow" is not the word "Tom"
      "他去过东京。",          // 6 Tokyo on the English side twice
      "上海很大。",            // 7 slot
  };
  const std::vector<std::string> en = {
      "Tomorrow I'm going to Shanghai.", "Tom likes Tom.", "See you tomorrow.", "I live in Kyoto, Japan.",
      "I'm Japanese.", "Tomorrow came.", "Tokyo? He has been to Tokyo.", "Shanghai is big.",
  };
  const std::vector<std::string> name_zh = {"上海", "汤姆", "京都", "日本", "日本人", "东京", "北京", "京"};
  const std::vector<std::string> name_en = {"Shanghai", "Tom", "Kyoto", "Japan", "Japanese", "Tokyo", "Beijing", "Jing"};
  const std::vector<NameSlot> slots = find_name_slots(zh, en, name_zh, name_en);
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].pair, 0u);
  EXPECT_EQ(slots[0].name, 0u);
  EXPECT_EQ(slots[1].pair, 3u);
  EXPECT_EQ(slots[1].name, 2u);  // 京都 comes before 日本 in the list
  EXPECT_EQ(slots[2].pair, 4u);
  EXPECT_EQ(slots[2].name, 4u);
  EXPECT_EQ(slots[3].pair, 7u);
  EXPECT_EQ(slots[3].name, 0u);
  // A one-character headword is not looked for by default.
  EXPECT_EQ(find_name_slots({"京。"}, {"Jing."}, name_zh, name_en).size(), 0u);
  EXPECT_EQ(find_name_slots({"京。"}, {"Jing."}, name_zh, name_en, 1).size(), 1u);
  EXPECT_EQ(error_of([&] { find_name_slots(zh, {}, name_zh, name_en); }),
            "name slots: 8 Chinese and 0 English sentences, 8 and 8 names");
}

TEST(NameSwap, SwapReplacesBothSides) {
  EXPECT_EQ(swap_name("我明天要去上海。", "Tomorrow I'm going to Shanghai.", "上海", "Shanghai", "北京", "Beijing"),
            (std::pair<std::string, std::string>{"我明天要去北京。", "Tomorrow I'm going to Beijing."}));
  EXPECT_EQ(swap_name("汤姆的书。", "Tom's book.", "汤姆", "Tom", "故宫博物院", "Palace Museum"),
            (std::pair<std::string, std::string>{"故宫博物院的书。", "Palace Museum's book."}));
  EXPECT_EQ(error_of([] { swap_name("上海很大。", "It is big.", "上海", "Shanghai", "北京", "Beijing"); }),
            "swap_name: '上海' / 'Shanghai' is not a slot of the pair");
}

}  // namespace
}  // namespace engram::data
