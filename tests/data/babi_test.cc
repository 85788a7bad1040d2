// bAbI reader on all 20 tasks of shared/data/babi (counts from its README: 1000 train / 1000 test
// questions per task in en/, en-10k lacks qa3 train), memory windows, supporting facts,
// validation split, and malformed-line errors on temp files.
#include "engram/data/babi.h"

#include <gtest/gtest.h>

#include <functional>

#include "data/test_util.h"
#include "engram/core/error.h"

namespace engram::data {
namespace {

using testing::CorpusTest;
using testing::TempDir;

using testing::error_of;

bool contains(const Sentence& s, const std::string& w) {
  return std::find(s.begin(), s.end(), w) != s.end();
}

TEST(Babi, ParsesStoriesMemoryAndSupportingFacts) {
  TempDir tmp;
  const auto p = tmp.write("qa1_single-supporting-fact_train.txt",
                           "1 Mary moved to the bathroom.\n"
                           "2 John went to the hallway.\n"
                           "3 Where is Mary? \tbathroom\t1\n"
                           "4 Daniel went back to the hallway.\n"
                           "5 Sandra moved to the garden.\n"
                           "6 Where is Daniel? \thallway\t4\n"
                           "1 Mary went to the kitchen.\n"
                           "2 Where is Mary?\tKitchen\t1\n");
  const auto samples = read_babi_file(p);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].question, (Sentence{"where", "is", "mary"}));
  EXPECT_EQ(samples[0].answer, "bathroom");
  ASSERT_EQ(samples[0].memory().size(), 2u);
  EXPECT_EQ(samples[0].memory()[0], (Sentence{"mary", "moved", "to", "the", "bathroom"}));
  EXPECT_EQ(samples[0].supporting, (std::vector<int32_t>{0}));
  EXPECT_EQ(samples[0].line, 3);
  // Question lines are not memories: statement ID 4 is memory slot 2.
  ASSERT_EQ(samples[1].memory().size(), 4u);
  EXPECT_EQ(samples[1].supporting, (std::vector<int32_t>{2}));
  EXPECT_EQ(samples[1].memory()[2][0], "daniel");
  // A new story starts at ID 1 with an empty memory.
  ASSERT_EQ(samples[2].memory().size(), 1u);
  EXPECT_EQ(samples[2].answer, "kitchen");
}

TEST(Babi, MemoryKeepsTheMostRecentStatements) {
  TempDir tmp;
  std::string text;
  for (int i = 1; i <= 8; ++i) text += std::to_string(i) + " s" + std::to_string(i) + " x.\n";
  text += "9 q? \ta\t8 7\n";
  const auto p = tmp.write("qa1_x_train.txt", text);
  BabiOptions o;
  o.memory_size = 3;
  const auto s = read_babi_file(p, o);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].memory().size(), 3u);
  EXPECT_EQ(s[0].memory()[0][0], "s6");
  EXPECT_EQ(s[0].memory()[2][0], "s8");
  EXPECT_EQ(s[0].supporting, (std::vector<int32_t>{2, 1}));
  // A supporting fact that fell out of the window is reported as -1.
  const auto p2 = tmp.write("qa1_y_train.txt", text.substr(0, text.rfind("9 ")) + "9 q? \ta\t1\n");
  EXPECT_EQ(read_babi_file(p2, o)[0].supporting, (std::vector<int32_t>{-1}));
}

TEST(Babi, MalformedLinesNameFileAndLine) {
  TempDir tmp;
  struct Case {
    std::string text;
    std::string message;  // after "PATH:"
  };
  const Case cases[] = {
      {"1 Mary moved.\nMary went.\n",
       "2: expected 'ID text' with a positive integer ID, got 'Mary went.'"},
      {"1 a.\n3 b.\n", "2: line ID 3 does not follow ID 1 (IDs count up from 1 within a story)"},
      {"2 a.\n", "1: line ID 2 does not follow ID 0 (IDs count up from 1 within a story)"},
      {"1 a.\n2 where? \tx\n", "2: question line needs 'question<TAB>answer<TAB>supporting IDs'"},
      {"1 a.\n2 where? \tx\t1\textra\n", "2: question line has more than 3 tab-separated fields"},
      {"1 a.\n2 where? \t\t1\n",
       "2: the answer must be one non-empty word (comma-joined for lists), got ''"},
      {"1 a.\n2 where? \tx\tone\n", "2: supporting fact ID 'one' is not a number"},
      {"1 a.\n2 where? \tx\t5\n",
       "2: supporting fact ID 5 is not an earlier statement of this story"},
      {"1 a.\n2 where? \tx\t1\n3 why? \ty\t2\n",
       "3: supporting fact ID 2 is not an earlier statement of this story"},
      {"0 zero.\n", "1: expected 'ID text' with a positive integer ID, got '0 zero.'"},
      {"1 Mary went home.\n2 Where is Mary?\n",
       "2: a question without its answer: question lines are 'ID question<TAB>answer<TAB>supporting IDs', "
       "got '2 Where is Mary?'"},
  };
  int k = 0;
  for (const auto& c : cases) {
    const auto p = tmp.write("bad" + std::to_string(k++) + ".txt", c.text);
    EXPECT_EQ(error_of([&] { read_babi_file(p); }), p + ":" + c.message);
  }
}

