// The HTTP layer against hostile requests (docs/serve.md, "Connections" and "Request bodies"):
// deep nesting is a 400 before any parse, chunked bodies are cut off at max_body_bytes while read,
// slow headers / bodies and idle connections meet real deadlines, conflicting framing headers and
// duplicate JSON keys are refused, a request that max_queue can never hold is a 400, and bytes
// from the request reach error messages only escaped. Each test bounds its own time.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "engram/serve/request.h"
#include "serve/serve_util.h"

namespace engram::serve {
namespace {

using namespace testing;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::string post_text(const std::string& path, const std::string& body, const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(ServeRequestJson, NestingDepthIsCountedOutsideStrings) {
  EXPECT_EQ(json_nesting_depth("", 64), 0);
  EXPECT_EQ(json_nesting_depth("[[1], {\"a\": [2]}]", 64), 3);
  EXPECT_EQ(json_nesting_depth("{\"a\": \"[[[[\\\"[[\"}", 64), 1) << "brackets and escaped quotes inside a string";
  EXPECT_EQ(json_nesting_depth(std::string(100000, '['), 64), 65) << "stops counting past the limit";
  EXPECT_EQ(json_nesting_depth("]]]][", 64), 1) << "closing brackets never go below zero";
}

TEST(ServeRequestJson, DuplicateKeysAndDepthAreRefusedByName) {
  EXPECT_TRUE(parse_body("{\"a\": 1, \"b\": {\"a\": 2}}", 64).error.empty()) << "the same key in two objects";
  const ParsedBody dup = parse_body("{\"a\": 1, \"b\": [{\"k\": 1, \"k\": 2}]}", 64);
  EXPECT_NE(dup.error.find("the key \"k\" twice"), std::string::npos) << dup.error;
  EXPECT_TRUE(dup.value.is_null());
  EXPECT_TRUE(parse_body(std::string(64, '[') + std::string(64, ']'), 64).error.empty()) << "at the limit";
  const ParsedBody deep = parse_body(std::string(65, '[') + std::string(65, ']'), 64);
  EXPECT_NE(deep.error.find("max_json_depth 64"), std::string::npos) << deep.error;
  EXPECT_EQ(parse_body("{\"a\": ", 64).error, "the request body is not valid JSON");
  EXPECT_NE(parse_body("{\"\\u0001\\u00ff\": 1, \"\\u0001\\u00ff\": 2}", 64).error.find("\\x01\u00ff"),
            std::string::npos)
      << "a control character of a key is escaped, a valid UTF-8 one kept";
}

TEST(ServeRequestJson, PrintableEscapesControlBytesAndInvalidUtf8) {
  EXPECT_EQ(printable("ok 日本"), "ok 日本");
  EXPECT_EQ(printable(std::string("a\x01\n\x7f", 4)), "a\\x01\\x0A\\x7F");
  EXPECT_EQ(printable("\xff\xc3\x28\xed\xa0\x80"), "\\xFF\\xC3(\\xED\\xA0\\x80") << "invalid, overlong-free, no surrogates";
  EXPECT_EQ(printable(std::string(200, 'x'), 10), "xxxxxxxxxx...");
  // One function for the CLI's error lines, the server's bodies and the options' messages
  // (core::printable): C1 controls (U+0085) are escaped; a cut never splits a character.
  EXPECT_EQ(printable("a\xc2\x85" "b"), "a\\xC2\\x85b");
  EXPECT_EQ(printable("ab日", 3), "ab\\xE6...");
}

// Deep nesting in a field the route reads and in one it ignores: a 400 naming the limit, and the
// server goes on serving (before the limit: a stack overflow on the copy or walk of the value).
TEST(ServeHardening, DeepJsonIs400NamingTheLimit) {
  ServeOptions o;
  o.max_body_bytes = 1 << 20;
  RunningServer s({"pointer"}, o);
  httplib::Client c = s.client(10);
  const std::string arrays = std::string(200000, '[') + std::string(200000, ']');
  const std::string objects = [] {
    std::string t;
    for (int i = 0; i < 30000; ++i) t += "{\"a\":";
    return t + "1" + std::string(30000, '}');
  }();
  for (const std::string& body : {"{\"points\": " + arrays + "}", "{\"points\": [0.1, 0.5], \"x\": " + arrays + "}",
                                  "{\"points\": [0.1, 0.5], \"x\": " + objects + "}", arrays}) {
    auto [status, reply] = post(c, "/v1/pointer", body);
    EXPECT_EQ(status, 400);
    EXPECT_NE(reply.value("error", "").find("max_json_depth 64"), std::string::npos) << reply.dump();
  }
  auto [status, reply] = post(c, "/translator/translate", "[" + arrays + "]");
  EXPECT_EQ(status, 400) << reply.dump();
  auto [ok, answer] = post(c, "/v1/pointer", json{{"points", {0.5, 0.1, 0.9, 0.3}}});
  EXPECT_EQ(ok, 200) << answer.dump();
}

// A chunked body is cut off while it is read: the 413 comes long before the client has sent it
// all (before: the whole body was read, then parsed).
TEST(ServeHardening, ChunkedBodyIsCutOffAtMaxBodyBytes) {
  ServeOptions o;
  o.max_body_bytes = 1 << 20;
  RunningServer s({"pointer"}, o);
  RawConnection conn(s.port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.send("POST /v1/pointer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";  // 64 KiB of JSON whitespace
  size_t sent = 0;
  std::string response;
  while (sent < (64u << 20) && conn.send(chunk)) {
    sent += 0x10000;
    if (conn.readable(milliseconds(0))) break;
  }
  response = conn.read_response(milliseconds(5000));
  EXPECT_EQ(status_of(response), 413) << response.substr(0, 300);
  EXPECT_NE(body_of(response).value("error", "").find("max_body_bytes 1048576"), std::string::npos) << response;
  EXPECT_LT(sent, 16u << 20) << "the server read on well past max_body_bytes";
  // A Content-Length over the limit is refused from the headers alone, before any body byte.
  RawConnection big(s.port());
  ASSERT_TRUE(big.send("POST /v1/pointer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"));
  const std::string early = big.read_response(milliseconds(5000));
  EXPECT_EQ(status_of(early), 413) << early;
  // A small chunked body is read as any other.
  RawConnection small(s.port());
  const std::string body = "{\"points\": [0.5, 0.1, 0.9, 0.3]}";
  ASSERT_TRUE(small.send("POST /v1/pointer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                         fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", body.size(), body)));
  const std::string fine = small.read_response(milliseconds(10000));
  EXPECT_EQ(status_of(fine), 200) << fine;
}

// Headers or a body sent a byte at a time meet a total deadline (httplib's own timeout restarts
// with every byte), and an idle kept-alive connection is closed.
TEST(ServeHardening, SlowHeadersSlowBodiesAndIdleConnectionsAreCutOff) {
  ServeOptions o;
  o.header_timeout_ms = 600;
  o.body_timeout_ms = 600;
  o.idle_timeout_ms = 400;
  RunningServer s({"pointer"}, o);
  auto trickle = [&](const std::string& first, const std::string& byte) {
    RawConnection conn(s.port());
    EXPECT_TRUE(conn.send(first));
    const Clock::time_point start = Clock::now();
    while (seconds_since(start) < 8 && conn.send(byte) && !conn.readable(milliseconds(100))) {
    }
    const std::string response = conn.read_response(milliseconds(1000));
    return std::pair<double, std::string>{seconds_since(start), response};
  };
  {
    auto [took, response] = trickle("GET /health HTTP/1.1\r\n", "X");
    EXPECT_LT(took, 4.0) << "slow headers were not cut off";
    EXPECT_EQ(status_of(response), 408) << response;
    EXPECT_NE(body_of(response).value("error", "").find("header_timeout_ms 600"), std::string::npos) << response;
  }
  {
    auto [took, response] = trickle("POST /v1/pointer HTTP/1.1\r\nContent-Length: 100000\r\n\r\n[", " ");
    EXPECT_LT(took, 4.0) << "a slow body was not cut off";
    EXPECT_EQ(status_of(response), 408) << response;
    EXPECT_NE(body_of(response).value("error", "").find("body_timeout_ms 600"), std::string::npos) << response;
  }
  RawConnection idle(s.port());
  ASSERT_TRUE(idle.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(status_of(idle.read_response(milliseconds(5000))), 200);
  const Clock::time_point start = Clock::now();
  EXPECT_TRUE(idle.closed_within(milliseconds(4000))) << "an idle kept-alive connection stays open";
  EXPECT_GT(seconds_since(start), 0.2) << "closed before idle_timeout_ms";
}

// Request smuggling's ingredients are refused, the connection closed after the answer.
TEST(ServeHardening, ConflictingFramingHeadersAre400) {
  RunningServer s({"pointer"}, ServeOptions{});
  const std::string body = "{\"points\": [0.5, 0.1, 0.9, 0.3]}";
  const std::string n = std::to_string(body.size());
  struct Case {
    std::string headers;
    int status;
    std::string error;
  };
  for (const Case& k : {Case{"Content-Length: " + n + "\r\nContent-Length: 5\r\n", 400, "two different Content-Length"},
                        Case{"Content-Length: " + n + "\r\nContent-Length: " + n + "\r\n", 200, ""},
                        Case{"Content-Length: +" + n + "\r\n", 400, "is not a number"},
                        Case{"Content-Length: " + n + "\r\nTransfer-Encoding: chunked\r\n", 400, "both Content-Length"},
                        Case{"Transfer-Encoding: gzip, chunked\r\n", 400, "Transfer-Encoding"}}) {
    RawConnection conn(s.port());
    ASSERT_TRUE(conn.send("POST /v1/pointer HTTP/1.1\r\nHost: x\r\n" + k.headers + "\r\n" + body));
    const std::string response = conn.read_response(milliseconds(10000));
    EXPECT_EQ(status_of(response), k.status) << k.headers << response;
    EXPECT_NE(body_of(response).value("error", "").find(k.error), std::string::npos) << k.headers << response;
    if (k.status != 200) { EXPECT_TRUE(conn.closed_within(milliseconds(3000))) << k.headers; }
  }
}

TEST(ServeHardening, DuplicateKeysAre400OnEveryRoute) {
  RunningServer s({"seq2seq", "pointer"}, ServeOptions{});
  httplib::Client c = s.client();
  for (const auto& [path, body, key] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"/v1/pointer", "{\"points\": [0.5, 0.1], \"points\": [0.9, 0.3]}", "points"},
           {"/v1/translate", "{\"src\": \"a\", \"beam\": 1, \"beam\": 2}", "beam"},
           {"/translator/translate", "[{\"src\": \"a\", \"id\": 0, \"src\": \"b\"}]", "src"},
           {"/v1/pointer", "{\"points\": [0.5, 0.1], \"x\": {\"y\": 1, \"y\": 1}}", "y"}}) {
    auto [status, reply] = post(c, path, body);
    EXPECT_EQ(status, 400) << path << " " << body;
    EXPECT_NE(reply.value("error", "").find("the key \"" + key + "\" twice"), std::string::npos) << reply.dump();
  }
}

// More units than max_queue can never be queued: a 400 naming the limit, not "try again later".
TEST(ServeHardening, RequestLargerThanMaxQueueIs400) {
  ServeOptions o;
  o.max_queue = 2;
  RunningServer s({"seq2seq"}, o);
  httplib::Client c = s.client();
  auto [status, reply] = post(c, "/v1/translate", json{{"src", {"29 November 2026", "a", "b"}}});
  EXPECT_EQ(status, 400) << reply.dump();
  EXPECT_NE(reply.value("error", "").find("max_queue 2"), std::string::npos) << reply.dump();
  auto [ok, answer] = post(c, "/v1/translate", json{{"src", {"29 November 2026", "a"}}});
  EXPECT_EQ(ok, 200) << answer.dump();
}

// Bytes of the request in an error message are escaped, not echoed raw (and not replaced).
TEST(ServeHardening, ErrorMessagesEscapeRawRequestBytes) {
  RunningServer s({"pointer"}, ServeOptions{});
  RawConnection conn(s.port());
  const std::string body = "{\"model\": \"a\\u0001\\u001b[31m\"}";  // JSON escapes of control bytes
  ASSERT_TRUE(conn.send(post_text("/v1/pointer", body)));
  const std::string response = conn.read_response(milliseconds(10000));
  EXPECT_EQ(status_of(response), 404) << response;
  const std::string error = body_of(response).value("error", "");
  EXPECT_NE(error.find("no model named 'a\\x01\\x1B[31m'"), std::string::npos) << error;
  for (const char ch : error) EXPECT_GE(static_cast<unsigned char>(ch), 0x20) << error;
  RawConnection path(s.port());
  ASSERT_TRUE(path.send("GET /nowhere%1b%5b31m%ff HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string r404 = path.read_response(milliseconds(10000));
  EXPECT_EQ(status_of(r404), 404) << r404;
  EXPECT_NE(body_of(r404).value("error", "").find("/nowhere\\x1B[31m\\xFF"), std::string::npos) << r404;
}

// The same parsing without a socket (Server::answer_bytes, what fuzz/http_fuzz.cc drives):
// pipelined requests are answered in order; a broken one ends the connection.
TEST(ServeHardening, AnswerBytesServesPipelinedRequests) {
  RunningServer s({"pointer"}, ServeOptions{});
  const std::string out = s.server().answer_bytes(
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + post_text("/v1/pointer", "{\"points\": [0.5, 0.1, 0.9, 0.3]}") +
      "POST /v1/pointer HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + "GET /health HTTP/1.1\r\n\r\n");
  size_t at = 0;
  std::vector<int> statuses;
  while ((at = out.find("HTTP/1.1 ", at)) != std::string::npos) statuses.push_back(std::atoi(out.c_str() + at + 9)), ++at;
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 400})) << out;
}

// Found by fuzz/http_fuzz under AddressSanitizer: a Range header made httplib answer a slice of a
// JSON reply ('ror":"' of an error's body) with 206. Ranges are ignored: whole bodies, 200 / 400.
TEST(ServeHardening, RangeHeadersNeverSliceAReply) {
  RunningServer s({"pointer"}, ServeOptions{});
  const std::string body = "{\"points\": [0.5, 0.1, 0.9, 0.3]}";
  const std::string out = s.server().answer_bytes(
      "POST /v1/pointer HTTP/1.1\r\nRange: bytes=4-9\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body + "GET /health HTTP/1.1\r\nRange: bytes=0-3\r\n\r\n" +
      "POST /v1/pointer HTTP/1.1\r\nRange: bytes=2-5\r\nContent-Length: 2\r\n\r\n{}");
  size_t at = 0;
  std::vector<int> statuses;
  while ((at = out.find("HTTP/1.1 ", at)) != std::string::npos) statuses.push_back(std::atoi(out.c_str() + at + 9)), ++at;
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 400})) << out;
  EXPECT_EQ(out.find("206"), std::string::npos) << out;
  EXPECT_NE(out.find("{\"attention\""), std::string::npos) << "the whole pointer reply: " << out;
  EXPECT_NE(out.find("{\"error\":"), std::string::npos) << "the whole error reply: " << out;
}

}  // namespace
}  // namespace engram::serve
