// The request-field readers every family's route uses: an integer past int64 is out of range with
// the number as sent, never read back as a wrapped negative.
#include <gtest/gtest.h>

#include "engram/core/error.h"
#include "engram/models/serve_json.h"

namespace engram::models {
namespace {

std::string beam_error(const nlohmann::json& r) {
  try {
    serve_json::int_field(r, "beam", 1, 1, 64);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ServeJson, IntegersPastInt64AreOutOfRangeNeverWrapped) {
  EXPECT_EQ(beam_error(nlohmann::json::parse(R"({"beam": 18446744073709551615})")),
            "'beam' is 18446744073709551615; it must be in [1, 64]");
  EXPECT_EQ(beam_error(nlohmann::json::parse(R"({"beam": 9223372036854775808})")),
            "'beam' is 9223372036854775808; it must be in [1, 64]");
  EXPECT_EQ(beam_error(nlohmann::json::parse(R"({"beam": -9223372036854775808})")),
            "'beam' is -9223372036854775808; it must be in [1, 64]");
  EXPECT_EQ(beam_error(nlohmann::json::parse(R"({"beam": 99999999999999999999})")),
            "'beam' must be an integer, got number");
  EXPECT_EQ(serve_json::int_field(nlohmann::json::parse(R"({"beam": 64})"), "beam", 1, 1, 64), 64);
}

}  // namespace
}  // namespace engram::models