TEST(Babi, ValidationSplitIsDeterministic) {
  TempDir tmp;
  std::string text;
  for (int q = 0; q < 40; ++q) {
    text += "1 m" + std::to_string(q) + " went home.\n2 where? \thome\t1\n";
  }
  const auto p = tmp.write("qa1_z_train.txt", text);
  auto train_a = read_babi_file(p), train_b = read_babi_file(p), train_c = read_babi_file(p);
  std::vector<BabiSample> valid_a, valid_b, valid_c;
  split_validation(&train_a, &valid_a, 0.1, 7);
  split_validation(&train_b, &valid_b, 0.1, 7);
  split_validation(&train_c, &valid_c, 0.1, 8);
  ASSERT_EQ(valid_a.size(), 4u);
  EXPECT_EQ(train_a.size(), 36u);
  auto lines = [](const std::vector<BabiSample>& v) {
    std::vector<int64_t> out;
    for (const auto& s : v) out.push_back(s.line);
    return out;
  };
  EXPECT_EQ(lines(valid_a), lines(valid_b));
  EXPECT_NE(lines(valid_a), lines(valid_c));
  const auto valid_lines = lines(valid_a);
  EXPECT_TRUE(std::is_sorted(valid_lines.begin(), valid_lines.end()));
}

TEST_F(CorpusTest, AllTwentyTasksInEn) {
  const std::string dir = path("babi/en");
  const auto tasks = list_babi_tasks(dir);
  ASSERT_EQ(tasks.size(), 20u);
  EXPECT_EQ(available_babi_tasks(dir).size(), 20u);
  for (const auto& t : tasks) {
    SCOPED_TRACE("task " + std::to_string(t.task) + " " + t.name);
    const auto train = read_babi_file(t.train_path);
    const auto test = read_babi_file(t.test_path);
    EXPECT_EQ(train.size(), 1000u);
    EXPECT_EQ(test.size(), 1000u);
    for (const auto* split : {&train, &test}) {
      for (const auto& s : *split) {
        ASSERT_LE(s.memory().size(), 50u);
        ASSERT_FALSE(s.question.empty());
        ASSERT_FALSE(s.answer.empty());
        for (int32_t pos : s.supporting) {
          ASSERT_GE(pos, 0);
          ASSERT_LT(pos, static_cast<int32_t>(s.memory().size()));
        }
      }
    }
  }
  EXPECT_EQ(tasks[0].name, "single-supporting-fact");
  EXPECT_EQ(tasks[19].name, "agents-motivations");
}

TEST_F(CorpusTest, AnswersAndSupportingFactsMakeSense) {
  const std::string dir = path("babi/en");
  // Task 1: the supporting statement names the answer location.
  const auto t1 = load_babi_task(dir, 1);
  EXPECT_EQ(t1.train.size() + t1.valid.size(), 1000u);
  EXPECT_EQ(t1.valid.size(), 100u);
  for (const auto& s : t1.test) {
    ASSERT_EQ(s.supporting.size(), 1u);
    EXPECT_TRUE(contains(s.memory()[s.supporting[0]], s.answer)) << s.line;
  }
  // Tasks 8 and 19: comma-joined answers stay one token ("apple,football", "n,w").
  const auto t8 = read_babi_file(list_babi_tasks(dir)[7].train_path);
  const auto t19 = read_babi_file(list_babi_tasks(dir)[18].train_path);
  auto has_comma_answer = [](const std::vector<BabiSample>& v) {
    return std::any_of(v.begin(), v.end(),
                       [](const auto& s) { return s.answer.find(',') != std::string::npos; });
  };
  EXPECT_TRUE(has_comma_answer(t8));
  EXPECT_TRUE(has_comma_answer(t19));
  EXPECT_EQ(t19[0].answer, "s,e");  // en/qa19 train line 6: "...?<TAB>s,e<TAB>2 4"
  EXPECT_EQ(t19[0].supporting, (std::vector<int32_t>{1, 3}));
  TokenCounts counts;
  count_babi_tokens(t19, &counts);
  EXPECT_GT(counts["s,e"], 0);
  const Vocab v = Vocab::build(counts);
  EXPECT_NE(v.id("s,e"), kUnkId);
  // The same split for the same seed; a different one for another seed.
  EXPECT_EQ(load_babi_task(dir, 1).valid[0].line, t1.valid[0].line);
  BabiSplitOptions other;
  other.seed = 99;
  EXPECT_NE(load_babi_task(dir, 1, {}, other).valid[0].line, t1.valid[0].line);
}

TEST_F(CorpusTest, En10kLacksQa3Train) {
  const std::string dir = path("babi/en-10k");
  const auto available = available_babi_tasks(dir);
  EXPECT_EQ(available.size(), 19u);
  EXPECT_EQ(std::find(available.begin(), available.end(), 3), available.end());
  const std::string err = error_of([&] { load_babi_task(dir, 3); });
  EXPECT_EQ(err, "bAbI task 3: no train file qa3_*_train.txt in " + dir +
                     " (tasks with both train and test files there: 1, 2, 4, 5, 6, 7, 8, 9, 10, "
                     "11, 12, 13, 14, 15, 16, 17, 18, 19, 20)");
  // Every other task loads with 10,000 training and 1,000 test questions (babi/README.md).
  for (int task : available) {
    const auto t = load_babi_task(dir, task);
    EXPECT_EQ(t.train.size() + t.valid.size(), 10000u) << "task " << task;
    EXPECT_EQ(t.test.size(), 1000u) << "task " << task;
  }
  const auto t2 = load_babi_task(dir, 2);
  EXPECT_EQ(t2.train.size() + t2.valid.size(), 10000u);
  EXPECT_EQ(t2.valid.size(), 1000u);
  EXPECT_EQ(t2.test.size(), 1000u);
}

}  // namespace
}  // namespace engram::data
