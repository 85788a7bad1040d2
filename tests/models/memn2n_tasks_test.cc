// parse_babi_tasks: a task number past int (or past long) is refused, never narrowed into a
// valid task (2^32 + 1 used to read as task 1).
#include <gtest/gtest.h>

#include <fstream>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/models/memn2n/task.h"

namespace engram::models {
namespace {

TEST(BabiTaskList, NumbersPastIntAreRefusedNeverWrapped) {
  data::testing::TempDir dir;
  for (const char* f : {"qa1_x_train.txt", "qa1_x_test.txt", "qa2_y_train.txt", "qa2_y_test.txt"})
    std::ofstream(dir.file(f)) << "1 Mary went to the hallway.\n";
  EXPECT_EQ(parse_babi_tasks("1,2", dir.file("")), (std::vector<int>{1, 2}));
  for (const char* spec : {"4294967297", "1-4294967298", "18446744073709551617", "99999999999999999999999"}) {
    try {
      parse_babi_tasks(spec, dir.file(""));
      ADD_FAILURE() << spec << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad task list"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace engram::models
